// Reference of the course's chapter 04 ScriptedModel (packages/pi-course/src/scripted-model.ts),
// for lab isolation (lab_isolation.mjs) and for the course adapter's chapter 07 cases: the model
// a chapter 07 loop talks to is this one, never the student's own. Written from spec/spec.md
// section 7 (SM-*), as reference_impl/scripted_model.py is. finish, play and terminalMessage are
// exported for the course adapter's held model turns (agent_ops.mjs), as the Python binding uses
// reference_impl.scripted_model's.

import { AssistantMessageEventStream } from "./event-stream.mjs";
import { assistantMessage } from "./types.mjs";

const EXHAUSTED_MESSAGE = "ScriptedModel 没有更多响应";
export const ABORTED_MESSAGE = "Request was aborted";

/** The message a turn ends with, sharing nothing with the script (SM-TURN-*). */
export function terminalMessage(turn) {
  if ("role" in turn) return structuredClone(turn);
  const content = turn.partialText ? [{ type: "text", text: turn.partialText }] : [];
  return assistantMessage(content, turn.stopReason, { errorMessage: turn.errorMessage });
}

/** Push the terminal event that carries `message` (done, or error for error/aborted), then end. */
export function finish(stream, message) {
  const reason = message.stopReason;
  stream.push(reason === "error" || reason === "aborted" ? { type: "error", reason, error: message } : { type: "done", reason, message });
  stream.end(message);
}

/** SM-PLAY-*: start, one text_delta per text block, toolcall_delta then toolcall_end per call, the terminal. */
export function play(stream, message) {
  const partial = { ...structuredClone(message), content: [], stopReason: "stop" };
  stream.push({ type: "start", partial: structuredClone(partial) });
  message.content.forEach((block, contentIndex) => {
    if (block.type === "text") {
      partial.content = [...partial.content, structuredClone(block)];
      stream.push({ type: "text_delta", contentIndex, delta: block.text, partial: structuredClone(partial) });
      return;
    }
    const call = structuredClone(block);
    // Until the call is complete only its raw text has arrived: its arguments stay empty.
    const delta = call.rawArguments ?? JSON.stringify(call.arguments) ?? "null";
    partial.content = [...partial.content, { ...call, arguments: {}, rawArguments: delta }];
    stream.push({ type: "toolcall_delta", contentIndex, delta, partial: structuredClone(partial) });
    partial.content[contentIndex] = call;
    stream.push({ type: "toolcall_end", contentIndex, toolCall: structuredClone(call), partial: structuredClone(partial) });
  });
  finish(stream, message);
}

/** Plays `turns[n-1]` on the n-th call to stream() and records every request (a deep copy). */
export class ScriptedModel {
  #turns;
  #cursor = 0;
  requests = [];

  constructor(turns) {
    this.#turns = turns;
  }

  /** The stream of the next turn; its events come in a microtask, where the signal is read (SM-ABORT-*). */
  stream(context, options = {}) {
    const stream = new AssistantMessageEventStream();
    this.requests.push(structuredClone(context));
    const turn = this.#turns[this.#cursor++];
    queueMicrotask(() => {
      if (options?.signal?.aborted) finish(stream, assistantMessage([], "aborted", { errorMessage: ABORTED_MESSAGE }));
      else if (turn === undefined || turn === null) finish(stream, assistantMessage([], "error", { errorMessage: EXHAUSTED_MESSAGE }));
      else play(stream, terminalMessage(turn));
    });
    return stream;
  }
}
