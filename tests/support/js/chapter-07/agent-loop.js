// Chapter 07: the agent loop (runAgentLoop). Plain JavaScript written from spec/spec.md
// section 10 (LOOP-*); the course's LoopEvent, AgentRunResult and AgentLoopOptions types
// leave no trace here. The default executor is chapter 06's executeToolCall.
import { executeToolCall as coreExecuteToolCall } from "./tool.js";

const DEFAULT_MAX_STEPS = 32;

/** LOOP-SKIP-1/2: why a call of a turn that runs no tool was not executed. */
const EXPLANATIONS = {
  length: "the model response was truncated",
  "unexpected-stop": "the model returned stop with a tool call",
};

function skipped(call, reason) {
  const why = EXPLANATIONS[reason] ?? `the model turn ended with ${reason}`;
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

/** LOOP-BATCH-3: an executor's throw as a paired result, the message only. */
function failed(call, error) {
  const message = error instanceof Error ? error.message : String(error);
  return {
    role: "toolResult",
    toolCallId: call.id,
    toolName: call.name,
    content: [{ type: "text", text: `Tool ${call.name} failed: ${message}` }],
    details: { error: message },
    isError: true,
    timestamp: Date.now(),
  };
}

class Run {
  constructor(options) {
    this.options = options;
    this.transcript = structuredClone(options.context.messages);
    this.execute = options.executeToolCall ?? ((call, context) => coreExecuteToolCall(call, options.tools, context));
    this.ended = false;
  }

  emit(event) {
    if (this.options.onEvent) this.options.onEvent(event);
  }

  /** LOOP-END-2: one turn_end, the run's last event. */
  end(reason, steps) {
    if (!this.ended) {
      this.ended = true;
      this.emit({ type: "turn_end", reason });
    }
    return { reason, messages: this.transcript, steps };
  }

  /** LOOP-REQ-1, LOOP-TURN-1: one request, its events, its assistant message appended. */
  async ask() {
    const request = { messages: this.transcript, tools: this.options.tools.definitions() };
    const stream = this.options.model.stream(request, { signal: this.options.signal });
    for await (const event of stream) this.emit({ type: "model_event", event });
    const message = await stream.result();
    this.transcript.push(message);
    this.emit({ type: "assistant_message", message });
    return message;
  }

  /** Skipped results for every call, appended and emitted in order. */
  skipAll(calls, reason) {
    for (const call of calls) {
      const result = skipped(call, reason);
      this.transcript.push(result);
      this.emit({ type: "tool_skipped", result });
    }
  }

  /** The reason a turn ends the run, or null when its calls are to run (LOOP-END-1, LOOP-SKIP-*). */
  verdict(message, calls) {
    const reason = message.stopReason;
    if (reason === "length" || reason === "error" || reason === "aborted") {
      this.skipAll(calls, reason);
      return reason;
    }
    if (reason === "stop") {
      if (calls.length === 0) return "stop";
      this.skipAll(calls, "unexpected-stop");
      return "error";
    }
    return calls.length === 0 ? "error" : null;
  }

  /** One call: its result, or a failure result when the executor throws (LOOP-TOOL-*, LOOP-BATCH-3). */
  async runCall(call) {
    const reportProgress = (content) => this.emit({ type: "tool_progress", callId: call.id, content });
    let result;
    try {
      result = await this.execute(call, { signal: this.options.signal, reportProgress });
    } catch (error) {
      result = failed(call, error);
    }
    this.emit({ type: "tool_end", result });
    return result;
  }

  /** LOOP-BATCH-1/2: every call starts at once; the results go in in call order. */
  async batch(calls) {
    for (const call of calls) this.emit({ type: "tool_start", call });
    const results = await Promise.all(calls.map((call) => this.runCall(call)));
    this.transcript.push(...results);
  }
}

/** LOOP-*: ask, run the batch, repeat, until a turn, the signal or maxSteps ends the run. */
export async function runAgentLoop(options) {
  const run = new Run(options);
  const limit = options.maxSteps ?? DEFAULT_MAX_STEPS;
  for (let step = 1; step <= limit; step += 1) {
    if (options.signal?.aborted) return run.end("aborted", step - 1);
    const message = await run.ask();
    const calls = message.content.filter((block) => block.type === "toolCall");
    const reason = run.verdict(message, calls);
    if (reason !== null) return run.end(reason, step);
    await run.batch(calls);
    if (options.signal?.aborted) return run.end("aborted", step);
  }
  return run.end("maxSteps", limit);
}
