// Reference of the course's chapter 06 tool contract (packages/pi-course/src/tool.ts), for lab
// isolation (lab_isolation.mjs): a chapter 07 loop that imports "./tool.js" gets these, and the
// course adapter registers a chapter 07 case's scripted tools in this ToolRegistry, so a lab 6.x
// bug costs no 7.x points. Written from spec/spec.md section 9 (TOOL-*), as reference_impl/tool.py is.

import { text } from "./types.mjs";

/** A validator: the check, with its JSON Schema and whether a missing key is allowed. */
const validator = (check, jsonSchema, optional = false) => Object.assign(check, optional ? { jsonSchema, optional } : { jsonSchema });

export const stringValue = validator((value) => {
  if (typeof value !== "string") throw new Error("必须是 string");
  return value;
}, { type: "string" });

export const optionalString = validator((value) => (value === undefined ? undefined : stringValue(value)), { type: "string" }, true);

export const optionalPositiveInteger = validator(
  (value) => {
    if (value === undefined) return undefined;
    if (!Number.isInteger(value) || value < 1) throw new Error("必须是正整数");
    return value;
  },
  { type: "integer", minimum: 1 },
  true,
);

/** TOOL-SCHEMA-*: the shape's JSON Schema, and a parse that keeps the shape's keys only, in order. */
export function objectSchema(shape) {
  const entries = () => Object.entries(shape);
  return {
    jsonSchema: {
      type: "object",
      properties: Object.fromEntries(entries().map(([key, check]) => [key, check.jsonSchema ?? {}])),
      required: entries().filter(([, check]) => !check.optional).map(([key]) => key),
      additionalProperties: false,
    },
    parse(value) {
      if (value === null || typeof value !== "object" || Array.isArray(value)) throw new Error("参数必须是 object");
      return Object.fromEntries(entries().map(([key, check]) => [key, check(value[key])]));
    },
  };
}

/** TOOL-REG-*: the tools of a run by name, in registration order; a duplicate name is an error. */
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

/** TOOL-EXEC-2: the paired failure result, the error's message only (never the error object). */
export function failedResult(call, error) {
  const message = error instanceof Error ? error.message : String(error);
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

/** TOOL-EXEC-*: lookup, parse, execute; success and expected failure alike give a paired result. */
export async function executeToolCall(call, registry, context = {}) {
  const tool = registry.get(call.name);
  if (!tool) return failedResult(call, new Error("未知工具"));
  try {
    const parameters = tool.schema.parse(call.arguments);
    const output = await tool.execute(parameters, { ...context, callId: call.id });
    return {
      role: "toolResult",
      toolCallId: call.id,
      toolName: call.name,
      content: output.content,
      details: output.details,
      isError: output.isError ?? false,
      timestamp: Date.now(),
    };
  } catch (error) {
    return failedResult(call, error);
  }
}
