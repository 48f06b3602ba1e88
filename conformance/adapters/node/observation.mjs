// Building observations (spec/fixture-format.md): JSON views of implementation values, the
// stray errors of deferred work, and the waiting and consuming that scenario steps do. The
// Node.js adapters (pi_course_adapter.mjs, pi_ai_adapter.mjs) build every observation with
// these, so both profiles observe streams the same way; protocol.mjs carries them.
//
// No dependencies: Node.js 20 built-ins only.

// channel.mjs first: it captures the built-ins the channel relies on before anything else runs.
import { parseJson, stringifyJson } from "./channel.mjs";
import { NotImplemented, ProtocolError, Threw, describe, isNotImplemented, threwFrom } from "./failures.mjs";
import { settleOrIdle } from "./settling.mjs";

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

// Only the protocol server (protocol.mjs) touches this: installStrayErrorHandlers once, resetStrayErrors per operation.
let strays = new StrayErrors();

/** Start a fresh record of stray errors: each operation sees only its own. */
export function resetStrayErrors() {
  strays = new StrayErrors();
}

/** Route uncaught exceptions and unhandled rejections to `log` and the current record. */
export function installStrayErrorHandlers(log) {
  const onStrayError = (kind) => (error) => {
    log(`${kind} from the implementation: ${error instanceof Error && error.stack ? error.stack : describe(error)}`);
    strays.note(error);
  };
  process.on("uncaughtException", onStrayError("uncaught exception"));
  process.on("unhandledRejection", onStrayError("unhandled rejection"));
}

/** Throw NotImplemented if deferred work of the current operation threw a placeholder error. */
export function throwIfStrayPlaceholder() {
  strays.throwIfPlaceholder();
}

// ---------------------------------------------------------------------------------------
// waiting: the only places where a scenario yields to the event loop
// ---------------------------------------------------------------------------------------

/** One turn of the event loop (the protocol server also lets a left-over rejection be reported with it). */
export const tick = () => new Promise((resolve) => setImmediate(resolve));

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
