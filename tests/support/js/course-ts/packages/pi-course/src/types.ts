// Chapter 03: the message IR, its constructors, text projection and system replay.
// A typed port of tests/support/js/course-correct (IR-*, SYS-*), with the chapter's interfaces.

/** A text content block. */
export interface TextContent {
  type: "text";
  text: string;
}

/** A tool call; `arguments` is unchecked until a tool's schema accepts it. */
export interface ToolCall {
  type: "toolCall";
  id: string;
  name: string;
  arguments: unknown;
  rawArguments?: string;
}

export type AssistantContent = TextContent | ToolCall;

export interface Usage {
  input: number;
  output: number;
  totalTokens: number;
}

export type StopReason = "stop" | "length" | "toolUse" | "error" | "aborted";

export interface SystemMessage {
  role: "system";
  /** The first one: the base prompt; later ones: text appended to it. May be empty. */
  content: string;
  /** Named sections; later system messages replace them by name, null deletes one. */
  sections?: Record<string, string | null>;
  timestamp: number;
}

export interface UserMessage {
  role: "user";
  content: TextContent[];
  timestamp: number;
}

export interface AssistantMessage {
  role: "assistant";
  content: AssistantContent[];
  provider: string;
  model: string;
  usage: Usage;
  stopReason: StopReason;
  errorMessage?: string;
  timestamp: number;
}

export interface ToolResultMessage<TDetails = unknown> {
  role: "toolResult";
  toolCallId: string;
  toolName: string;
  content: TextContent[];
  details?: TDetails;
  isError: boolean;
  timestamp: number;
}

export type AgentMessage = SystemMessage | UserMessage | AssistantMessage | ToolResultMessage;

/** What a provider is told about one tool: its name, what it does, its parameters' JSON Schema. */
export interface ToolDefinition {
  name: string;
  description: string;
  parameters: Record<string, unknown>;
}

/** The input of one model call. */
export interface AgentContext {
  messages: AgentMessage[];
  tools?: ToolDefinition[];
}

export type ModelEvent =
  | { type: "start"; partial: AssistantMessage }
  | { type: "text_delta"; contentIndex: number; delta: string; partial: AssistantMessage }
  | { type: "toolcall_delta"; contentIndex: number; delta: string; partial: AssistantMessage }
  | { type: "toolcall_end"; contentIndex: number; toolCall: ToolCall; partial: AssistantMessage }
  | { type: "done"; reason: Extract<StopReason, "stop" | "length" | "toolUse">; message: AssistantMessage }
  | { type: "error"; reason: Extract<StopReason, "error" | "aborted">; error: AssistantMessage };

export interface ModelStream extends AsyncIterable<ModelEvent> {
  result(): Promise<AssistantMessage>;
}

export interface Model {
  stream(context: AgentContext, options?: { signal?: AbortSignal }): ModelStream;
}

/** IR-MAKE-1: a text block. */
export function text(value: string): TextContent {
  return { type: "text", text: value };
}

/** IR-MAKE-2: a user message with one text block, stamped with the current time. */
export function userMessage(value: string): UserMessage {
  return { role: "user", content: [text(value)], timestamp: Date.now() };
}

/** IR-MAKE-3: an assistant message with typed defaults that `overrides` may replace. */
export function assistantMessage(
  content: AssistantContent[],
  stopReason: StopReason = "stop",
  overrides: Partial<AssistantMessage> = {},
): AssistantMessage {
  return {
    role: "assistant",
    content,
    provider: "scripted",
    model: "scripted-v1",
    usage: { input: 0, output: 0, totalTokens: 0 },
    stopReason,
    timestamp: Date.now(),
    ...overrides,
  };
}

/** IR-TEXT-1..4: the text blocks joined with "\n"; tool calls contribute nothing. */
export function textOf(message: AgentMessage): string {
  if (message.role === "system") return systemMessageText(message);
  const blocks: readonly AssistantContent[] = message.content;
  return blocks.flatMap((block) => (block.type === "text" ? [block.text] : [])).join("\n");
}

/** SYS-TEXT-1: content, then each section in order; null and empty strings left out. */
export function systemMessageText(message: SystemMessage): string {
  const parts = [message.content];
  for (const value of Object.values(message.sections ?? {})) {
    if (value !== null) parts.push(value);
  }
  return parts.filter((part) => part.length > 0).join("\n\n");
}

/** SYS-REPLAY-1..7: replay every system message, in order, into one new message. */
export function currentSystemMessage(messages: readonly AgentMessage[]): SystemMessage | undefined {
  const content: string[] = [];
  // A Map, not an object: a section deleted and added again goes to the end (SYS-REPLAY-4).
  const sections = new Map<string, string>();
  let timestamp: number | undefined;
  for (const message of messages) {
    if (message.role !== "system") continue;
    timestamp ??= message.timestamp;
    if (message.content.length > 0) content.push(message.content);
    for (const [name, value] of Object.entries(message.sections ?? {})) {
      if (value === null) sections.delete(name);
      else sections.set(name, value);
    }
  }
  if (timestamp === undefined) return undefined;
  return {
    role: "system",
    content: content.join("\n\n"),
    ...(sections.size > 0 ? { sections: Object.fromEntries(sections) } : {}),
    timestamp,
  };
}

/** SYS-PROMPT-1: the replayed message's text, or undefined without a system message. */
export function currentSystemPrompt(messages: readonly AgentMessage[]): string | undefined {
  const message = currentSystemMessage(messages);
  return message ? systemMessageText(message) : undefined;
}
