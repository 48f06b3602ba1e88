// Chapter 03's focused tests: text projection, error as a terminal event, system replay.
import assert from "node:assert/strict";
import test from "node:test";

import { AssistantMessageEventStream } from "../src/event-stream.js";
import {
  assistantMessage,
  currentSystemMessage,
  systemMessageText,
  text,
  textOf,
  userMessage,
} from "../src/types.js";
import type { AgentMessage, ModelEvent } from "../src/types.js";

test("文本投影只取 text block，不修改原 content", () => {
  const message = assistantMessage(
    [text("先读取"), { type: "toolCall", id: "c1", name: "read", arguments: { path: "README.md" } }, text("再回答")],
    "toolUse",
  );
  const before = structuredClone(message.content);
  assert.equal(textOf(message), "先读取\n再回答");
  assert.deepEqual(message.content, before);
});

test("error 自行结束流，result() 返回事件中的同一条消息", async () => {
  const stream = new AssistantMessageEventStream();
  const failed = assistantMessage([], "error", { errorMessage: "socket reset" });
  stream.push({ type: "error", reason: "error", error: failed });
  const types: ModelEvent["type"][] = [];
  for await (const event of stream) types.push(event.type);
  assert.deepEqual(types, ["error"]);
  const result = await stream.result();
  assert.equal(result, failed);
  assert.equal(result.errorMessage, "socket reset");
});

test("system message 按顺序重放", () => {
  const messages: AgentMessage[] = [
    { role: "system", content: "You are Pi.", sections: { rules: "RULE v1", scratch: "SCRATCH" }, timestamp: 10 },
    userMessage("go"),
    { role: "system", content: "", sections: { rules: "RULE v2", scratch: null }, timestamp: 20 },
    assistantMessage([text("ok")]),
    { role: "system", content: "Prefer small diffs.", timestamp: 30 },
  ];
  const before = structuredClone(messages);
  assert.deepEqual(currentSystemMessage(messages), {
    role: "system",
    content: "You are Pi.\n\nPrefer small diffs.",
    sections: { rules: "RULE v2" },
    timestamp: 10,
  });
  assert.deepEqual(messages, before);
});

test("system message 渲染跳过空段落和 null", () => {
  const rendered = systemMessageText({ role: "system", content: "A", sections: { empty: "", gone: null, b: "B" }, timestamp: 1 });
  assert.equal(rendered, "A\n\nB");
});
