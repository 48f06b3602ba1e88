// Reference of the course's chapter 09 agent loop (packages/pi-course/src/agent-loop.ts at
// 0454269), for lab isolation (lab_isolation.mjs): a chapter 09 Agent that imports
// "./agent-loop.js" gets this one, so a chapter 07 bug costs no lab 9.x point. Written from
// spec/spec.md sections 10 (LOOP-*) and 11.6 (AGENT-LOOP-*, AGENT-QUEUE-2/3, AGENT-ABORT-4), as
// reference_impl/agent_loop.py's QueueingLoopRun is.

// LOOP-BATCH-3's failure result is TOOL-EXEC-2's: the reference executor's own.
import { executeToolCall as executeCoreToolCall, failedResult as failed } from "./tool.mjs";
import { assistantMessage } from "./types.mjs";

const DEFAULT_MAX_STEPS = 32; // LOOP-LIMIT-2

const messageOf = (error) => (error instanceof Error ? error.message : String(error));

/** LOOP-SKIP-1/2: why a call of a turn that runs no tool was not executed. */
function skipped(call, reason) {
  const why =
    reason === "length" ? "the model response was truncated" : reason === "unexpected-stop" ? "the model returned stop with a tool call" : `the model turn ended with ${reason}`;
  return {
    role: "toolResult",
    toolCallId: call.id,
    toolName: call.name,
    content: [{ type: "text", text: `Tool call was not executed because ${why}.` }],
    details: { skipped: true, reason },
    isError: true,
    timestamp: Date.now(),
  };
}

/** AGENT-LOOP-3: the result as a structured clone, or its call's failure when it cannot be cloned. */
function cloned(call, result) {
  try {
    return structuredClone(result);
  } catch {
    return failed(call, new Error("tool result is not structured-cloneable"));
  }
}

/** LOOP-*, AGENT-LOOP-*: ask, run the batch, take the queues, until a turn, the signal or maxSteps ends the run. */
export async function runAgentLoop(options) {
  const messages = structuredClone(options.context.messages); // LOOP-ISO-1
  const limit = options.maxSteps ?? DEFAULT_MAX_STEPS;
  const execute = options.executeToolCall ?? ((call, context) => executeCoreToolCall(call, options.tools, context));
  const emit = (event) => options.onEvent?.(event);
  const aborted = () => options.signal?.aborted === true;
  const take = (queue) => options[queue]?.() ?? []; // AGENT-LOOP-1
  let ended = false;
  const finish = (reason, steps) => {
    if (!ended) {
      ended = true;
      emit({ type: "turn_end", reason }); // LOOP-END-2
    }
    return { reason, messages, steps };
  };
  const skipAll = (calls, reason) => {
    for (const call of calls) {
      const result = skipped(call, reason);
      messages.push(result);
      emit({ type: "tool_skipped", result });
    }
  };

  for (let step = 1; step <= limit; step += 1) {
    if (aborted()) return finish("aborted", step - 1); // LOOP-ABORT-1
    let assistant;
    try {
      const stream = options.model.stream({ messages, tools: options.tools.definitions() }, { signal: options.signal });
      for await (const event of stream) emit({ type: "model_event", event });
      assistant = structuredClone(await stream.result()); // AGENT-LOOP-4
    } catch (error) {
      // AGENT-LOOP-2: a failing turn is the run's last assistant message, not a rejection.
      const reason = aborted() ? "aborted" : "error";
      const message = assistantMessage([], reason, { errorMessage: messageOf(error) });
      messages.push(message);
      emit({ type: "assistant_message", message });
      return finish(reason, step);
    }
    messages.push(assistant);
    emit({ type: "assistant_message", message: assistant });
    const calls = assistant.content.filter((block) => block.type === "toolCall");
    const reason = assistant.stopReason;
    if (reason === "length" || reason === "error" || reason === "aborted") {
      skipAll(calls, reason);
      return finish(reason, step);
    }
    if (reason === "stop") {
      if (calls.length > 0) {
        skipAll(calls, "unexpected-stop");
        return finish("error", step);
      }
      if (aborted()) return finish("aborted", step); // AGENT-ABORT-4: before either queue
      // AGENT-QUEUE-3: steering first; follow-ups only when nothing steers.
      const queued = take("takeSteeringMessages");
      if (queued.length === 0) queued.push(...take("takeFollowUpMessages"));
      if (queued.length === 0) return finish("stop", step);
      messages.push(...queued);
      continue;
    }
    if (calls.length === 0) return finish("error", step); // LOOP-SKIP-3
    for (const call of calls) emit({ type: "tool_start", call });
    // LOOP-BATCH-1/2/3: all at once, tool_end as each settles, results in call order, none lost.
    const results = await Promise.all(
      calls.map(async (call) => {
        let result;
        try {
          const reportProgress = (content) => emit({ type: "tool_progress", callId: call.id, content });
          result = cloned(call, await execute(call, { signal: options.signal, reportProgress }));
        } catch (error) {
          result = failed(call, error);
        }
        emit({ type: "tool_end", result });
        return result;
      }),
    );
    messages.push(...results);
    if (aborted()) return finish("aborted", step); // LOOP-ABORT-2
    messages.push(...take("takeSteeringMessages")); // AGENT-QUEUE-2
  }
  return finish("maxSteps", limit); // LOOP-LIMIT-1
}
