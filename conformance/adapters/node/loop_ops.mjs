// Chapter 07's operation for the course adapter: run_agent_loop (labs 7.1-7.5), one
// `runAgentLoop` of the student's compiled `agent-loop` module driven through the case's steps
// (spec/fixture-format.md, "Scenarios: the agent loop"). It observes exactly as the in-process
// Python binding does (conformance/adapters/loop_binding.py, loop_scripts.py), so the same
// fixtures judge both; the harness derives `trace` from `events`.
//
// Everything the loop talks to is the adapter's: the model is the shipped reference ScriptedModel
// (reference/scripted-model.mjs) playing the case's turns, the scripted tools are registered in the
// reference ToolRegistry with the reference objectSchema (reference/tool.mjs), an injected
// executor is scripted per call id. Reference, not the student's chapter 06 registry: the loop's
// own default executor is the `executeToolCall` it imports from "./tool.js", which lab isolation
// (isolation.json, run_agent_loop) gives the reference too, so a chapter 04 or 06 bug costs no
// chapter 07 point ("a lab's points depend on that lab's code alone").
//
// `loopOperations(find)` takes the adapter's lookup of a named export in an isolation context
// (pi_course_adapter.mjs's Modules.find) and returns the handler.
//
// No dependencies: Node.js 20 built-ins only.

import { NotImplemented, ProtocolError, describe, isNotImplemented, safeString } from "./failures.mjs";
import { fingerprint, isObject, toJson, track } from "./observation.mjs";
import { ScriptedModel } from "./reference/scripted-model.mjs";
import { ToolRegistry, objectSchema, optionalPositiveInteger, optionalString, stringValue } from "./reference/tool.mjs";
import { Gates, Watch, settle, waitUntil } from "./scenario_sync.mjs";
import { errorMessage, parsedView } from "./tool_ops.mjs";

/** The isolation context (isolation.json) the student's loop is imported in. */
export const LOOP_CONTEXT = "run_agent_loop";
const DEFAULT_STEPS = ["start", "await_run"];
// How long a waiting step waits at most (loop_binding.STEP_DEADLINE_S): idle settling ends a wait
// that can never be satisfied at once, so this only bounds a run that stays busy.
export const STEP_DEADLINE_S = 2.0;
const VALIDATORS = { string: stringValue, optional_string: optionalString, optional_positive_integer: optionalPositiveInteger };

/** `{throw: MESSAGE}` or `{throw: {message, stack?}}` as an Error (the stack is what must never reach a result). */
export function scriptedError(spec) {
  if (!isObject(spec)) return new Error(String(spec));
  const error = new Error(String(spec.message ?? ""));
  if (typeof spec.stack === "string") error.stack = spec.stack;
  return error;
}

/** The schema a case names: the reference objectSchema of a shape, or an opaque one (parse returns its input). */
function schemaOf(spec) {
  if (!isObject(spec) || !("shape" in spec)) return { parse: (value) => value };
  const shape = {};
  for (const [key, name] of Object.entries(spec.shape)) {
    if (!Object.hasOwn(VALIDATORS, String(name))) throw new ProtocolError(`unknown validator ${JSON.stringify(name)}`);
    shape[key] = VALIDATORS[String(name)];
  }
  return objectSchema(shape);
}

/** What the scripted parts of one case share with its steps (loop_scripts.World). */
export class World {
  /**
   * `signalMode` is the case's signal option; a `controller` given instead (chapter 09: the
   * adapter's way to abort the Agent) is what a script's `abort` calls, and the signal is then
   * set by whoever knows it (the Agent's model, per request).
   */
  constructor(signalMode, controller = null) {
    if (controller !== null) {
      this.controller = controller;
      this.signal = undefined;
    } else {
      this.controller = new AbortController();
      if (signalMode === "pre_aborted") this.controller.abort();
      else if (!["none", "given"].includes(signalMode)) throw new ProtocolError(`unknown signal option ${JSON.stringify(signalMode)}`);
      this.signal = signalMode === "none" ? undefined : this.controller.signal;
    }
    this.gates = new Gates();
    this.watch = new Watch();
    this.events = []; // as emitted; serialized after the run
    this.received = [];
    this.started = new Map(); // name -> executions started
  }

  /** `same` for the very object, `absent` for none, `other` for another one. */
  identity(given, expected) {
    if (given === undefined || given === null) return "absent";
    return expected !== undefined && given === expected ? "same" : "other";
  }

  /** One execution starts: what it received, and that one more of `tool` started. */
  record(tool, params, context) {
    const field = (key) => (isObject(context) ? context[key] : undefined);
    const callId = field("callId");
    this.received.push({
      tool,
      params,
      call_id: typeof callId === "string" || callId === undefined || callId === null ? (callId ?? null) : safeString(callId),
      signal: this.identity(field("signal"), this.signal),
      report_progress: this.identity(field("reportProgress"), undefined),
    });
    this.started.set(tool, (this.started.get(tool) ?? 0) + 1);
    this.watch.poke();
  }

  /** Whether each name started at least as often as it is listed. */
  hasStarted(names) {
    const wanted = new Map();
    for (const name of names) wanted.set(name, (wanted.get(name) ?? 0) + 1);
    return [...wanted].every(([name, count]) => (this.started.get(name) ?? 0) >= count);
  }

  /** Play `script` up to its ending action (returned), or to its end (null). */
  async play(script, context) {
    for (const action of script) {
      if (!isObject(action)) throw new ProtocolError(`a script action is an object, not ${safeString(action)}`);
      if ("wait" in action) await this.gates.wait(String(action.wait));
      else if ("progress" in action) {
        const progress = isObject(context) ? context.reportProgress : undefined;
        if (typeof progress === "function") progress(structuredClone(action.progress));
      } else if ("abort" in action) this.controller.abort();
      else if ("throw" in action) throw scriptedError(action.throw);
      else return action;
    }
    return null;
  }
}

/** A registry tool playing its script each time it executes (loop_scripts.LoopTool). */
export function loopTool(spec, world) {
  const script = Array.isArray(spec.script) ? spec.script : [];
  const name = String(spec.name);
  return {
    name,
    description: String(spec.description),
    schema: schemaOf(spec.schema),
    async execute(params, context) {
      world.record(name, parsedView(params, "the parameters the tool received").value, context);
      const ending = await world.play(script, context);
      return ending === null ? { content: [] } : structuredClone(ending.return);
    },
  };
}

/** An injected `executeToolCall(call, context)` whose call ids each play their own script. */
export function scriptedExecutor(scripts, world) {
  return async (call, context) => {
    const seen = toJson(call, "the call the executor received");
    const callId = isObject(seen) ? seen.id : undefined;
    world.record(String(isObject(seen) ? seen.name : undefined), isObject(seen) ? (seen.arguments ?? null) : null, {
      ...(isObject(context) ? context : {}),
      callId,
    });
    const script = Array.isArray(scripts[String(callId)]) ? scripts[String(callId)] : [];
    const ending = await world.play(script, context);
    if (ending !== null && "return_uncloneable" in ending) {
      // details hold a function: structuredClone cannot copy it (AGENT-LOOP-3)
      return { ...structuredClone(ending.return_uncloneable), details: { callback: () => "not cloneable" } };
    }
    if (ending === null || !("return_result" in ending)) {
      throw new ProtocolError(`the executor script of call ${safeString(callId)} ends without return_result or throw`);
    }
    return structuredClone(ending.return_result);
  };
}

/** The case's model: the reference ScriptedModel behind `stream(context, {signal})`, recording requests as they were. */
function loopModel(turns, world) {
  if (!Array.isArray(turns)) throw new ProtocolError("model.turns must be an array");
  // Only the turns that play: a throwing turn never reaches the scripted model, so its cursor stays aligned.
  const model = new ScriptedModel(turns.filter((turn) => isObject(turn) && "message" in turn).map((turn) => structuredClone(turn.message)));
  let cursor = 0;
  const requests = [];
  return {
    requests,
    stream(context, options) {
      try {
        requests.push(toJson(context, "a model request"));
      } catch (error) {
        requests.push(`<not a JSON value: ${error.message}>`);
      }
      const turn = turns[cursor] ?? {};
      cursor += 1;
      if (isObject(turn) && "throw" in turn) throw scriptedError(turn.throw);
      world.watch.poke();
      return model.stream(context, { signal: isObject(options) ? options.signal : undefined });
    },
  };
}

/** The options runAgentLoop gets, in the course's names (loop_binding._options). */
function loopOptions(input, world, model) {
  const registry = new ToolRegistry();
  for (const spec of input.tools ?? []) registry.register(loopTool(spec, world));
  const settings = isObject(input.options) ? input.options : {};
  const options = { model, tools: registry, context: structuredClone(input.context) };
  if (world.signal !== undefined) options.signal = world.signal;
  if (settings.on_event ?? true) {
    options.onEvent = (event) => {
      world.events.push(event);
      world.watch.poke();
    };
  }
  if ("executor" in input) options.executeToolCall = scriptedExecutor(input.executor, world);
  if ("max_steps" in settings) options.maxSteps = settings.max_steps;
  return options;
}

/** Whether an emitted event is of `wanted.type` and, when given, about call `wanted.callId`. */
export function eventMatches(event, wanted) {
  if (!isObject(event) || event.type !== wanted.type) return false;
  if (!("callId" in wanted)) return true;
  return [event.callId, event.call?.id, event.result?.toolCallId].includes(wanted.callId);
}

/** A step as `[name, argument]`: `start` or `{release: G}`. */
export function parseStep(step) {
  if (typeof step === "string") return [step, null];
  if (isObject(step) && Object.keys(step).length === 1) return Object.entries(step)[0];
  throw new ProtocolError(`a step is a name or a mapping of one name: ${safeString(JSON.stringify(step))}`);
}

// ---------------------------------------------------------------------------------------
// the run and its steps
// ---------------------------------------------------------------------------------------

/** One run being driven: its options, its pending result, and what was seen so far (loop_binding._Scenario). */
class Scenario {
  constructor(world, options, deadlineS) {
    this.world = world;
    this.options = options;
    this.deadlineS = deadlineS;
    this.run = null; // {outcome} once started
    this.startError = null; // what a synchronous throw of the entry point said
  }

  /**
   * Play one step: what it waited for in vain (`stalled`), or null; a promise of that for the
   * waiting steps only. The others act at once, with no microtask between them (as in the
   * Python binding, where `start` then `abort` aborts before the model produces its turn).
   */
  step(name, argument, entry) {
    const world = this.world;
    switch (name) {
      case "start":
        return this.start(entry);
      case "await_started": {
        const names = Array.isArray(argument) ? argument.map(String) : [String(argument)];
        return waitUntil(world.watch, () => world.hasStarted(names), this.deadlineS).then((met) => {
          const missing = names.filter((item) => !world.hasStarted([item]));
          return met ? null : `tool ${(missing.length > 0 ? missing : names).join(", ")} to start`;
        });
      }
      case "release":
        world.gates.open(String(argument));
        return null;
      case "await_event": {
        const wanted = isObject(argument) ? argument : {};
        const about = "callId" in wanted ? ` of call ${wanted.callId}` : "";
        return waitUntil(world.watch, () => world.events.some((event) => eventMatches(event, wanted)), this.deadlineS).then((met) =>
          met ? null : `event ${wanted.type}${about}`,
        );
      }
      case "settle":
        return settle(this.deadlineS).then(() => null);
      case "abort":
        world.controller.abort();
        return null;
      case "await_run":
        return this.awaitRun();
      default:
        throw new ProtocolError(`unknown run_agent_loop step ${JSON.stringify(name)}`);
    }
  }

  /** Call the entry point without awaiting it: an async function runs to its first await in the call. */
  start(entry) {
    if (this.run !== null || this.startError !== null) throw new ProtocolError("a case starts its run once");
    let returned;
    try {
      returned = entry(this.options);
    } catch (error) {
      this.startError = error; // a synchronous throw is the run's rejection
      return null;
    }
    const [outcome, tracked] = track(Promise.resolve(returned));
    tracked.then(() => this.world.watch.poke());
    this.run = outcome;
    return null;
  }

  awaitRun() {
    if (this.startError !== null) return null;
    if (this.run === null) throw new ProtocolError("the case awaits the run before a start step");
    const run = this.run;
    return waitUntil(this.world.watch, () => run.state !== "pending", this.deadlineS).then((met) => (met ? null : "the run to settle"));
  }

  /** The run's error, when it rejected (or its entry point threw). */
  failure() {
    if (this.startError !== null) return this.startError;
    return this.run?.state === "rejected" ? this.run.error : undefined;
  }
}

/**
 * A placeholder's throw skips the case (the course's starter throws "Lab 7.1 ... 尚未实现"), as
 * chapters 03-06's do, and so does a tool result that reports one (an unfinished tool.js reached
 * without lab isolation: Node.js 20).
 */
function rejectPlaceholders(scenario) {
  const failure = scenario.failure();
  if (failure !== undefined && isNotImplemented(failure)) {
    throw new NotImplemented(`runAgentLoop is not implemented: ${describe(failure)}`);
  }
  for (const event of scenario.world.events) {
    const said = isObject(event) && isObject(event.result) && isObject(event.result.details) ? event.result.details.error : undefined;
    if (typeof said === "string" && isNotImplemented(said)) {
      throw new NotImplemented(`a tool result reports a placeholder's error (an earlier lab is unfinished): ${JSON.stringify(said)}`);
    }
  }
}

function observation(scenario, model, stalled, callerMessages, before) {
  rejectPlaceholders(scenario);
  const run = scenario.run;
  const failure = scenario.failure();
  let result = null;
  let error = scenario.startError === null ? null : { message: errorMessage(scenario.startError) };
  let fresh = null;
  if (stalled === null && run !== null && run.state !== "pending") {
    if (run.state === "rejected") error = { message: errorMessage(failure) };
    else {
      result = toJson(run.value, "the result runAgentLoop() resolved with");
      fresh = (isObject(run.value) ? run.value.messages : undefined) !== callerMessages;
    }
  }
  return {
    events: scenario.world.events.map((event) => toJson(event, "an event the loop emitted")),
    requests: model.requests,
    result,
    error,
    fresh_messages: fresh,
    context_unchanged: fingerprint(scenario.options.context) === before,
    received: scenario.world.received,
    stalled,
  };
}

async function runAgentLoopOp(entry, input, deadlineS) {
  if (!isObject(input.context) || !isObject(input.model)) throw new ProtocolError("run_agent_loop needs a context and a model");
  const settings = isObject(input.options) ? input.options : {};
  const world = new World(String(settings.signal ?? "none"));
  const model = loopModel(input.model.turns, world);
  const options = loopOptions(input, world, model);
  const callerMessages = isObject(options.context) ? options.context.messages : undefined;
  const before = fingerprint(options.context);
  const scenario = new Scenario(world, options, Math.max(deadlineS, STEP_DEADLINE_S));
  const steps = [...(Array.isArray(input.steps) && input.steps.length > 0 ? input.steps : DEFAULT_STEPS)];
  if (steps.at(-1) !== "await_run") steps.push("await_run"); // the run is always awaited last
  let stalled = null;
  for (const [index, step] of steps.entries()) {
    const [name, argument] = parseStep(step);
    const played = scenario.step(name, argument, entry);
    const waitingFor = played instanceof Promise ? await played : played;
    if (waitingFor !== null) {
      stalled = { step: index, waiting_for: waitingFor };
      break;
    }
  }
  return observation(scenario, model, stalled, callerMessages, before);
}

/** Chapter 07's operation over the export `find(modules, name, context)` resolves. */
export function loopOperations(find) {
  return {
    operations: {
      run_agent_loop: async (modules, input, deadlineS) => runAgentLoopOp(await find(modules, "runAgentLoop", LOOP_CONTEXT), input, deadlineS),
    },
  };
}
