// Chapter 04's focused tests: two scripted turns, request snapshots, and the three failures.
import assert from "node:assert/strict";
import test from "node:test";

import { ScriptedModel } from "../src/scripted-model.js";
import { assistantMessage, text, textOf, userMessage } from "../src/types.js";
import type { AgentContext, ModelEvent, ModelStream } from "../src/types.js";

async function collect(stream: ModelStream): Promise<ModelEvent[]> {
  const events: ModelEvent[] = [];
  for await (const event of stream) events.push(event);
  return events;
}

test("脚本消息：两个 turn 依次播放，请求是调用时的快照", { timeout: 1000 }, async () => {
  const model = new ScriptedModel([
    assistantMessage([text("先看"), { type: "toolCall", id: "c1", name: "read", arguments: { path: "README.md" } }], "toolUse"),
    assistantMessage([text("第二轮")]),
  ]);
  const firstContext: AgentContext = { messages: [userMessage("请求一")] };
  const first = model.stream(firstContext);
  firstContext.messages.push(userMessage("事后追加"));
  const events = await collect(first);
  assert.deepEqual(
    events.map((event) => event.type),
    ["start", "text_delta", "toolcall_delta", "toolcall_end", "done"],
  );
  const delta = events[2];
  assert.ok(delta?.type === "toolcall_delta");
  assert.deepEqual(delta.partial.content, [
    text("先看"),
    { type: "toolCall", id: "c1", name: "read", arguments: {}, rawArguments: '{"path":"README.md"}' },
  ]);
  assert.equal(textOf(await first.result()), "先看");
  const second = model.stream({ messages: [userMessage("请求二")] });
  assert.deepEqual((await collect(second)).map((event) => event.type), ["start", "text_delta", "done"]);
  assert.equal(textOf(await second.result()), "第二轮");
  assert.equal(model.requests.length, 2);
  assert.equal(model.requests[0]?.messages.length, 1);
});

test("显式错误 turn 保留已生成的文本", { timeout: 1000 }, async () => {
  const model = new ScriptedModel([{ stopReason: "error", partialText: "正在", errorMessage: "rate limited" }]);
  const stream = model.stream({ messages: [] });
  assert.deepEqual((await collect(stream)).map((event) => event.type), ["start", "text_delta", "error"]);
  const result = await stream.result();
  assert.equal(result.stopReason, "error");
  assert.equal(result.errorMessage, "rate limited");
  assert.equal(textOf(result), "正在");
});

test("脚本耗尽和预取消都只产生一个 error", { timeout: 1000 }, async () => {
  const model = new ScriptedModel([assistantMessage([text("不会播放")])]);
  const controller = new AbortController();
  controller.abort();
  const aborted = model.stream({ messages: [] }, { signal: controller.signal });
  const exhausted = model.stream({ messages: [] });
  for (const [stream, reason] of [
    [aborted, "aborted"],
    [exhausted, "error"],
  ] as const) {
    const events = await collect(stream);
    assert.deepEqual(events.map((event) => event.type), ["error"]);
    assert.equal((await stream.result()).stopReason, reason);
  }
  assert.equal((await exhausted.result()).errorMessage, "ScriptedModel 没有更多响应");
  assert.equal(model.requests.length, 2);
});
