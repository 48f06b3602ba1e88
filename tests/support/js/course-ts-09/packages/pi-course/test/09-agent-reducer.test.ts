// Chapter 09's focused test of the reducer (lab 9.1): a run's start, its loop events, a late event, its end.
import assert from "node:assert/strict";
import test from "node:test";

import { reduceAgentState } from "../src/agent.js";
import type { AgentState } from "../src/agent.js";
import { assistantMessage, userMessage } from "../src/types.js";

const idle: AgentState = { status: "idle", messages: [], streamingText: "", pendingToolCallIds: [], diagnostics: [] };

test("reducer 派生运行状态，不修改输入", () => {
  const start = userMessage("hi");
  const running = reduceAgentState(idle, { type: "run_start", runId: 1, message: start });
  assert.equal(running.status, "running");
  assert.deepEqual(running.messages, [start]);
  assert.notEqual(running.messages[0], start);
  const delta = { type: "text_delta", contentIndex: 0, delta: "hel", partial: assistantMessage([]) } as const;
  const streamed = reduceAgentState(running, { type: "loop", runId: 1, event: { type: "model_event", event: delta } });
  assert.equal(streamed.streamingText, "hel");
  assert.equal(running.streamingText, "");
  const late = reduceAgentState(streamed, { type: "loop", runId: 2, event: { type: "turn_end", reason: "stop" } });
  assert.equal(late, streamed);
  const done = reduceAgentState(streamed, { type: "run_end", runId: 1, result: { reason: "stop", messages: [start], steps: 1 } });
  assert.deepEqual(done, { status: "idle", messages: [start], lastReason: "stop", streamingText: "", pendingToolCallIds: [], diagnostics: [] });
});
