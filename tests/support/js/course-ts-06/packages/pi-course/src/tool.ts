// Chapter 06: the tool contract. A typed port of tests/support/js/course-correct's tool.js
// (TOOL-VAL-*, TOOL-SCHEMA-*, TOOL-REG-*, TOOL-EXEC-*), with the chapter's interfaces.
import { text } from "./types.js";
import type { TextContent, ToolCall, ToolDefinition, ToolResultMessage } from "./types.js";

/** Checks unknown input and turns it into a `T`, or throws; may describe itself as JSON Schema. */
export interface Schema<T> {
  parse(value: unknown): T;
  jsonSchema?: Record<string, unknown>;
}

/** One field's check, with its JSON Schema and whether the field may be missing. */
export type Validator<T> = ((value: unknown) => T) & { jsonSchema?: Record<string, unknown>; optional?: boolean };

function validator<T>(check: (value: unknown) => T, jsonSchema: Record<string, unknown>, optional: boolean): Validator<T> {
  return Object.assign(check, optional ? { jsonSchema, optional } : { jsonSchema });
}

/** TOOL-VAL-1: a string, or the error 必须是 string. */
export const stringValue: Validator<string> = validator(
  (value) => {
    if (typeof value !== "string") throw new Error("必须是 string");
    return value;
  },
  { type: "string" },
  false,
);

/** TOOL-VAL-2: undefined, or what stringValue accepts. */
export const optionalString: Validator<string | undefined> = validator(
  (value) => (value === undefined ? undefined : stringValue(value)),
  { type: "string" },
  true,
);

/** TOOL-VAL-3: undefined, or an integer of at least 1. */
export const optionalPositiveInteger: Validator<number | undefined> = validator(
  (value) => {
    if (value === undefined) return undefined;
    if (typeof value !== "number" || !Number.isInteger(value) || value < 1) throw new Error("必须是正整数");
    return value;
  },
  { type: "integer", minimum: 1 },
  true,
);

type Parsed<TShape extends Record<string, Validator<unknown>>> = { [TKey in keyof TShape]: ReturnType<TShape[TKey]> };

/** TOOL-SCHEMA-1..3: a schema whose parse builds a new object from the shape's keys, in shape order. */
export function objectSchema<TShape extends Record<string, Validator<unknown>>>(shape: TShape): Schema<Parsed<TShape>> {
  const entries = Object.entries(shape);
  return {
    jsonSchema: {
      type: "object",
      properties: Object.fromEntries(entries.map(([key, check]) => [key, check.jsonSchema ?? {}])),
      required: entries.filter(([, check]) => !check.optional).map(([key]) => key),
      additionalProperties: false,
    },
    parse(value: unknown): Parsed<TShape> {
      if (value === null || typeof value !== "object" || Array.isArray(value)) throw new Error("参数必须是 object");
      const input = value as Record<string, unknown>;
      const parsed: Record<string, unknown> = {};
      for (const [key, check] of entries) parsed[key] = check(input[key]);
      return parsed as Parsed<TShape>;
    },
  };
}

/** What a tool's execute is given besides its parameters. */
export interface ToolContext {
  callId: string;
  signal?: AbortSignal;
  reportProgress?(content: TextContent[]): void;
}

/** What a tool's execute resolves with. */
export interface ToolOutput<TDetails = unknown> {
  content: TextContent[];
  details?: TDetails;
  isError?: boolean;
}

export interface Tool<TParameters = unknown, TDetails = unknown> {
  name: string;
  description: string;
  schema: Schema<TParameters>;
  execute(parameters: TParameters, context: ToolContext): Promise<ToolOutput<TDetails>>;
}

/** TOOL-REG-1..5: tools by name, in registration order. */
export class ToolRegistry {
  readonly #tools = new Map<string, Tool>();

  constructor(tools: Tool<never, unknown>[] | Tool[] = []) {
    for (const tool of tools) this.register(tool as Tool);
  }

  register<TParameters, TDetails>(tool: Tool<TParameters, TDetails>): void {
    if (this.#tools.has(tool.name)) throw new Error(`Tool 已存在：${tool.name}`);
    this.#tools.set(tool.name, tool as Tool);
  }

  get(name: string): Tool | undefined {
    return this.#tools.get(name);
  }

  list(): Tool[] {
    return [...this.#tools.values()];
  }

  definitions(): ToolDefinition[] {
    return this.list().map((tool) => ({ name: tool.name, description: tool.description, parameters: tool.schema.jsonSchema ?? { type: "object" } }));
  }
}

/** TOOL-EXEC-2: the failure result of `message`, paired with the call. */
function failure(call: ToolCall, message: string): ToolResultMessage {
  return {
    role: "toolResult",
    toolCallId: call.id,
    toolName: call.name,
    content: [text(`Tool ${call.name} failed: ${message}`)],
    details: { error: message },
    isError: true,
    timestamp: Date.now(),
  };
}

/** TOOL-EXEC-1..7: look up, parse, execute, normalize; every failure is a result, never a throw. */
export async function executeToolCall(
  call: ToolCall,
  registry: ToolRegistry,
  context: Omit<ToolContext, "callId"> = {},
): Promise<ToolResultMessage> {
  const tool = registry.get(call.name);
  if (tool === undefined) return failure(call, "未知工具");
  try {
    const parameters = tool.schema.parse(call.arguments);
    const output = await tool.execute(parameters, { ...context, callId: call.id });
    return {
      role: "toolResult",
      toolCallId: call.id,
      toolName: call.name,
      content: output.content,
      ...("details" in output ? { details: output.details } : {}),
      isError: output.isError ?? false,
      timestamp: Date.now(),
    };
  } catch (error) {
    return failure(call, error instanceof Error ? error.message : String(error));
  }
}
