// What the Node.js adapters (pi_course_adapter.mjs, pi_ai_adapter.mjs) share: the JSON-lines
// protocol server of spec/protocol.md, the failures that map onto its error kinds, JSON views
// of implementation values, stray errors from deferred work, and the waiting and consuming
// that scenario steps do. Each adapter keeps only how it loads its implementation, its
// operations and its scenario players, so both profiles observe streams the same way.
//
// No dependencies: Node.js 20 built-ins only.

// channel.mjs first: it captures the built-ins the channel relies on before anything else runs.
import { parseJson, startSealing, stringifyJson, writeLine } from "./channel.mjs";
import { createInterface } from "node:readline";
import { neverSettles, settleOrIdle } from "./settling.mjs";

const PROTOCOL = 1;
const DEFAULT_PROFILE = "course";
const DEFAULT_SETTLE_DEADLINE_S = 0.25;
// Event-loop turns a settle step yields; each turn also drains every queued microtask.
const SETTLE_TICKS = 20;

/** An identity candidate that nothing can equal (observeResult's `same_object_as`). */
export const NO_OBJECT = Symbol("no object");

/** The field of an assistant stream's terminal event that carries its message. */
export const ASSISTANT_TERMINAL_FIELDS = new Map([
  ["done", "message"],
  ["error", "error"],
]);

/** How a model-call scenario's `stream` step may pass an abort signal. */
const SIGNAL_MODES = new Set(["none", "aborted", "controller"]);

// ---------------------------------------------------------------------------------------
// failures: each maps onto one kind of error response
// ---------------------------------------------------------------------------------------

/** The implementation lacks what the operation needs: the case is skipped. */
export class NotImplemented extends Error {}
/** The implementation threw (or returned a non-JSON value) where a value is expected. */
export class Threw extends Error {}
/** The request cannot be played (bad request, unknown action): the case errors. */
export class ProtocolError extends Error {}
/** The operation needs a module whose loading killed an earlier process of this run: the case errors. */
export class LoadFailed extends Error {}

// ---------------------------------------------------------------------------------------
// loading implementation modules, with notices (spec/protocol.md, "Loading notices")
// ---------------------------------------------------------------------------------------

// Set by serve(): writes one protocol line. Until then (no server), notices go nowhere.
let writeNotice = () => {};
// Modules the runner said must not be loaded again (the handshake's failed_modules).
let failedModules = {};

/**
 * Import an implementation module, telling the runner before and after: if loading it kills
 * this process (or writes on stdout), the runner charges that to the module, not to the case,
 * and the next process is told not to load it again. A module named in the handshake's
 * `failed_modules` is not imported: the promise rejects with LoadFailed and the runner's words.
 */
export function importWatched(name, url) {
  if (Object.hasOwn(failedModules, name)) return Promise.reject(new LoadFailed(failedModules[name]));
  writeNotice({ notice: "loading", module: name });
  const loaded = () => writeNotice({ notice: "loaded", module: name });
  return import(url).finally(loaded);
}

/** `Name: message` of anything implementation code threw (binding.py's describe_exception). */
export function describe(error) {
  if (error instanceof Error || (error !== null && typeof error === "object" && "message" in error)) {
    const name = error.name || error.constructor?.name || "Error";
    return `${name}: ${error.message}`;
  }
  return `non-Error value thrown: ${safeString(error)}`;
}

/** A short text form of any value, even one whose toString throws. */
export function safeString(value) {
  try {
    return typeof value === "string" ? JSON.stringify(value) : String(value);
  } catch {
    return Object.prototype.toString.call(value);
  }
}

/** The course's placeholders throw "not implemented in lab 3.1" and the like. */
export function isNotImplemented(error) {
  const message = error !== null && typeof error === "object" ? error.message : error;
  return typeof message === "string" && /not implemented/i.test(message);
}

/** null, or what `action` threw: a scenario step observes throws instead of failing. */
export function threwFrom(action) {
  try {
    action();
    return null;
  } catch (error) {
    return describe(error);
  }
}

// ---------------------------------------------------------------------------------------
// JSON views of values the implementation produced
// ---------------------------------------------------------------------------------------

/** A detached JSON copy of an implementation value; `undefined` is written as null. */
export function toJson(value, what) {
  let text;
  try {
    // NaN and Infinity have no JSON form (Python's allow_nan=False refuses them too).
    text = stringifyJson(value, (_key, item) => {
      if (typeof item === "number" && !Number.isFinite(item)) throw new TypeError(`${item} is not a JSON number`);
      return item;
    });
  } catch (error) {
    throw new Threw(`${what} is not a JSON value: ${describe(error)}`);
  }
  return text === undefined ? null : parseJson(text);
}

let unfingerprintable = 0;

/**
 * A strict, order-sensitive text form of a value, to tell whether it changed. Unlike plain
 * JSON it also shows keys set to undefined and functions, so adding one counts as a change.
 */
export function fingerprint(value) {
  try {
    return stringifyJson(value, (_key, item) => {
      if (item === undefined) return "\u0000undefined";
      if (typeof item === "function") return `\u0000function ${item.name}`;
      if (typeof item === "number" && !Number.isFinite(item)) return `\u0000${item}`;
      if (typeof item === "bigint") return `\u0000${item}n`;
      return item;
    });
  } catch {
    // A value that cannot be written (a cycle) never equals an earlier fingerprint.
    unfingerprintable += 1;
    return `\u0000unwritable ${unfingerprintable}`;
  }
}

/** A plain object: not null, not an array. */
export function isObject(value) {
  return value !== null && typeof value === "object" && !Array.isArray(value);
}

// ---------------------------------------------------------------------------------------
// errors thrown outside any call we made (deferred implementation code)
// ---------------------------------------------------------------------------------------

// A producer that throws inside queueMicrotask, or a promise nobody awaits, must not kill
// the server: such errors are logged. One that says "not implemented" (lab 4.1 lets the
// deferred producer throw "not implemented in lab 4.1" for aborts, exhaustion and error
// turns) makes the whole request not_implemented, and stops it at its next waiting step
// rather than letting never-ending streams use up the case's timeout.

/** The stray errors seen while one operation runs. */
class StrayErrors {
  placeholder = undefined; // the first stray error that says "not implemented"
  #wake;
  /** Resolves when a placeholder error arrives: waiting steps stop waiting then. */
  seen = new Promise((resolve) => {
    this.#wake = resolve;
  });

  note(error) {
    if (this.placeholder === undefined && isNotImplemented(error)) {
      this.placeholder = error;
      this.#wake();
    }
  }

  throwIfPlaceholder() {
    if (this.placeholder !== undefined) throw new NotImplemented(`deferred work (a microtask or an unawaited promise) threw ${describe(this.placeholder)}`);
  }
}

// Only the server touches this: installStrayErrorHandlers once, resetStrayErrors per operation.
let strays = new StrayErrors();

/** Start a fresh record of stray errors: each operation sees only its own. */
function resetStrayErrors() {
  strays = new StrayErrors();
}

/** Route uncaught exceptions and unhandled rejections to `log` and the current record. */
function installStrayErrorHandlers(log) {
  const onStrayError = (kind) => (error) => {
    log(`${kind} from the implementation: ${error instanceof Error && error.stack ? error.stack : describe(error)}`);
    strays.note(error);
  };
  process.on("uncaughtException", onStrayError("uncaught exception"));
  process.on("unhandledRejection", onStrayError("unhandled rejection"));
}

// ---------------------------------------------------------------------------------------
// waiting: the only places where a scenario yields to the event loop
// ---------------------------------------------------------------------------------------

const tick = () => new Promise((resolve) => setImmediate(resolve));

/** Let deferred work run: queued microtasks, woken consumers, their continuations. */
export async function settle() {
  for (let i = 0; i < SETTLE_TICKS; i += 1) await tick();
  strays.throwIfPlaceholder();
}

/**
 * Wait until `promise` settles, the event loop is idle, or `seconds` pass; true when it
 * settled (settling.mjs). A placeholder error from deferred work ends the wait early.
 */
export function waitFor(promise, seconds) {
  return settleOrIdle(promise, seconds, strays.seen).finally(() => strays.throwIfPlaceholder());
}

/**
 * `[outcome, tracked]`: `outcome` is `{state: "pending"}` until `promise` settles, then
 * `{state: "resolved", value}` or `{state: "rejected", error}`; `tracked` resolves then and
 * never rejects. Callers `await waitFor(tracked, seconds)` themselves, so that no extra
 * microtask turn passes between the end of the wait and what they observe next.
 */
export function track(promise) {
  const outcome = { state: "pending" };
  const tracked = promise.then(
    (value) => Object.assign(outcome, { state: "resolved", value }),
    (error) => Object.assign(outcome, { state: "rejected", error }),
  );
  return [outcome, tracked];
}

/** One `for await` consumer of a stream and what it received so far. */
export class Consumer {
  received = [];
  onEvent = null; // called with the count of events received so far (faux_provider's abort_after)
  task = null; // the iteration's promise, once started
  done = false;
  failed = false;
  error = undefined;

  /** Start iterating (once) and yield until the consumer waits for its next event. */
  async start(stream) {
    if (this.task !== null) return;
    const iterate = async () => {
      for await (const event of stream) {
        this.received.push(event);
        if (this.onEvent) this.onEvent(this.received.length);
      }
    };
    this.task = iterate().then(
      () => {
        this.done = true;
      },
      (error) => {
        this.done = true;
        this.failed = true;
        this.error = error;
      },
    );
    await settle();
  }

  /**
   * Wait (at most the settle deadline) for the iteration to finish, then serialize what the
   * consumer saw. Serializing only now shows a partial that later events kept changing.
   */
  async finish(stream, deadlineS) {
    await this.start(stream);
    await waitFor(this.task, deadlineS);
    const observation = { events: toJson(this.received, "the events"), finished: this.done };
    if (this.failed) {
      observation.finished = false;
      observation.threw = `iteration threw ${describe(this.error)}`;
    }
    return observation;
  }
}

/**
 * Observe `stream.result()` within the settle deadline. `identities` lists, in order, the
 * objects the resolved value may be (`===`, checked before anything is serialized).
 */
export async function observeResult(stream, identities, deadlineS) {
  let promise;
  try {
    promise = Promise.resolve(stream.result());
  } catch (error) {
    return { state: "rejected", error: `result() threw ${describe(error)}`, same_object_as: null };
  }
  const [outcome, tracked] = track(promise);
  await waitFor(tracked, deadlineS);
  if (outcome.state === "pending") return { state: "pending", same_object_as: null };
  if (outcome.state === "rejected") return { state: "rejected", error: describe(outcome.error), same_object_as: null };
  const same = identities.find(([, candidate]) => candidate === outcome.value);
  return { state: "resolved", value: toJson(outcome.value, "the result"), same_object_as: same ? same[0] : null };
}

/**
 * A scenario step on one model call (`{stream, consumer}`, its stream null when stream()
 * threw): `start_consumer`, `consume` or `result`.
 */
export async function callStep(action, call, deadlineS) {
  if (call.stream === null || call.stream === undefined) return { threw: "there is no stream: stream() threw" };
  if (action === "start_consumer") {
    await call.consumer.start(call.stream);
    return {};
  }
  if (action === "consume") return call.consumer.finish(call.stream, deadlineS);
  // result: "terminal_event" is the terminal event this call's consumer received.
  const terminal = [...call.consumer.received].reverse().find((event) => isObject(event) && ASSISTANT_TERMINAL_FIELDS.has(event.type));
  const payload = terminal === undefined ? NO_OBJECT : terminal[ASSISTANT_TERMINAL_FIELDS.get(terminal.type)];
  return observeResult(call.stream, [["terminal_event", payload]], deadlineS);
}

/** The abort signal a `stream` step asks for (`signal`: none, aborted or controller), or null. */
function signalFor(call, step) {
  const mode = step.signal ?? "none";
  if (!SIGNAL_MODES.has(mode)) throw new ProtocolError(`unknown signal mode ${JSON.stringify(mode)}`);
  if (mode === "none") return null;
  call.controller = new AbortController();
  if (mode === "aborted") call.controller.abort();
  return call.controller.signal;
}

/**
 * The steps of a model-call scenario (scripted_model, faux_provider): `stream` starts a named
 * call, `abort`, `settle`, `start_consumer`, `consume` and `result` work the same for every
 * model. `player` is the adapter's part:
 * - `name`: the operation, in error messages;
 * - `callActions`: the actions that name an existing call;
 * - `open(step)`: what a new call holds besides `{controller, stream, consumer}`;
 * - `stream(call, step, signal)`: call the model's stream(); the step's `threw` observation;
 * - `callStep(action, call, step, deadlineS)` (optional): start_consumer, consume, result;
 * - `actions`: the operation's other actions, `(step, call) => observation` (undefined: `{}`),
 *   a promise only for an action that waits.
 */
export async function playCallSteps(player, steps, deadlineS) {
  const calls = new Map(); // call name -> {controller, stream, consumer, ...open(step)}
  const observations = [];
  for (const step of steps) {
    let observation = {};
    const action = step.action;
    let call = calls.get(String(step.call));
    if (action !== "stream" && player.callActions.has(action) && call === undefined) {
      throw new ProtocolError(`step uses call ${JSON.stringify(step.call)} before any stream step created it`);
    }
    switch (action) {
      case "stream":
        call = { ...player.open(step), controller: null, stream: null, consumer: new Consumer() };
        calls.set(String(step.call), call);
        observation.threw = player.stream(call, step, signalFor(call, step));
        break;
      case "abort":
        if (call.controller === null) {
          throw new ProtocolError(`call ${JSON.stringify(step.call)} has no abort controller (use signal: controller)`);
        }
        call.controller.abort();
        break;
      case "settle":
        await settle();
        break;
      case "start_consumer":
      case "consume":
      case "result":
        observation = player.callStep ? await player.callStep(action, call, step, deadlineS) : await callStep(action, call, deadlineS);
        break;
      default: {
        if (!Object.hasOwn(player.actions, action)) throw new ProtocolError(`unknown ${player.name} action ${JSON.stringify(action)}`);
        // Only a waiting action (it returns a promise) may yield to the event loop: an await
        // after any other would let deferred implementation code run before the next step.
        const result = player.actions[action](step, call);
        observation = (result instanceof Promise ? await result : result) ?? {};
      }
    }
    observations.push(observation);
  }
  return { steps: observations };
}

/**
 * The steps of an event_stream scenario on `stream`; `terminalField(event)` names the field
 * of a terminal event that carries the result (null when the event is not terminal).
 * `extraActions` maps further action names to `(step) => observation` (an adapter's own; a
 * promise only for an action that waits).
 */
export async function playStreamSteps(stream, terminalField, steps, deadlineS, extraActions = {}) {
  let terminalPayload = NO_OBJECT; // what the first terminal event pushed carries
  let endArgument = NO_OBJECT;
  const consumer = new Consumer();
  const observations = [];
  for (const step of steps) {
    let observation = {};
    // push and end run synchronously, with no await in between: only the waiting steps
    // below yield to the event loop (spec/fixture-format.md, "Scenario operations").
    switch (step.action) {
      case "push": {
        const event = structuredClone(step.event);
        if (terminalPayload === NO_OBJECT && isObject(event)) {
          const field = terminalField(event);
          if (field !== null) terminalPayload = event[field];
        }
        observation.threw = threwFrom(() => stream.push(event));
        break;
      }
      case "end":
        if ("result" in step) {
          const argument = structuredClone(step.result);
          endArgument = argument;
          observation.threw = threwFrom(() => stream.end(argument));
        } else {
          observation.threw = threwFrom(() => stream.end());
        }
        break;
      case "start_consumer":
        await consumer.start(stream);
        break;
      case "consume":
        observation = await consumer.finish(stream, deadlineS);
        break;
      case "result":
        observation = await observeResult(
          stream,
          [
            ["terminal_event", terminalPayload],
            ["end_argument", endArgument],
          ],
          deadlineS,
        );
        break;
      default: {
        if (!Object.hasOwn(extraActions, step.action)) throw new ProtocolError(`unknown event_stream action ${JSON.stringify(step.action)}`);
        const result = extraActions[step.action](step);
        observation = result instanceof Promise ? await result : result; // see playCallSteps
      }
    }
    observations.push(observation);
  }
  return { steps: observations };
}

// ---------------------------------------------------------------------------------------
// the protocol server
// ---------------------------------------------------------------------------------------

function errorResponse(kind, message) {
  return { ok: false, error: { kind, message } };
}

/**
 * Serve the protocol on stdin/stdout for one implementation, until `stop` or end of input.
 *
 * `adapter` is what is specific to the implementation:
 * - `name`: the program's name, in its usage line and its log lines;
 * - `argument`: the one command-line argument it takes, as the usage line shows it;
 * - `profile`: the profile its handshake states;
 * - `open(argument)`: the implementation (loaded lazily by the adapter), given to handlers;
 * - `implementation(impl)`: the handshake's `implementation` object;
 * - `operations`: op -> `async (impl, input) => observation`;
 * - `scenarios`: op -> `async (impl, input, steps, deadlineS) => observation`.
 * The handshake lists the keys of `operations` then of `scenarios`: the handler tables are
 * the adapter's only list of what it supports.
 */
export function serve(adapter) {
  // Implementation code may console.log at import time or while playing a turn; one stray
  // line on stdout would break the protocol, so everything except our responses goes to stderr.
  // Responses go through channel.mjs, which writes on fd 1 itself (sealed once asked for).
  process.stdout.write = (...args) => process.stderr.write(...args);
  const respond = writeLine;
  writeNotice = respond;
  const log = (text) => process.stderr.write(`[${adapter.name}] ${text}\n`);
  installStrayErrorHandlers(log);

  const [argument, ...extra] = process.argv.slice(2);
  if (!argument || extra.length > 0) {
    process.stderr.write(`usage: node ${adapter.name}.mjs <${adapter.argument}>\n`);
    process.exit(2);
  }
  const server = new Server(adapter, adapter.open(argument), respond, log);
  const lines = createInterface({ input: process.stdin, crlfDelay: Infinity });
  // One request at a time, in order, even if the runner writes ahead.
  let queue = Promise.resolve();
  let stopping = false;
  lines.on("line", (line) => {
    if (stopping || line.trim() === "") return;
    queue = queue.then(async () => {
      if (stopping) return;
      if (!(await server.handle(line))) {
        stopping = true;
        lines.close();
      }
    });
  });
  lines.on("close", () => {
    // Implementation code may leave timers or handles behind: exit explicitly once answered.
    queue.then(() => process.exit(0));
  });
}

class Server {
  constructor(adapter, impl, respond, log) {
    this.adapter = adapter;
    this.impl = impl;
    this.respond = respond;
    this.log = log;
    this.settleDeadlineS = DEFAULT_SETTLE_DEADLINE_S;
    this.operations = [...Object.keys(adapter.operations), ...Object.keys(adapter.scenarios)];
  }

  hello(request) {
    if (typeof request.settle_deadline_s === "number" && request.settle_deadline_s > 0) {
      this.settleDeadlineS = request.settle_deadline_s;
    }
    if (isObject(request.failed_modules)) failedModules = request.failed_modules;
    const implementation = this.adapter.implementation(this.impl);
    const response = { ok: true, protocol: PROTOCOL, profile: this.adapter.profile, implementation, operations: this.operations };
    if (typeof request.channel_key === "string") {
      startSealing(request.channel_key); // this response is the first sealed line
      response.sealed = true;
    }
    return response;
  }

  async operation(request) {
    const { op, input, steps } = request;
    if (!isObject(input)) throw new ProtocolError(`${op} needs an input object`);
    if (Object.hasOwn(this.adapter.operations, op)) return { ok: true, observation: await this.adapter.operations[op](this.impl, input) };
    if (!Array.isArray(steps)) throw new ProtocolError(`${op} needs a steps array`);
    return { ok: true, observation: await this.adapter.scenarios[op](this.impl, input, steps, this.settleDeadlineS) };
  }

  /** Run one operation; its failures (and stray "not implemented" throws) become errors. */
  async guardedOperation(request) {
    resetStrayErrors();
    try {
      const response = await this.operation(request);
      await tick(); // let a rejection left unhandled by the last step be reported now
      strays.throwIfPlaceholder();
      return response;
    } catch (error) {
      if (error instanceof NotImplemented) return errorResponse("not_implemented", error.message);
      if (error instanceof Threw) return errorResponse("threw", error.message);
      if (error instanceof ProtocolError) return errorResponse("protocol", error.message);
      if (error instanceof LoadFailed) return errorResponse("load_failed", error.message);
      this.log(`internal error: ${error?.stack ?? describe(error)}`);
      return errorResponse("protocol", `the adapter failed: ${describe(error)}`);
    }
  }

  /** Answer one request line; never throws. Returns false once the server should stop. */
  async handle(line) {
    let request;
    try {
      request = parseJson(line);
    } catch (error) {
      // Answer with the request's own seq if one can be read, so the runner can match it.
      const seq = Number(/"seq"\s*:\s*(\d+)/.exec(line)?.[1] ?? 0);
      this.respond({ seq, ...errorResponse("protocol", `not JSON: ${describe(error)}`) });
      return true;
    }
    const seq = Number.isInteger(request?.seq) && request.seq >= 0 ? request.seq : 0;
    if (!isObject(request) || typeof request.op !== "string") {
      this.respond({ seq, ...errorResponse("protocol", "a request is an object with seq and op") });
      return true;
    }
    if (request.op === "hello") {
      this.respond({ seq, ...this.hello(request) });
      return true;
    }
    if (request.op === "stop") {
      this.respond({ seq, ok: true });
      return false;
    }
    if (!this.operations.includes(request.op)) {
      // Another profile's operation is the likely mistake; the default profile goes unnamed.
      const profile = this.adapter.profile === DEFAULT_PROFILE ? "" : ` (profile ${this.adapter.profile})`;
      this.respond({ seq, ...errorResponse("protocol", `unknown op ${JSON.stringify(request.op)}${profile}`) });
      return true;
    }
    // An operation still pending once nothing is left that could finish it is answered as
    // hung at once, instead of holding the runner until its timeout kills this process. Its
    // work is abandoned: should it ever finish, nobody answers for it.
    const work = this.guardedOperation(request);
    const hung = neverSettles(work).then(() =>
      errorResponse("hung", `${request.op} never finishes: it is still pending while the event loop is idle (nothing is left that could settle it)`),
    );
    this.respond({ seq, ...(await Promise.race([work, hung])) });
    return true;
  }
}
