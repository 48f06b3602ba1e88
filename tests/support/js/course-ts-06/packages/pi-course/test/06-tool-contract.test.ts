// Chapter 06's focused tests: validators and parse, the registry, the executor's four outcomes.
import assert from "node:assert/strict";
import test from "node:test";

import { ToolRegistry, executeToolCall, objectSchema, optionalString, stringValue } from "../src/tool.js";
import type { Tool } from "../src/tool.js";
import { text } from "../src/types.js";

const shape = { value: stringValue, label: optionalString };

function echo(runs: string[]): Tool<{ value: string; label: string | undefined }> {
  return {
    name: "echo",
    description: "echo",
    schema: objectSchema(shape),
    async execute(parameters, context) {
      runs.push(context.callId);
      return { content: [text(parameters.value)] };
    },
  };
}

test("parse 只保留 shape 的键，缺少的可选键仍在", () => {
  assert.deepEqual(objectSchema(shape).parse({ value: "Pi", extra: 1 }), { value: "Pi", label: undefined });
  assert.throws(() => objectSchema(shape).parse(null), { message: "参数必须是 object" });
});

test("registry 拒绝重名并按注册顺序列出", () => {
  const registry = new ToolRegistry([echo([])]);
  assert.throws(() => registry.register(echo([])), { message: "Tool 已存在：echo" });
  assert.deepEqual(
    registry.definitions().map((definition) => definition.name),
    ["echo"],
  );
});

test("执行器把成功与失败都变成配对的结果", async () => {
  const runs: string[] = [];
  const registry = new ToolRegistry([echo(runs)]);
  const ok = await executeToolCall({ type: "toolCall", id: "a", name: "echo", arguments: { value: "Pi" } }, registry);
  assert.deepEqual([ok.isError, ok.content, runs], [false, [text("Pi")], ["a"]]);
  const bad = await executeToolCall({ type: "toolCall", id: "b", name: "echo", arguments: { value: 1 } }, registry);
  assert.deepEqual([bad.isError, bad.details, runs.length], [true, { error: "必须是 string" }, 1]);
  const unknown = await executeToolCall({ type: "toolCall", id: "c", name: "missing", arguments: {} }, registry);
  assert.equal(unknown.content[0]?.text, "Tool missing failed: 未知工具");
});
