// Reference of the course's chapter 02 EventStream and chapter 03 AssistantMessageEventStream
// (packages/pi-course/src/event-stream.ts), for lab isolation (lab_isolation.mjs): a lab 4
// ScriptedModel that imports "./event-stream.js" plays through these. Written from
// spec/spec.md (STREAM-*, AMS-*).

/** A buffered stream for one consumer; the first terminal event (or end()) closes it and settles result(). */
export class EventStream {
  #isTerminal;
  #extract;
  #queue = [];
  #wakers = [];
  #open = true;
  #settle;
  #settled = false;
  #result = new Promise((resolve) => {
    this.#settle = resolve;
  });

  constructor(isTerminal, extractResult) {
    this.#isTerminal = isTerminal;
    this.#extract = extractResult;
  }

  /** STREAM-2..4: queue the event unless closed; a terminal one settles result() and closes. */
  push(event) {
    if (!this.#open) return;
    this.#queue.push(event);
    if (this.#isTerminal(event)) {
      this.#open = false;
      this.#resolve(this.#extract(event));
    }
    this.#wakeAll();
  }

  /** STREAM-5: close, idempotently; a value settles result() if nothing did yet. */
  end(result) {
    this.#open = false;
    if (result !== undefined) this.#resolve(result);
    this.#wakeAll();
  }

  result() {
    return this.#result;
  }

  async *[Symbol.asyncIterator]() {
    for (;;) {
      if (this.#queue.length > 0) yield this.#queue.shift();
      else if (!this.#open) return;
      else await new Promise((wake) => this.#wakers.push(wake));
    }
  }

  #resolve(value) {
    if (this.#settled) return;
    this.#settled = true;
    this.#settle(value);
  }

  #wakeAll() {
    for (const wake of this.#wakers.splice(0)) wake();
  }
}

const TERMINAL = { done: "message", error: "error" };

/** AMS-1..3: ends at `done` (result: its message) or `error` (result: its error message). */
export class AssistantMessageEventStream extends EventStream {
  constructor() {
    super(
      (event) => Object.hasOwn(TERMINAL, event.type),
      (event) => {
        if (!Object.hasOwn(TERMINAL, event.type)) throw new Error(`${event.type} is not a terminal event`);
        return event[TERMINAL[event.type]];
      },
    );
  }
}
