// Chapter 06: the tool contract (validators, objectSchema, ToolRegistry, executeToolCall).
// Plain JavaScript written from spec/spec.md (TOOL-VAL-*, TOOL-SCHEMA-*, TOOL-REG-*,
// TOOL-EXEC-*); the course's Schema, Tool and ToolContext interfaces leave no trace here.
import { text } from "./types.js";

/** Attach a validator's JSON Schema and optionality to the checking function. */
function validator(check, jsonSchema, optional) {
  check.jsonSchema = jsonSchema;
  if (optional) check.optional = true;
  return check;
}

/** TOOL-VAL-1: a string, or the error 必须是 string. */
export const stringValue = validator((value) => {
  if (typeof value !== "string") throw new Error("必须是 string");
  return value;
}, { type: "string" }, false);

/** TOOL-VAL-2: undefined, or what stringValue accepts. */
export const optionalString = validator((value) => (value === undefined ? undefined : stringValue(value)), { type: "string" }, true);

/** TOOL-VAL-3: undefined, or an integer of at least 1. */
export const optionalPositiveInteger = validator((value) => {
  if (value === undefined) return undefined;
  if (!Number.isInteger(value) || value < 1) throw new Error("必须是正整数");
  return value;
}, { type: "integer", minimum: 1 }, true);

/** TOOL-SCHEMA-1..3: a schema whose parse builds a new object from the shape's keys. */
export function objectSchema(shape) {
  const entries = Object.entries(shape);
  return {
    jsonSchema: {
      type: "object",
      properties: Object.fromEntries(entries.map(([key, check]) => [key, check.jsonSchema ?? {}])),
      required: entries.filter(([, check]) => !check.optional).map(([key]) => key),
      additionalProperties: false,
    },
    parse(value) {
      if (value === null || typeof value !== "object" || Array.isArray(value)) throw new Error("参数必须是 object");
      const parsed = {};
      for (const [key, check] of entries) parsed[key] = check(value[key]);
      return parsed;
    },
  };
}

/** TOOL-REG-1..5: tools by name, in registration order. */
export class ToolRegistry {
  #tools = new Map();

  constructor(tools = []) {
    for (const tool of tools) this.register(tool);
  }

  register(tool) {
    if (this.#tools.has(tool.name)) throw new Error(`Tool 已存在：${tool.name}`);
    this.#tools.set(tool.name, tool);
  }

  get(name) {
    return this.#tools.get(name);
  }

  list() {
    return [...this.#tools.values()];
  }

  definitions() {
    return this.list().map((tool) => ({ name: tool.name, description: tool.description, parameters: tool.schema.jsonSchema ?? { type: "object" } }));
  }
}

/** TOOL-EXEC-2: the failure result of `message`, paired with the call. */
function failure(call, message) {
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
export async function executeToolCall(call, registry, context = {}) {
  const tool = registry.get(call.name);
  if (tool === undefined) return failure(call, "未知工具");
  try {
    const parameters = tool.schema.parse(call.arguments);
    const output = await tool.execute(parameters, { ...context, callId: call.id });
    const result = { role: "toolResult", toolCallId: call.id, toolName: call.name, content: output.content };
    if ("details" in output) result.details = output.details;
    return { ...result, isError: output.isError ?? false, timestamp: Date.now() };
  } catch (error) {
    return failure(call, error instanceof Error ? error.message : String(error));
  }
}
