// Chapter 02's EventStream and chapter 03's AssistantMessageEventStream (STREAM-*, AMS-*).
import type { AssistantMessage, ModelEvent, ModelStream } from "./types.js";

/**
 * A buffered, single-consumer stream of events that ends at its first terminal event
 * (or at end()), with result() extracted from that terminal event.
 */
export class EventStream<T, R> implements AsyncIterable<T> {
  readonly #isTerminal: (event: T) => boolean;
  readonly #extractResult: (event: T) => R;
  #buffer: T[] = [];
  #waiters: Array<() => void> = [];
  #closed = false;
  #settled = false;
  #resolveResult!: (value: R) => void;
  readonly #result: Promise<R>;

  constructor(isTerminal: (event: T) => boolean, extractResult: (event: T) => R) {
    this.#isTerminal = isTerminal;
    this.#extractResult = extractResult;
    this.#result = new Promise<R>((resolve) => {
      this.#resolveResult = resolve;
    });
  }

  /** Deliver an event; the first terminal one settles result() and closes the stream. */
  push(event: T): void {
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
  end(result?: R): void {
    this.#closed = true;
    if (result !== undefined) this.#settle(result);
    this.#wake();
  }

  result(): Promise<R> {
    return this.#result;
  }

  async *[Symbol.asyncIterator](): AsyncGenerator<T, void, undefined> {
    while (true) {
      if (this.#buffer.length > 0) {
        yield this.#buffer.shift() as T;
      } else if (this.#closed) {
        return;
      } else {
        await new Promise<void>((resolve) => this.#waiters.push(resolve));
      }
    }
  }

  #settle(value: R): void {
    // Only the first settlement counts: a later end(x) leaves result() alone.
    if (this.#settled) return;
    this.#settled = true;
    this.#resolveResult(value);
  }

  #wake(): void {
    const waiters = this.#waiters;
    this.#waiters = [];
    for (const wake of waiters) wake();
  }
}

/** A stream of model events ending at done or error; its result is that event's message. */
export class AssistantMessageEventStream extends EventStream<ModelEvent, AssistantMessage> implements ModelStream {
  constructor() {
    super(
      (event) => event.type === "done" || event.type === "error",
      (event) => {
        if (event.type === "done") return event.message;
        if (event.type === "error") return event.error;
        throw new Error("非终态事件不能生成最终消息");
      },
    );
  }
}
