// The adapter's own actors in chapter 05 scenarios (provider_ops.mjs): a scripted transport, a
// scripted fetch with its SSE body, a consumer that pauses. The JavaScript twin of
// conformance/adapters/provider_scripts.py: the same scripts, the same records.
//
// Nothing here is student code: the transport plays a case's `script` and the fetch serves a
// case's SSE body, each recording what it was asked. Both wait for an abort only through the
// scenario's own switch (fired by the `abort` step), so no implementation's signal needs
// listeners; a wait that nothing ends leaves the event loop idle, and the step reports it
// instead of hanging (settling.mjs).
//
// No dependencies: Node.js 20 built-ins only.

import { isObject, waitFor } from "./observation.mjs";

// Taken now, before any student module loads: code under test cannot swap them for the adapter.
const { DOMException, Headers, ReadableStream, Response, TextDecoder, TextEncoder } = globalThis;
const parseJson = JSON.parse;

const ABORTED_MESSAGE = "Request was aborted";

/** The scenario's abort: `promise` resolves once `fire()` is called (by the `abort` step, or a pre-aborted signal). */
export function abortSwitch() {
  let fire;
  const promise = new Promise((resolve) => {
    fire = resolve;
  });
  return { promise, fire: () => fire() };
}

/** `same` for the very object, `absent` for none, `other` for another one. */
export function identity(given, expected) {
  if (given === undefined || given === null) return "absent";
  return expected !== undefined && expected !== null && given === expected ? "same" : "other";
}

/** A private copy of what the student handed over; the value itself when it cannot be cloned (a function inside). */
function copied(value) {
  try {
    return structuredClone(value);
  } catch {
    return value;
  }
}

// ---------------------------------------------------------------------------------------
// the scripted transport (lab 5.2)
// ---------------------------------------------------------------------------------------

/** A transport that plays `script` (`chunk`, `throw`, `wait_for_abort`) and records each request with its signal. */
export class ScriptedTransport {
  /** Each request (a copy, taken when it arrived) and the signal it came with. */
  calls = [];

  constructor(script, aborted) {
    // An own function, not a method: it works however the student calls it.
    this.stream = (request, options) => {
      this.calls.push([copied(request), isObject(options) ? options.signal : undefined]);
      return play(script, aborted);
    };
  }
}

async function* play(script, aborted) {
  for (const action of script) {
    if ("chunk" in action) yield structuredClone(action.chunk);
    else if ("throw" in action) throw new Error(action.throw);
    else await aborted.promise;
  }
}

// ---------------------------------------------------------------------------------------
// the scripted fetch (lab 5.3)
// ---------------------------------------------------------------------------------------

/** The body's bytes: `body` verbatim, or one `data: PAYLOAD\n\n` event per payload (a string as it is, else its JSON text). */
export function sseBody(spec) {
  if ("body" in spec) return new TextEncoder().encode(String(spec.body));
  const payloads = Array.isArray(spec.payloads) ? spec.payloads : [];
  const texts = payloads.map((item) => (typeof item === "string" ? item : JSON.stringify(item)));
  return new TextEncoder().encode(texts.map((text) => `data: ${text}\n\n`).join(""));
}

/** `middle` (the default): two halves; `none`: one piece; a list of byte offsets: cut at each. */
export function pieces(body, split) {
  if (split === "none") return [body];
  const offsets = Array.isArray(split) ? split.map((offset) => Number.parseInt(String(offset), 10)) : [Math.floor(body.length / 2)];
  const bounds = [0, ...offsets, body.length];
  return bounds.slice(1).map((end, index) => body.slice(bounds[index], end));
}

/** The body as a ReadableStream read piece by piece; `then: hang` keeps it open until the abort, then fails it as a real body does. */
function bodyStream(spec, aborted) {
  const parts = pieces(sseBody(spec), spec.split);
  let next = 0;
  return new ReadableStream(
    {
      async pull(controller) {
        if (next < parts.length) {
          controller.enqueue(parts[next++]);
        } else if (spec.then === "hang") {
          await aborted.promise;
          controller.error(new DOMException(ABORTED_MESSAGE, "AbortError"));
        } else {
          controller.close();
        }
      },
    },
    { highWaterMark: 0 }, // a piece is produced only when read: each read gets one piece
  );
}

/** `fetch(url, init)`: records the call, then rejects (`throw`) or resolves with a Response serving the case's SSE body. */
export class ScriptedFetch {
  calls = [];

  constructor(spec, aborted) {
    this.fetch = async (url, init) => {
      this.calls.push([url, init]);
      if ("throw" in spec) throw new Error(spec.throw);
      const status = Number.parseInt(String(spec.status ?? 200), 10);
      const body = spec.no_body ? null : bodyStream(spec, aborted);
      return new Response(body, { status, headers: new Headers({ "content-type": "text/event-stream" }) });
    };
  }
}

function initField(init, name) {
  return isObject(init) ? init[name] : undefined;
}

/** The headers of a fetch call as a plain object, names lowercased: from a plain object, pairs or a Headers. */
function headerEntries(headers) {
  if (headers === undefined || headers === null) return [];
  if (headers instanceof Headers) return [...headers.entries()];
  if (Array.isArray(headers)) return headers.filter(Array.isArray).map(([name, value]) => [name, value]);
  return isObject(headers) ? Object.entries(headers) : [];
}

/** A request body as observed: its parsed JSON, else its text (bytes are decoded first; anything else is null). */
function parsedBody(body) {
  let text = body;
  if (body instanceof Uint8Array || body instanceof ArrayBuffer) text = new TextDecoder().decode(body);
  if (typeof text !== "string") return null;
  try {
    return parseJson(text);
  } catch {
    return typeof body === "string" ? body : null;
  }
}

/** One fetch call as observed: url, method, headers (names lowercased), body (parsed JSON, else its text), signal. */
export function fetchRecord(url, init, signal) {
  const method = initField(init, "method");
  return {
    url: String(url),
    method: method === undefined ? null : String(method),
    headers: Object.fromEntries(headerEntries(initField(init, "headers")).map(([name, value]) => [String(name).toLowerCase(), String(value)])),
    body: parsedBody(initField(init, "body")),
    signal: identity(initField(init, "signal"), signal),
  };
}

// ---------------------------------------------------------------------------------------
// the consumer
// ---------------------------------------------------------------------------------------

/** Iterates a stream in a task of its own, pausing after the first item of a given type when asked to. */
export class PausingConsumer {
  received = [];
  done = false; // the iteration is over (ended or failed)
  failed = false;
  error = undefined;
  #task = null;
  #until = null;
  #resume = null;
  #stop = () => {};

  constructor(stream, typeOf) {
    this.stream = stream;
    this.typeOf = typeOf;
  }

  /** Take items until one of type `until` (null: to the end), the stream ends, or nothing more can come. */
  async advance(until, deadlineS) {
    this.#until = until;
    const stopped = new Promise((resolve) => {
      this.#stop = resolve;
    });
    if (this.#task === null) {
      this.#task = this.#run().then(
        () => this.#end(false, undefined),
        (error) => this.#end(true, error),
      );
    } else if (this.done) {
      return;
    } else if (this.#resume !== null) {
      const resume = this.#resume;
      this.#resume = null;
      resume();
    }
    await waitFor(stopped, deadlineS);
  }

  #end(failed, error) {
    Object.assign(this, { done: true, failed, error });
    this.#stop();
  }

  async #run() {
    for await (const item of this.stream) {
      this.received.push(item);
      if (this.#until !== null && this.typeOf(item) === this.#until) {
        await new Promise((resolve) => {
          this.#resume = resolve;
          this.#stop();
        });
      }
    }
  }
}
