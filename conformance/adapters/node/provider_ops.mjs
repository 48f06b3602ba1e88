// Chapter 05's operations for the course adapter: to_provider_messages and to_provider_tools
// (lab 5.1), provider_model_stream (lab 5.2) and provider_fetch_stream (lab 5.3), played
// against the student's compiled `provider-adapter` module. They observe exactly as the
// in-process Python binding does (conformance/adapters/provider_binding.py), so the same
// fixtures judge both.
//
// Everything these operations talk to is the adapter's own (provider_actors.mjs): the scripted
// transport, the scripted fetch and its SSE body, the consumer that pauses. The chunks of a
// `transport: {chunks}` case go to the student's own fixedTransport, as the Python binding does.
//
// `providerOperations(find)` takes the adapter's lookup of a named export (pi_course_adapter.mjs's
// Modules.find, in the provider module's isolation context) and returns the handlers.
//
// No dependencies: Node.js 20 built-ins only.

import { NotImplemented, ProtocolError, Threw, describe, isNotImplemented } from "./failures.mjs";
import { NO_OBJECT, fingerprint, isObject, observeResult, toJson } from "./observation.mjs";
import { PausingConsumer, ScriptedFetch, ScriptedTransport, abortSwitch, fetchRecord, identity } from "./provider_actors.mjs";
import { errorMessage } from "./tool_ops.mjs";

const SIGNAL_MODES = new Set(["none", "aborted", "controller"]);
const TERMINAL_FIELDS = new Map([
  ["done", "message"],
  ["error", "error"],
]);

/** An item's `type`, or undefined for one that has none (a consumer's pause test). */
const typeOf = (item) => (isObject(item) ? item.type : undefined);

// ---------------------------------------------------------------------------------------
// lab 5.1: the wire conversion
// ---------------------------------------------------------------------------------------

/** Call a one-argument conversion on a private copy of the input; report whether it changed. */
function convert(name, fn, argument) {
  const before = fingerprint(argument);
  let value;
  try {
    value = fn(argument);
  } catch (error) {
    if (isNotImplemented(error)) throw new NotImplemented(`${name} is not implemented: ${describe(error)}`);
    throw new Threw(`${name}() threw ${errorMessage(error)}`);
  }
  return { value: toJson(value, `the value ${name}() returned`), input_unchanged: fingerprint(argument) === before };
}

async function toProviderMessagesOp(find, input) {
  return convert("toProviderMessages", await find("toProviderMessages"), structuredClone(input.context));
}

async function toProviderToolsOp(find, input) {
  // Without `tools` in the input, called with undefined (the course's "no tools").
  return convert("toProviderTools", await find("toProviderTools"), "tools" in input ? structuredClone(input.tools) : undefined);
}

// ---------------------------------------------------------------------------------------
// labs 5.2 and 5.3: how each scenario starts its stream
// ---------------------------------------------------------------------------------------

// Each `prepare` looks up the exports it needs (awaiting: the module may still be loading),
// then returns the synchronous start of a `stream` step, so no deferred work of the student's
// runs between the signal's creation, the stream() call and the next step (as in the Python binding).

/** Lab 5.2: a createOpenAICompatibleModel over the student's fixedTransport(chunks) or the adapter's scripted transport. */
async function prepareModel(find, run) {
  const spec = isObject(run.input.transport) ? run.input.transport : {};
  const fixedTransport = "chunks" in spec ? await find("fixedTransport") : null;
  const create = await find("createOpenAICompatibleModel");
  return (step) => {
    let transport;
    if (fixedTransport !== null) transport = fixedTransport(structuredClone(spec.chunks));
    else transport = run.recorder = new ScriptedTransport(Array.isArray(spec.script) ? spec.script : [], run.aborted);
    const model = create({ provider: run.input.provider, model: run.input.model, transport });
    const context = structuredClone(step.context);
    // The options object is passed only when a signal is used, as a caller would.
    run.stream = run.controller === null ? model.stream(context) : model.stream(context, { signal: run.controller.signal });
    run.consumer = new PausingConsumer(run.stream, typeOf);
  };
}

/** Lab 5.3: a createOpenAICompatibleTransport over the adapter's scripted fetch. */
async function prepareTransport(find, run) {
  const create = await find("createOpenAICompatibleTransport");
  return (step) => {
    run.recorder = new ScriptedFetch(isObject(run.input.fetch) ? run.input.fetch : {}, run.aborted);
    run.transport = create({ baseUrl: run.input.base_url, apiKey: run.input.api_key, fetch: run.recorder.fetch });
    const request = structuredClone(step.request);
    // The course's transport reads options.signal: it always gets an options object.
    run.stream = run.transport.stream(request, run.controller === null ? {} : { signal: run.controller.signal });
    run.consumer = new PausingConsumer(run.stream, typeOf);
  };
}

// ---------------------------------------------------------------------------------------
// the steps both scenarios share
// ---------------------------------------------------------------------------------------

async function play(prepare, input, steps, deadlineS) {
  const run = { input, aborted: abortSwitch(), controller: null, stream: null, consumer: null, transport: null, recorder: null };
  const start = await prepare(run); // the lookups, before any step: no step below awaits them
  const observations = [];
  for (const step of steps) {
    // Only a waiting step (consume, result) yields to the event loop: an await after any other
    // would let the student's deferred work run before the next step.
    const observation = playStep(start, run, step, deadlineS);
    observations.push(observation instanceof Promise ? await observation : observation);
  }
  return { steps: observations };
}

function playStep(start, run, step, deadlineS) {
  const action = step.action;
  if (action === "stream") return startStep(start, run, step);
  if (action === "abort") {
    if (run.controller === null) throw new ProtocolError("abort needs a stream step with signal: controller");
    run.controller.abort();
    run.aborted.fire();
    return {};
  }
  if (action === "requests") return requestsStep(run);
  if (run.consumer === null) return { threw: "there is no stream: stream() threw" };
  if (action === "consume") return consumeStep(run, step, deadlineS);
  if (action === "result") return resultStep(run, deadlineS);
  throw new ProtocolError(`unknown chapter 05 action ${JSON.stringify(action)}`);
}

/** The `stream` step: its signal, then the scenario's start; a throw of the student's is the step's `threw`. */
function startStep(start, run, step) {
  const mode = step.signal ?? "none";
  if (!SIGNAL_MODES.has(mode)) throw new ProtocolError(`unknown signal mode ${JSON.stringify(mode)}`);
  if (mode !== "none") {
    run.controller = new AbortController();
    if (mode === "aborted") {
      run.controller.abort();
      run.aborted.fire();
    }
  }
  try {
    start(step);
  } catch (error) {
    if (error instanceof NotImplemented || error instanceof ProtocolError) throw error;
    if (isNotImplemented(error)) throw new NotImplemented(`chapter 05 is not implemented: ${describe(error)}`);
    run.consumer = null;
    return { threw: errorMessage(error) };
  }
  return { threw: null };
}

async function consumeStep(run, step, deadlineS) {
  const until = step.until === undefined || step.until === null ? null : String(step.until);
  const consumer = run.consumer;
  await consumer.advance(until, deadlineS);
  const received = toJson(consumer.received, "what the stream gave");
  if (run.transport !== null) {
    // The SSE transport: its chunks, and the error it ended with.
    return {
      chunks: received,
      finished: consumer.done,
      error: consumer.failed ? errorMessage(consumer.error) : null,
      abort_error: consumer.failed && isObject(consumer.error) && consumer.error.name === "AbortError",
    };
  }
  const observation = { events: received, finished: consumer.done && !consumer.failed };
  if (consumer.failed) observation.threw = `iteration threw ${errorMessage(consumer.error)}`;
  return observation;
}

async function resultStep(run, deadlineS) {
  if (run.transport !== null) throw new ProtocolError("a transport has no result(): use consume");
  const terminal = [...run.consumer.received].reverse().find((event) => TERMINAL_FIELDS.has(typeOf(event)));
  const payload = terminal === undefined ? NO_OBJECT : terminal[TERMINAL_FIELDS.get(terminal.type)];
  return observeResult(run.stream, [["terminal_event", payload]], deadlineS);
}

function requestsStep(run) {
  const signal = run.controller === null ? null : run.controller.signal;
  if (run.recorder instanceof ScriptedTransport) {
    return { requests: run.recorder.calls.map(([request, given]) => ({ request: toJson(request, "the request"), signal: identity(given, signal) })) };
  }
  if (run.recorder instanceof ScriptedFetch) return { requests: run.recorder.calls.map(([url, init]) => fetchRecord(url, init, signal)) };
  throw new ProtocolError("requests needs a scripted transport (transport: {script}) or a fetch");
}

// ---------------------------------------------------------------------------------------
// the handlers
// ---------------------------------------------------------------------------------------

/** Chapter 05's operations and scenarios over the exports `find(modules, name)` resolves. */
export function providerOperations(find) {
  const lookup = (modules) => (name) => find(modules, name);
  return {
    operations: {
      to_provider_messages: (modules, input) => toProviderMessagesOp(lookup(modules), input),
      to_provider_tools: (modules, input) => toProviderToolsOp(lookup(modules), input),
    },
    scenarios: {
      provider_model_stream: (modules, input, steps, deadlineS) => play((run) => prepareModel(lookup(modules), run), input, steps, deadlineS),
      provider_fetch_stream: (modules, input, steps, deadlineS) => play((run) => prepareTransport(lookup(modules), run), input, steps, deadlineS),
    },
  };
}
