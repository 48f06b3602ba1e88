// Chapter 02's EventStream and chapter 03's AssistantMessageEventStream (STREAM-*, AMS-*).

/**
 * A buffered, single-consumer stream of events that ends at its first terminal event
 * (or at end()), with result() extracted from that terminal event.
 */
export class EventStream {
  #isTerminal;
  #extractResult;
  #buffer = [];
  #waiters = [];
  #closed = false;
  #settled = false;
  #resolveResult;
  #result;

  constructor(isTerminal, extractResult) {
    this.#isTerminal = isTerminal;
    this.#extractResult = extractResult;
    this.#result = new Promise((resolve) => {
      this.#resolveResult = resolve;
    });
  }

  /** Deliver an event; the first terminal one settles result() and closes the stream. */
  push(event) {
    // STREAM-4: nothing after the first terminal event (or end()) is delivered.
    if (this.#closed) return;
    this.#buffer.push(event);
    if (this.#isTerminal(event)) {
      this.#closed = true;
      this.#settle(this.#extractResult(event));
    }
    this.#wake();
  }

  /** Close the stream; never throws, may be called again (STREAM-5). */
  end(result) {
    this.#closed = true;
    if (result !== undefined) this.#settle(result);
    this.#wake();
  }

  result() {
    return this.#result;
  }

  async *[Symbol.asyncIterator]() {
    while (true) {
      if (this.#buffer.length > 0) {
        yield this.#buffer.shift();
      } else if (this.#closed) {
        return;
      } else {
        await new Promise((resolve) => this.#waiters.push(resolve));
      }
    }
  }

  #settle(value) {
    // Only the first settlement counts: a later end(x) leaves result() alone.
    if (this.#settled) return;
    this.#settled = true;
    this.#resolveResult(value);
  }

  #wake() {
    const waiters = this.#waiters;
    this.#waiters = [];
    for (const wake of waiters) wake();
  }
}

/** A stream of model events ending at done or error; its result is that event's message. */
export class AssistantMessageEventStream extends EventStream {
  constructor() {
    super(
      (event) => event.type === "done" || event.type === "error",
      (event) => {
        if (event.type === "done") return structuredClone(event.message);
        if (event.type === "error") return structuredClone(event.error);
        throw new Error("非终态事件不能生成最终消息");
      },
    );
  }
}
