// Chapter 05's provider adapter for the test projects, written from spec/spec.md section 8
// (PROV-*): the wire conversion (lab 5.1), the model over a transport (lab 5.2) and the
// OpenAI-compatible SSE transport (lab 5.3). It imports its chapter 03 helpers from the
// project's own types.js and event-stream.js, as the course's module does.
import { AssistantMessageEventStream } from "./event-stream.js";
import { assistantMessage, currentSystemPrompt } from "./types.js";

const ABORTED = "Request was aborted";
const zeroUsage = () => ({ input: 0, output: 0, totalTokens: 0 });

// ---- lab 5.1: outbound -----------------------------------------------------------------

const joinedText = (blocks) =>
  blocks
    .filter((block) => block.type === "text")
    .map((block) => block.text)
    .join("\n");

function wireCall(call) {
  const args = call.rawArguments !== undefined ? call.rawArguments : JSON.stringify(call.arguments ?? {});
  return { id: call.id, type: "function", function: { name: call.name, arguments: args } };
}

function wireMessage(message) {
  if (message.role === "user") return { role: "user", content: joinedText(message.content) };
  if (message.role === "toolResult") {
    return { role: "tool", tool_call_id: message.toolCallId, name: message.toolName, content: joinedText(message.content) };
  }
  const calls = message.content.filter((block) => block.type === "toolCall").map(wireCall);
  const entry = { role: "assistant", content: joinedText(message.content) || null };
  if (calls.length > 0) entry.tool_calls = calls;
  return entry;
}

export function toProviderMessages(context) {
  const prompt = currentSystemPrompt(context.messages);
  const wire = prompt ? [{ role: "system", content: prompt }] : [];
  for (const message of context.messages) if (message.role !== "system") wire.push(wireMessage(message));
  return wire;
}

export function toProviderTools(tools) {
  if (tools === undefined || tools.length === 0) return undefined;
  return tools.map(({ name, description, parameters }) => ({ type: "function", function: { name, description, parameters } }));
}

// ---- lab 5.2: the model ------------------------------------------------------------------

const STOP_REASONS = { stop: "stop", length: "length", tool_calls: "toolUse" };

function abortError() {
  return new DOMException(ABORTED, "AbortError");
}

/** The blocks of one call as they grow: one text block, one tool-call block per chunk index. */
class Blocks {
  content = [];
  textIndex = undefined;
  tools = new Map(); // chunk index -> {id, name, text, at}

  addText(delta) {
    if (this.textIndex === undefined) {
      this.textIndex = this.content.length;
      this.content.push({ type: "text", text: "" });
    }
    this.content[this.textIndex] = { type: "text", text: this.content[this.textIndex].text + delta };
    return this.textIndex;
  }

  addTool(chunk) {
    let tool = this.tools.get(chunk.index);
    if (tool === undefined) {
      tool = { id: chunk.id ?? `call-${chunk.index}`, name: chunk.name ?? "", text: "", at: this.content.length, index: chunk.index };
      this.tools.set(chunk.index, tool);
      this.content.push(null);
    }
    if (chunk.id) tool.id = chunk.id;
    if (chunk.name) tool.name = chunk.name;
    tool.text += chunk.argumentsDelta ?? "";
    this.content[tool.at] = { type: "toolCall", id: tool.id, name: tool.name, arguments: tool.text, rawArguments: tool.text };
    return tool.at;
  }
}

export function createOpenAICompatibleModel({ provider, model, transport }) {
  const message = (content, stopReason, extra = {}) => assistantMessage(content, stopReason, { provider, model, usage: zeroUsage(), ...extra });
  async function produce(stream, context, options) {
    const blocks = new Blocks();
    const signal = options.signal;
    stream.push({ type: "start", partial: message([], "stop") });
    try {
      const request = { model, messages: toProviderMessages(context), tools: toProviderTools(context.tools) };
      let finish;
      for await (const chunk of transport.stream(request, options)) {
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
        let args = tool.text;
        if (reason === "toolUse") {
          try {
            args = JSON.parse(tool.text || "{}");
          } catch {
            throw new Error(`Tool ${tool.name || tool.index} arguments 不是完整 JSON`);
          }
        }
        const toolCall = { type: "toolCall", id: tool.id, name: tool.name, arguments: args, rawArguments: tool.text };
        blocks.content[tool.at] = toolCall;
        stream.push({ type: "toolcall_end", contentIndex: tool.at, toolCall, partial: message(structuredClone(blocks.content), reason) });
      }
      const input = finish.usage?.input ?? 0;
      const output = finish.usage?.output ?? 0;
      const usage = { input, output, totalTokens: finish.usage?.totalTokens ?? input + output };
      const done = message(blocks.content, reason, { usage });
      stream.push({ type: "done", reason, message: done });
      stream.end(done);
    } catch (error) {
      const reason = signal?.aborted || error?.name === "AbortError" ? "aborted" : "error";
      const failed = message(structuredClone(blocks.content), reason, { errorMessage: error instanceof Error ? error.message : String(error) });
      stream.push({ type: "error", reason, error: failed });
      stream.end(failed);
    }
  }
  return {
    stream(context, options = {}) {
      const stream = new AssistantMessageEventStream();
      void produce(stream, context, options);
      return stream;
    },
  };
}

export function fixedTransport(chunks) {
  return {
    async *stream() {
      yield* chunks;
    },
  };
}

// ---- lab 5.3: the SSE transport ------------------------------------------------------------

const invalid = (detail) => new Error(`Invalid provider chunk: ${detail}`);
const isRecord = (value) => typeof value === "object" && value !== null && !Array.isArray(value);
const isCount = (value) => typeof value === "number" && Number.isSafeInteger(value) && value >= 0;

function optional(record, key, path, check, wanted) {
  const value = record[key];
  if (value === undefined || value === null) return undefined;
  if (!check(value)) throw invalid(`${path}.${key} must be ${wanted}`);
  return value;
}

function parseUsage(value) {
  if (value === undefined || value === null) return undefined;
  if (!isRecord(value)) throw invalid("usage must be an object");
  const usage = {};
  for (const [wire, ours] of [["prompt_tokens", "input"], ["completion_tokens", "output"], ["total_tokens", "totalTokens"]]) {
    const count = optional(value, wire, "usage", isCount, "a non-negative integer");
    if (count !== undefined) usage[ours] = count;
  }
  return usage;
}

function parseToolCall(value, path) {
  if (!isRecord(value)) throw invalid(`${path} must be an object`);
  if (!isCount(value.index)) throw invalid(`${path}.index must be a non-negative integer`);
  if (value.type !== undefined && value.type !== null && value.type !== "function") throw invalid(`${path}.type must be function`);
  const isString = (item) => typeof item === "string";
  const chunk = { type: "tool", index: value.index };
  const id = optional(value, "id", path, isString, "a string");
  if (id !== undefined) chunk.id = id;
  if (value.function !== undefined && value.function !== null) {
    if (!isRecord(value.function)) throw invalid(`${path}.function must be an object`);
    const name = optional(value.function, "name", `${path}.function`, isString, "a string");
    const args = optional(value.function, "arguments", `${path}.function`, isString, "a string");
    if (name !== undefined) chunk.name = name;
    if (args !== undefined) chunk.argumentsDelta = args;
  }
  if (!("id" in chunk) && !("name" in chunk) && !("argumentsDelta" in chunk)) throw invalid(`${path} has no tool-call delta`);
  return chunk;
}

function parsePayload(value) {
  if (!isRecord(value)) throw invalid("payload must be an object");
  if ("error" in value) throw invalid("provider returned an error payload");
  if (!Array.isArray(value.choices)) throw invalid("choices must be an array");
  if (value.choices.length > 1) throw invalid("only one streamed choice is supported");
  const usage = parseUsage(value.usage);
  if (value.choices.length === 0) {
    if (usage === undefined) throw invalid("empty choices require usage");
    return { chunks: [], usage };
  }
  const [choice] = value.choices;
  if (!isRecord(choice)) throw invalid("choices[0] must be an object");
  if (choice.index !== undefined && !isCount(choice.index)) throw invalid("choices[0].index must be a non-negative integer");
  if (!isRecord(choice.delta)) throw invalid("choices[0].delta must be an object");
  const chunks = [];
  const content = optional(choice.delta, "content", "choices[0].delta", (item) => typeof item === "string", "a string");
  if (content) chunks.push({ type: "text", delta: content });
  const calls = optional(choice.delta, "tool_calls", "choices[0].delta", Array.isArray, "an array");
  for (const [n, call] of (calls ?? []).entries()) chunks.push(parseToolCall(call, `choices[0].delta.tool_calls[${n}]`));
  const finish = choice.finish_reason;
  if (finish !== undefined && finish !== null && !(finish in STOP_REASONS)) throw invalid("finish_reason is not supported");
  return { chunks, finishReason: finish ?? undefined, usage };
}

/** The data of each SSE event of `body`, checking `signal` around every read. */
async function* sseEvents(body, signal) {
  const reader = body.getReader();
  const decoder = new TextDecoder();
  let pending = "";
  let data = [];
  const line = (text) => {
    if (text === "") {
      const event = data.length > 0 ? data.join("\n") : undefined;
      data = [];
      return event;
    }
    if (text === "data") data.push("");
    else if (text.startsWith("data:")) data.push(text.slice(text.startsWith("data: ") ? 6 : 5));
    return undefined;
  };
  try {
    for (;;) {
      if (signal?.aborted) throw abortError();
      const { done, value } = await reader.read();
      if (signal?.aborted) throw abortError();
      pending += done ? decoder.decode() : decoder.decode(value, { stream: true });
      const lines = pending.split("\n");
      pending = lines.pop();
      for (const text of lines) {
        const event = line(text.endsWith("\r") ? text.slice(0, -1) : text);
        if (event !== undefined) yield event;
      }
      if (done) break;
    }
    if (pending !== "") {
      const event = line(pending.endsWith("\r") ? pending.slice(0, -1) : pending);
      if (event !== undefined) yield event;
    }
    if (data.length > 0) yield data.join("\n");
  } finally {
    await reader.cancel().catch(() => {});
    reader.releaseLock();
  }
}

function endpointOf(baseUrl) {
  const endpoint = `${baseUrl.replace(/\/+$/, "")}/chat/completions`;
  try {
    return new URL(endpoint).toString();
  } catch {
    throw new Error("OpenAI-compatible baseUrl must be an absolute URL");
  }
}

function redacted(error, apiKey) {
  if (error?.name === "AbortError") return abortError();
  const text = error instanceof Error ? error.message : String(error);
  const message = apiKey ? text.split(apiKey).join("[redacted]") : text;
  return new Error(message || "OpenAI-compatible transport failed");
}

async function* readChunks(endpoint, apiKey, fetchImplementation, request, signal) {
  if (signal?.aborted) throw abortError();
  const headers = { Accept: "text/event-stream", Authorization: `Bearer ${apiKey}`, "Content-Type": "application/json" };
  const body = JSON.stringify({ ...request, stream: true, stream_options: { include_usage: true } });
  const response = await fetchImplementation(endpoint, { method: "POST", headers, body, signal });
  if (signal?.aborted) throw abortError();
  if (!response.ok) throw new Error(`OpenAI-compatible request failed with HTTP ${response.status}`);
  if (!response.body) throw new Error("OpenAI-compatible response has no body");
  let finishReason;
  let usage;
  for await (const data of sseEvents(response.body, signal)) {
    if (signal?.aborted) throw abortError();
    if (data.trim() === "[DONE]") break;
    let payload;
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

export function createOpenAICompatibleTransport({ baseUrl, apiKey, fetch }) {
  const endpoint = endpointOf(baseUrl);
  const fetchImplementation = fetch ?? globalThis.fetch;
  return {
    async *stream(request, options = {}) {
      try {
        yield* readChunks(endpoint, apiKey, fetchImplementation, request, options.signal);
      } catch (error) {
        throw redacted(error, apiKey);
      }
    },
  };
}
