// Chapter 04: ScriptedModel, a test double that plays a fixed script of turns (SM-*).
import { AssistantMessageEventStream } from "./event-stream.js";
import { assistantMessage, text } from "./types.js";

export const EXHAUSTED_MESSAGE = "ScriptedModel 没有更多响应";
export const ABORTED_MESSAGE = "Request was aborted";

export class ScriptedModel {
  requests = [];
  #turns;
  #cursor = 0;

  constructor(turns) {
    this.#turns = turns;
  }

  stream(context, options = {}) {
    const stream = new AssistantMessageEventStream();
    // Synchronous part: snapshot the request and choose the turn (SM-REQ-1, SM-CURSOR-1).
    this.requests.push(context);
    const turn = this.#turns[this.#cursor++];
    // Deferred part: every check happens after stream() has returned (SM-DEFER-1).
    queueMicrotask(() => {
      if (options.signal?.aborted) {
        finish(stream, assistantMessage([], "aborted", { errorMessage: ABORTED_MESSAGE }));
      } else if (turn === undefined) {
        finish(stream, assistantMessage([], "error", { errorMessage: EXHAUSTED_MESSAGE }));
      } else {
        play(stream, terminalMessage(turn));
      }
    });
    return stream;
  }
}

/** The message a turn ends with; never shares objects with the script (SM-DONE-2). */
function terminalMessage(turn) {
  if ("role" in turn) return structuredClone(turn);
  const content = turn.partialText ? [text(turn.partialText)] : [];
  return assistantMessage(content, turn.stopReason, { errorMessage: turn.errorMessage });
}

/** SM-PLAY-1..3: start, one delta (or delta + end) per block, then the terminal event. */
function play(stream, message) {
  const partial = { ...structuredClone(message), content: [], stopReason: "stop" };
  // Every event carries its own snapshot of the partial.
  stream.push({ type: "start", partial: structuredClone(partial) });
  message.content.forEach((block, contentIndex) => {
    if (block.type === "text") {
      partial.content.push(structuredClone(block));
      stream.push({ type: "text_delta", contentIndex, delta: block.text, partial: structuredClone(partial) });
      return;
    }
    const delta = block.rawArguments ?? JSON.stringify(block.arguments);
    partial.content.push({ type: "toolCall", id: block.id, name: block.name, arguments: {}, rawArguments: delta });
    stream.push({ type: "toolcall_delta", contentIndex, delta, partial: structuredClone(partial) });
    partial.content[contentIndex] = structuredClone(block);
    stream.push({ type: "toolcall_end", contentIndex, toolCall: structuredClone(block), partial: structuredClone(partial) });
  });
  finish(stream, message);
}

/** Push the terminal event carrying `message`, then close the stream. */
function finish(stream, message) {
  const reason = message.stopReason;
  if (reason === "error" || reason === "aborted") {
    stream.push({ type: "error", reason, error: message });
  } else {
    stream.push({ type: "done", reason, message });
  }
  stream.end(message);
}
