// Chapter 05: the provider adapter. A typed port of tests/support/js/chapter-05/provider-adapter.js
// (PROV-*, spec/spec.md section 8): the wire conversion (lab 5.1), the model over a transport
// (lab 5.2) and the OpenAI-compatible SSE transport (lab 5.3).
import { AssistantMessageEventStream } from "./event-stream.js";
import { assistantMessage, currentSystemPrompt } from "./types.js";
import type { AgentContext, AgentMessage, AssistantContent, AssistantMessage, Model, StopReason, TextContent, ToolCall, ToolDefinition, Usage } from "./types.js";

export type ProviderChunk =
  | { type: "text"; delta: string }
  | { type: "tool"; index: number; id?: string; name?: string; argumentsDelta?: string }
  | { type: "finish"; reason: "stop" | "length" | "tool_calls"; usage?: Partial<Usage> };

type FinishReason = Extract<ProviderChunk, { type: "finish" }>["reason"];
type ToolChunk = Extract<ProviderChunk, { type: "tool" }>;
type ContentChunk = Exclude<ProviderChunk, { type: "finish" }>;

export interface ProviderWireTool {
  type: "function";
  function: { name: string; description: string; parameters: Record<string, unknown> };
}

export interface ProviderWireToolCall {
  id: string;
  type: "function";
  function: { name: string; arguments: string };
}

export type ProviderWireMessage =
  | { role: "system" | "user"; content: string }
  | { role: "assistant"; content: string | null; tool_calls?: ProviderWireToolCall[] }
  | { role: "tool"; tool_call_id: string; name: string; content: string };

export interface ProviderRequest {
  model: string;
  messages: ProviderWireMessage[];
  tools?: ProviderWireTool[];
}

export interface ProviderTransport {
  stream(request: ProviderRequest, options: { signal?: AbortSignal }): AsyncIterable<ProviderChunk>;
}

export interface OpenAICompatibleTransportOptions {
  baseUrl: string;
  apiKey: string;
  fetch?: typeof globalThis.fetch;
}

const ABORTED = "Request was aborted";
const zeroUsage = (): Usage => ({ input: 0, output: 0, totalTokens: 0 });

// ---- lab 5.1: outbound -----------------------------------------------------------------

function joinedText(blocks: readonly AssistantContent[]): string {
  return blocks
    .filter((block): block is TextContent => block.type === "text")
    .map((block) => block.text)
    .join("\n");
}

function wireCall(call: ToolCall): ProviderWireToolCall {
  const args = call.rawArguments !== undefined ? call.rawArguments : JSON.stringify(call.arguments ?? {});
  return { id: call.id, type: "function", function: { name: call.name, arguments: args } };
}

function wireMessage(message: Exclude<AgentMessage, { role: "system" }>): ProviderWireMessage {
  if (message.role === "user") return { role: "user", content: joinedText(message.content) };
  if (message.role === "toolResult") {
    return { role: "tool", tool_call_id: message.toolCallId, name: message.toolName, content: joinedText(message.content) };
  }
  const calls = message.content.filter((block): block is ToolCall => block.type === "toolCall").map(wireCall);
  const entry: ProviderWireMessage = { role: "assistant", content: joinedText(message.content) || null };
  if (calls.length > 0) entry.tool_calls = calls;
  return entry;
}

export function toProviderMessages(context: AgentContext): ProviderWireMessage[] {
  const prompt = currentSystemPrompt(context.messages);
  const wire: ProviderWireMessage[] = prompt ? [{ role: "system", content: prompt }] : [];
  for (const message of context.messages) if (message.role !== "system") wire.push(wireMessage(message));
  return wire;
}

export function toProviderTools(tools: ToolDefinition[] | undefined): ProviderWireTool[] | undefined {
  if (tools === undefined || tools.length === 0) return undefined;
  return tools.map(({ name, description, parameters }) => ({ type: "function", function: { name, description, parameters } }));
}

// ---- lab 5.2: the model ------------------------------------------------------------------

const STOP_REASONS: Record<FinishReason, Extract<StopReason, "stop" | "length" | "toolUse">> = { stop: "stop", length: "length", tool_calls: "toolUse" };

function abortError(): DOMException {
  return new DOMException(ABORTED, "AbortError");
}

function isAbortError(error: unknown): boolean {
  return typeof error === "object" && error !== null && (error as { name?: unknown }).name === "AbortError";
}

interface OpenTool {
  id: string;
  name: string;
  text: string;
  at: number;
  index: number;
}

/** The blocks of one call as they grow: one text block, one tool-call block per chunk index. */
class Blocks {
  content: AssistantContent[] = [];
  textIndex: number | undefined = undefined;
  tools = new Map<number, OpenTool>();

  addText(delta: string): number {
    if (this.textIndex === undefined) {
      this.textIndex = this.content.length;
      this.content.push({ type: "text", text: "" });
    }
    const current = this.content[this.textIndex] as TextContent;
    this.content[this.textIndex] = { type: "text", text: current.text + delta };
    return this.textIndex;
  }

  addTool(chunk: ToolChunk): number {
    let tool = this.tools.get(chunk.index);
    if (tool === undefined) {
      tool = { id: chunk.id ?? `call-${chunk.index}`, name: chunk.name ?? "", text: "", at: this.content.length, index: chunk.index };
      this.tools.set(chunk.index, tool);
      this.content.push({ type: "toolCall", id: tool.id, name: tool.name, arguments: "", rawArguments: "" });
    }
    if (chunk.id) tool.id = chunk.id;
    if (chunk.name) tool.name = chunk.name;
    tool.text += chunk.argumentsDelta ?? "";
    this.content[tool.at] = { type: "toolCall", id: tool.id, name: tool.name, arguments: tool.text, rawArguments: tool.text };
    return tool.at;
  }
}

export function createOpenAICompatibleModel(options: { provider: string; model: string; transport: ProviderTransport }): Model {
  const { provider, model, transport } = options;
  const message = (content: AssistantContent[], stopReason: StopReason, extra: Partial<AssistantMessage> = {}): AssistantMessage =>
    assistantMessage(content, stopReason, { provider, model, usage: zeroUsage(), ...extra });

  async function produce(stream: AssistantMessageEventStream, context: AgentContext, streamOptions: { signal?: AbortSignal }): Promise<void> {
    const blocks = new Blocks();
    const signal = streamOptions.signal;
    stream.push({ type: "start", partial: message([], "stop") });
    try {
      const request: ProviderRequest = { model, messages: toProviderMessages(context), tools: toProviderTools(context.tools) };
      let finish: Extract<ProviderChunk, { type: "finish" }> | undefined;
      for await (const chunk of transport.stream(request, streamOptions)) {
        if (signal?.aborted) throw abortError();
        if (chunk.type === "text") {
          const at = blocks.addText(chunk.delta);
          stream.push({ type: "text_delta", contentIndex: at, delta: chunk.delta, partial: message(structuredClone(blocks.content), "stop") });
        } else if (chunk.type === "tool") {
          const at = blocks.addTool(chunk);
          stream.push({ type: "toolcall_delta", contentIndex: at, delta: chunk.argumentsDelta ?? "", partial: message(structuredClone(blocks.content), "stop") });
        } else {
          finish = chunk;
        }
      }
      if (finish === undefined) throw new Error("Provider stream ended without a finish chunk");
      const reason = STOP_REASONS[finish.reason];
      for (const tool of [...blocks.tools.values()].sort((a, b) => a.at - b.at)) {
        let args: unknown = tool.text;
        if (reason === "toolUse") {
          try {
            args = JSON.parse(tool.text || "{}");
          } catch {
            throw new Error(`Tool ${tool.name || tool.index} arguments 不是完整 JSON`);
          }
        }
        const toolCall: ToolCall = { type: "toolCall", id: tool.id, name: tool.name, arguments: args, rawArguments: tool.text };
        blocks.content[tool.at] = toolCall;
        stream.push({ type: "toolcall_end", contentIndex: tool.at, toolCall, partial: message(structuredClone(blocks.content), reason) });
      }
      const input = finish.usage?.input ?? 0;
      const output = finish.usage?.output ?? 0;
      const usage: Usage = { input, output, totalTokens: finish.usage?.totalTokens ?? input + output };
      const done = message(blocks.content, reason, { usage });
      stream.push({ type: "done", reason, message: done });
      stream.end(done);
    } catch (error) {
      const reason = signal?.aborted || isAbortError(error) ? "aborted" : "error";
      const failed = message(structuredClone(blocks.content), reason, { errorMessage: error instanceof Error ? error.message : String(error) });
      stream.push({ type: "error", reason, error: failed });
      stream.end(failed);
    }
  }

  return {
    stream(context, streamOptions = {}) {
      const stream = new AssistantMessageEventStream();
      void produce(stream, context, streamOptions);
      return stream;
    },
  };
}

export function fixedTransport(chunks: ProviderChunk[]): ProviderTransport {
  return {
    async *stream() {
      yield* chunks;
    },
  };
}

// ---- lab 5.3: the SSE transport ------------------------------------------------------------

type Json = Record<string, unknown>;

const invalid = (detail: string): Error => new Error(`Invalid provider chunk: ${detail}`);
const isRecord = (value: unknown): value is Json => typeof value === "object" && value !== null && !Array.isArray(value);
const isCount = (value: unknown): value is number => typeof value === "number" && Number.isSafeInteger(value) && value >= 0;
const isString = (value: unknown): value is string => typeof value === "string";

function optional<T>(record: Json, key: string, path: string, check: (value: unknown) => value is T, wanted: string): T | undefined {
  const value = record[key];
  if (value === undefined || value === null) return undefined;
  if (!check(value)) throw invalid(`${path}.${key} must be ${wanted}`);
  return value;
}

function parseUsage(value: unknown): Partial<Usage> | undefined {
  if (value === undefined || value === null) return undefined;
  if (!isRecord(value)) throw invalid("usage must be an object");
  const usage: Partial<Usage> = {};
  const names: Array<[string, keyof Usage]> = [["prompt_tokens", "input"], ["completion_tokens", "output"], ["total_tokens", "totalTokens"]];
  for (const [wire, ours] of names) {
    const count = optional(value, wire, "usage", isCount, "a non-negative integer");
    if (count !== undefined) usage[ours] = count;
  }
  return usage;
}

function parseToolCall(value: unknown, path: string): ToolChunk {
  if (!isRecord(value)) throw invalid(`${path} must be an object`);
  if (!isCount(value.index)) throw invalid(`${path}.index must be a non-negative integer`);
  if (value.type !== undefined && value.type !== null && value.type !== "function") throw invalid(`${path}.type must be function`);
  const chunk: ToolChunk = { type: "tool", index: value.index };
  const id = optional(value, "id", path, isString, "a string");
  if (id !== undefined) chunk.id = id;
  if (value.function !== undefined && value.function !== null) {
    if (!isRecord(value.function)) throw invalid(`${path}.function must be an object`);
    const name = optional(value.function, "name", `${path}.function`, isString, "a string");
    const args = optional(value.function, "arguments", `${path}.function`, isString, "a string");
    if (name !== undefined) chunk.name = name;
    if (args !== undefined) chunk.argumentsDelta = args;
  }
  if (chunk.id === undefined && chunk.name === undefined && chunk.argumentsDelta === undefined) throw invalid(`${path} has no tool-call delta`);
  return chunk;
}

interface Parsed {
  chunks: ContentChunk[];
  finishReason?: FinishReason;
  usage?: Partial<Usage>;
}

const isFinishReason = (value: unknown): value is FinishReason => typeof value === "string" && Object.hasOwn(STOP_REASONS, value);

function parseChoice(choice: unknown, usage: Partial<Usage> | undefined): Parsed {
  if (!isRecord(choice)) throw invalid("choices[0] must be an object");
  if (choice.index !== undefined && !isCount(choice.index)) throw invalid("choices[0].index must be a non-negative integer");
  if (!isRecord(choice.delta)) throw invalid("choices[0].delta must be an object");
  const chunks: ContentChunk[] = [];
  const content = optional(choice.delta, "content", "choices[0].delta", isString, "a string");
  if (content) chunks.push({ type: "text", delta: content });
  const calls = optional(choice.delta, "tool_calls", "choices[0].delta", Array.isArray, "an array") as unknown[] | undefined;
  for (const [n, call] of (calls ?? []).entries()) chunks.push(parseToolCall(call, `choices[0].delta.tool_calls[${n}]`));
  const finish = choice.finish_reason;
  if (finish === undefined || finish === null) return { chunks, usage };
  if (!isFinishReason(finish)) throw invalid("finish_reason is not supported");
  return { chunks, finishReason: finish, usage };
}

function parsePayload(value: unknown): Parsed {
  if (!isRecord(value)) throw invalid("payload must be an object");
  if ("error" in value) throw invalid("provider returned an error payload");
  if (!Array.isArray(value.choices)) throw invalid("choices must be an array");
  if (value.choices.length > 1) throw invalid("only one streamed choice is supported");
  const usage = parseUsage(value.usage);
  if (value.choices.length === 0) {
    if (usage === undefined) throw invalid("empty choices require usage");
    return { chunks: [], usage };
  }
  return parseChoice(value.choices[0], usage);
}

/** The data of each SSE event of `body`, checking `signal` around every read. */
async function* sseEvents(body: ReadableStream<Uint8Array>, signal: AbortSignal | undefined): AsyncGenerator<string> {
  const reader = body.getReader();
  const decoder = new TextDecoder();
  let pending = "";
  let data: string[] = [];
  const line = (text: string): string | undefined => {
    if (text === "") {
      const event = data.length > 0 ? data.join("\n") : undefined;
      data = [];
      return event;
    }
    if (text === "data") data.push("");
    else if (text.startsWith("data:")) data.push(text.slice(text.startsWith("data: ") ? 6 : 5));
    return undefined;
  };
  const strip = (text: string): string => (text.endsWith("\r") ? text.slice(0, -1) : text);
  try {
    for (;;) {
      if (signal?.aborted) throw abortError();
      const { done, value } = await reader.read();
      if (signal?.aborted) throw abortError();
      pending += done ? decoder.decode() : decoder.decode(value, { stream: true });
      const lines = pending.split("\n");
      pending = lines.pop() ?? "";
      for (const text of lines) {
        const event = line(strip(text));
        if (event !== undefined) yield event;
      }
      if (done) break;
    }
    if (pending !== "") {
      const event = line(strip(pending));
      if (event !== undefined) yield event;
    }
    if (data.length > 0) yield data.join("\n");
  } finally {
    await reader.cancel().catch(() => undefined);
    reader.releaseLock();
  }
}

function endpointOf(baseUrl: string): string {
  const endpoint = `${baseUrl.replace(/\/+$/, "")}/chat/completions`;
  try {
    return new URL(endpoint).toString();
  } catch {
    throw new Error("OpenAI-compatible baseUrl must be an absolute URL");
  }
}

function redacted(error: unknown, apiKey: string): Error {
  if (isAbortError(error)) return abortError();
  const text = error instanceof Error ? error.message : String(error);
  const message = apiKey ? text.split(apiKey).join("[redacted]") : text;
  return new Error(message || "OpenAI-compatible transport failed");
}

async function* readChunks(
  endpoint: string,
  options: OpenAICompatibleTransportOptions,
  request: ProviderRequest,
  signal: AbortSignal | undefined,
): AsyncGenerator<ProviderChunk> {
  if (signal?.aborted) throw abortError();
  const fetchImplementation = options.fetch ?? globalThis.fetch;
  const headers = { Accept: "text/event-stream", Authorization: `Bearer ${options.apiKey}`, "Content-Type": "application/json" };
  const body = JSON.stringify({ ...request, stream: true, stream_options: { include_usage: true } });
  const response = await fetchImplementation(endpoint, { method: "POST", headers, body, signal });
  if (signal?.aborted) throw abortError();
  if (!response.ok) throw new Error(`OpenAI-compatible request failed with HTTP ${response.status}`);
  if (!response.body) throw new Error("OpenAI-compatible response has no body");
  let finishReason: FinishReason | undefined;
  let usage: Partial<Usage> | undefined;
  for await (const data of sseEvents(response.body, signal)) {
    if (signal?.aborted) throw abortError();
    if (data.trim() === "[DONE]") break;
    let payload: unknown;
    try {
      payload = JSON.parse(data);
    } catch {
      throw invalid("data line is not valid JSON");
    }
    const parsed = parsePayload(payload);
    if (finishReason !== undefined && parsed.chunks.length > 0) throw invalid("content arrived after finish_reason");
    if (finishReason !== undefined && parsed.finishReason !== undefined && parsed.finishReason !== finishReason) {
      throw invalid("finish_reason changed during the stream");
    }
    yield* parsed.chunks;
    finishReason = parsed.finishReason ?? finishReason;
    if (parsed.usage !== undefined) usage = { ...usage, ...parsed.usage };
  }
  if (signal?.aborted) throw abortError();
  if (finishReason !== undefined) yield usage === undefined ? { type: "finish", reason: finishReason } : { type: "finish", reason: finishReason, usage };
}

export function createOpenAICompatibleTransport(options: OpenAICompatibleTransportOptions): ProviderTransport {
  const endpoint = endpointOf(options.baseUrl);
  return {
    async *stream(request, streamOptions = {}) {
      try {
        yield* readChunks(endpoint, options, request, streamOptions.signal);
      } catch (error) {
        throw redacted(error, options.apiKey);
      }
    },
  };
}
