// Chapter 09's Agent for the course adapter: run_agent (labs 9.2-9.5), one `new Agent` of the
// student's compiled `agent` module driven through the case's steps (spec/fixture-format.md,
// "The stateful agent"). It observes exactly as the in-process Python binding does
// (conformance/adapters/agent_binding.py), so the same fixtures judge both; the harness derives
// `trace` from `events`.
//
// Everything the Agent talks to is the adapter's: the model plays the case's turns with the
// reference ScriptedModel (agent_scripts.mjs), the scripted tools are chapter 07's, registered in
// the reference ToolRegistry, and the executor is chapter 07's (loop_ops.mjs); the subscribers are
// scripted listeners. The Agent's own imports of earlier chapters (types.js, event-stream.js,
// scripted-model.js, tool.js) get the reference under lab isolation (isolation.json, run_agent);
// agent-loop.js stays the student's, since its chapter 09 additions are labs 9.2-9.5 code.
//
// `agentOperations(find)` takes the adapter's lookup of a named export in an isolation context
// (pi_course_adapter.mjs's Modules.find) and returns the handler.
//
// No dependencies: Node.js 20 built-ins only.

import { readFileSync } from "node:fs";
import path from "node:path";
import { NotImplemented, ProtocolError, Threw, describe, isNotImplemented } from "./failures.mjs";
import { fingerprint, isObject, toJson, track } from "./observation.mjs";
import { Aborts, agentModel, ruleMatches, subscriber } from "./agent_scripts.mjs";
import { scribbleEvent, scribbleMessages } from "./agent_state_ops.mjs";
import { STEP_DEADLINE_S, World, eventMatches, loopTool, parseStep, scriptedExecutor } from "./loop_ops.mjs";
import { ToolRegistry } from "./reference/tool.mjs";
import { settle, waitUntil } from "./scenario_sync.mjs";
import { attempt, errorMessage } from "./tool_ops.mjs";

/** The isolation context (isolation.json) the student's Agent is imported in. */
export const AGENT_CONTEXT = "run_agent";

const PENDING = { status: "pending", result: null, error: null };
const rejected = (message) => ({ status: "rejected", result: null, error: { message } });

// `[value, null]`, or `[null, message]` when `run()` threw; a placeholder's throw skips the case.
const outcome = attempt;

/** What a subscriber's `throw` action throws, for the Agent to catch (AGENT-SUB-3). */
class SubscriberThrow extends Error {}

/** One Agent being driven: the Agent, its scripted parts, its prompts, and what was observed (agent_binding._Play). */
class Play {
  constructor(Agent, input, deadlineS) {
    this.aborts = new Aborts();
    this.world = new World("none", this.aborts);
    this.model = agentModel(isObject(input.model) ? input.model.turns : undefined, this.world, this.aborts);
    this.deadlineS = deadlineS;
    this.events = [];
    this.prompts = new Map(); // name -> the tracked outcome of what prompt() returned
    this.promptErrors = new Map(); // name -> the message of prompt()'s synchronous throw
    this.outcomes = new Map(); // name -> the prompt's outcome as JSON, taken once, when it settled
    this.promptOptions = [];
    this.snapshots = {};
    this.actions = [];
    this.subscribers = new Map((input.subscribers ?? []).map((spec) => [String(spec.name), subscriber(spec, (...args) => this.act(...args))]));
    this.agent = this.construct(Agent, input);
    this.aborts.agent = this.agent;
    this.call("subscribe", (event) => {
      this.events.push(toJson(event, "an event the Agent emitted"));
      this.world.watch.poke();
    });
    for (const scripted of this.subscribers.values()) if (scripted.atStart) this.subscribe(scripted);
  }

  construct(Agent, input) {
    const settings = isObject(input.agent) ? input.agent : {};
    const registry = new ToolRegistry();
    for (const spec of input.tools ?? []) registry.register(loopTool(spec, this.world));
    const options = { model: this.model, tools: registry };
    if ("executor" in input) options.toolExecutor = scriptedExecutor(input.executor, this.world);
    if ("system_prompt" in settings) options.systemPrompt = settings.system_prompt;
    if ("max_steps" in settings) options.maxSteps = settings.max_steps;
    const [agent, error] = outcome("Agent", () => new Agent(options));
    if (error !== null) throw new Threw(`new Agent() threw ${error}`);
    return agent;
  }

  /** The Agent's method `name`, or a skip naming what it lacks. */
  method(name) {
    let found;
    try {
      found = this.agent?.[name];
    } catch (error) {
      throw new Threw(`reading Agent.${name} threw ${describe(error)}`);
    }
    if (typeof found !== "function") throw new NotImplemented(`Agent has no ${name}`);
    return (...args) => found.apply(this.agent, args);
  }

  /** `agent.name(...args)`; what it throws fails the case. */
  call(name, ...args) {
    const [value, error] = outcome(`Agent.${name}`, () => this.method(name)(...args));
    if (error !== null) throw new Threw(`Agent.${name}() threw ${error}`);
    return value;
  }

  subscribe(scripted) {
    scripted.unsubscribe = this.call("subscribe", scripted.listen());
  }

  /** getState() and systemPrompt now. */
  state() {
    let prompt;
    try {
      prompt = this.agent.systemPrompt;
    } catch (error) {
      throw new Threw(`reading Agent.systemPrompt threw ${describe(error)}`);
    }
    return { state: toJson(this.call("getState"), "the state getState() returned"), system_prompt: toJson(prompt, "systemPrompt") };
  }

  // -- what steps and subscribers do ------------------------------------------------------------

  /** Call prompt(text, options) without awaiting it; the message of a synchronous throw, or null. */
  prompt(spec) {
    const given = isObject(spec) ? spec : { text: spec };
    const name = String(given.as ?? `p${this.prompts.size + this.promptErrors.size + 1}`);
    if (this.prompts.has(name) || this.promptErrors.has(name)) throw new ProtocolError(`two prompts are called ${JSON.stringify(name)}`);
    const options = "system" in given ? { system: structuredClone(given.system) } : undefined;
    if (options !== undefined) this.promptOptions.push([options, fingerprint(options)]);
    const prompt = this.method("prompt");
    const text = String(given.text ?? "");
    const [returned, error] = outcome("Agent.prompt", () => (options === undefined ? prompt(text) : prompt(text, options)));
    if (error !== null) {
      this.promptErrors.set(name, error);
      return error;
    }
    if (returned === null || (typeof returned !== "object" && typeof returned !== "function") || typeof returned.then !== "function") {
      throw new Threw(`prompt() returned ${returned === undefined ? "undefined" : typeof returned}, not a promise`);
    }
    const [state, tracked] = track(Promise.resolve(returned));
    this.prompts.set(name, state);
    // Serialized as it settles: a later mutate_result step changes the caller's copy, not what was observed.
    tracked.then(() => {
      try {
        this.settled(name);
      } catch {
        // a result that is no JSON value fails the case when the observation is made
      }
      this.world.watch.poke();
    });
    return null;
  }

  /** The prompt's outcome as JSON, taken once, when it first settled. */
  settled(name) {
    if (!this.outcomes.has(name)) {
      const state = this.prompts.get(name);
      if (state.state === "pending") return PENDING;
      if (state.state === "rejected") {
        if (isNotImplemented(state.error)) throw new NotImplemented(`Agent.prompt is not implemented: ${describe(state.error)}`);
        this.outcomes.set(name, rejected(errorMessage(state.error)));
      } else {
        this.outcomes.set(name, { status: "fulfilled", result: toJson(state.value, "the result prompt() resolved with"), error: null });
      }
    }
    return this.outcomes.get(name);
  }

  /** One action of a subscriber, on the event it got (`line`); a `throw` action throws. */
  act(scripted, line, action, event) {
    const [name, argument] = parseStep(action);
    if (name === "throw") throw new SubscriberThrow(String(argument));
    const entry = { by: scripted.name, at: line, action: name };
    if (name === "snapshot") Object.assign(entry, this.state());
    else if (name === "record") entry.event = toJson(event, "an event a subscriber received");
    else if (name === "mutate_event") {
      try {
        scribbleEvent(event); // a port's own objects may refuse: then nothing changed
      } catch {
        // nothing changed
      }
    } else if (name === "subscribe" || name === "unsubscribe") this.toggle(name, String(argument));
    else entry.error = this.control(name, argument);
    this.actions.push(entry);
  }

  /** abort, steer, follow_up or prompt: the message it threw, or null. */
  control(name, argument) {
    if (name === "abort") return outcome("Agent.abort", () => this.aborts.abort())[1];
    if (name === "steer") return outcome("Agent.steer", () => this.method("steer")(String(argument)))[1];
    if (name === "follow_up") return outcome("Agent.followUp", () => this.method("followUp")(String(argument)))[1];
    if (name === "prompt") return this.prompt(argument);
    throw new ProtocolError(`unknown run_agent action ${JSON.stringify(name)}`);
  }

  toggle(name, subscriberName) {
    const target = this.subscribers.get(subscriberName);
    if (target === undefined) throw new ProtocolError(`no subscriber ${JSON.stringify(subscriberName)}`);
    if (name === "subscribe") this.subscribe(target);
    else if (typeof target.unsubscribe === "function") target.unsubscribe();
  }

  // -- the steps --------------------------------------------------------------------------------

  /** Play one step: what it waited for in vain (`stalled`), or null; a promise of that for the waiting steps only. */
  step(name, argument) {
    const waiting = this.waitingStep(name, argument);
    if (waiting !== undefined) return waiting;
    if (name === "prompt") this.prompt(argument);
    else if (name === "release") this.world.gates.open(String(argument));
    else if (name === "complete") this.world.gates.open(`turn:${argument}`);
    else if (name === "snapshot") this.snapshots[String(argument)] = this.state();
    else if (name === "mutate_state") scribbleMessages(this.call("getState"));
    else if (name === "mutate_result") this.mutateResult(String(argument));
    else if (name === "abort" || name === "steer" || name === "follow_up") {
      this.actions.push({ by: "steps", at: null, action: name, error: this.control(name, argument) });
    } else if (name === "subscribe" || name === "unsubscribe") this.toggle(name, String(argument));
    else throw new ProtocolError(`unknown run_agent step ${JSON.stringify(name)}`);
    return null;
  }

  /** The steps that wait, as a promise of what they waited for in vain; undefined for the others. */
  waitingStep(name, argument) {
    const until = (condition, what) => waitUntil(this.world.watch, condition, this.deadlineS).then((met) => (met ? null : what));
    if (name === "await_prompt") {
      const prompt = this.prompts.get(String(argument));
      if (prompt === undefined && !this.promptErrors.has(String(argument))) throw new ProtocolError(`no prompt ${JSON.stringify(argument)} before this step`);
      return prompt === undefined ? Promise.resolve(null) : until(() => prompt.state !== "pending", `prompt ${argument} to settle`);
    }
    if (name === "await_started") {
      const names = Array.isArray(argument) ? argument.map(String) : [String(argument)];
      return waitUntil(this.world.watch, () => this.world.hasStarted(names), this.deadlineS).then((met) => {
        const missing = names.filter((item) => !this.world.hasStarted([item]));
        return met ? null : `tool ${(missing.length > 0 ? missing : names).join(", ")} to start`;
      });
    }
    if (name === "await_request") {
      const count = Number(argument);
      return until(() => this.model.requests.length >= count, `model request ${count} to start`);
    }
    if (name === "await_event") {
      const wanted = isObject(argument) ? argument : {};
      return until(() => this.events.some((event) => agentEventMatches(event, wanted)), `event ${describeWanted(wanted)}`);
    }
    if (name === "settle") return settle(this.deadlineS).then(() => null);
    return undefined;
  }

  mutateResult(name) {
    const prompt = this.prompts.get(name);
    if (prompt === undefined || prompt.state !== "resolved") throw new ProtocolError(`mutate_result needs prompt ${JSON.stringify(name)} fulfilled`);
    this.settled(name);
    scribbleMessages(prompt.value);
  }

  /** A placeholder's rejection, or a tool result reporting one (an earlier lab unfinished, Node.js 20), skips the case. */
  rejectPlaceholders() {
    const messages = [];
    for (const name of this.prompts.keys()) {
      const settled = this.settled(name);
      if (isObject(settled.result) && Array.isArray(settled.result.messages)) messages.push(...settled.result.messages);
    }
    for (const event of this.events) {
      const loop = isObject(event) && isObject(event.event) ? event.event : {};
      messages.push(loop.result, loop.message);
    }
    for (const message of messages.filter(isObject)) {
      // A tool result's error (tool.js unfinished) or a failed run's message (agent-loop.js unfinished, or throwing).
      const said = isObject(message.details) ? message.details.error : message.errorMessage;
      if (typeof said === "string" && isNotImplemented(said)) {
        throw new NotImplemented(`the run reports a placeholder's error (an earlier lab is unfinished): ${JSON.stringify(said)}`);
      }
    }
  }

  observation(stalled) {
    this.rejectPlaceholders();
    const prompts = {};
    for (const [name, message] of this.promptErrors) prompts[name] = rejected(message);
    for (const name of this.prompts.keys()) prompts[name] = this.settled(name);
    const final = this.state();
    return {
      events: this.events,
      requests: this.model.requests,
      signals: this.model.signals,
      prompts,
      state: final.state,
      system_prompt: final.system_prompt,
      snapshots: this.snapshots,
      deliveries: Object.fromEntries([...this.subscribers].map(([name, scripted]) => [name, [...scripted.lines]])),
      actions: this.actions,
      received: this.world.received,
      prompt_options_unchanged: this.promptOptions.every(([options, before]) => fingerprint(options) === before),
      stalled,
    };
  }
}

/** An Agent event of `wanted.type` (and runId); for `loop`, its inner event as chapter 07's eventMatches sees it. */
function agentEventMatches(event, wanted) {
  if (!ruleMatches({ type: wanted.type, ...("runId" in wanted ? { runId: wanted.runId } : {}) }, event)) return false;
  if (!("loop" in wanted)) return true;
  return eventMatches(event.event, { type: wanted.loop, ...("callId" in wanted ? { callId: wanted.callId } : {}) });
}

function describeWanted(wanted) {
  const parts = [String(wanted.type)];
  if ("runId" in wanted) parts.push(`of run ${wanted.runId}`);
  if ("loop" in wanted) parts.push(String(wanted.loop));
  if ("callId" in wanted) parts.push(`of call ${wanted.callId}`);
  return parts.join(" ");
}

async function runAgentOp(Agent, input, deadlineS) {
  if (!isObject(input.model)) throw new ProtocolError("run_agent needs a model");
  const play = new Play(Agent, input, Math.max(deadlineS, STEP_DEADLINE_S));
  const steps = Array.isArray(input.steps) ? input.steps : [];
  let stalled = null;
  for (const [index, step] of steps.entries()) {
    const played = play.step(...parseStep(step));
    const waitingFor = played instanceof Promise ? await played : played;
    if (waitingFor !== null) {
      stalled = { step: index, waiting_for: waitingFor };
      break;
    }
  }
  if (stalled === null) {
    // Every prompt is awaited at the end, in the order they were made.
    for (const [name, prompt] of play.prompts) {
      const met = await waitUntil(play.world.watch, () => prompt.state !== "pending", play.deadlineS);
      if (!met) {
        stalled = { step: steps.length, waiting_for: `prompt ${name} to settle` };
        break;
      }
    }
  }
  play.model.changeEarlierAnswers(); // before the state and results are read (AGENT-LOOP-4)
  return play.observation(stalled);
}

// An export of a class, function or binding named Agent, as tsc writes it (`export class Agent`)
// or a hand-written module may (`export { Agent }`, `export { X as Agent }`).
const EXPORTS_AGENT = /\bexport\s+(?:default\s+)?(?:class|function|const|let|var)\s+Agent\b|\bexport\s*\{[^}]*\bAgent\s*(?:,|\})/;

/**
 * Whether the handshake offers run_agent: only when the student's agent.js exports an Agent. A
 * repository at lab 9.1 (the reducer alone) is then told nothing about labs 9.2-9.5, as one
 * before chapter 09 is; one whose Agent is the starter's placeholder is offered it, and its
 * cases are skipped by the placeholder's throw.
 */
export function offersAgent(directory) {
  try {
    return EXPORTS_AGENT.test(readFileSync(path.join(directory, "agent.js"), "utf8"));
  } catch {
    return false; // no agent.js (or unreadable): the cases are skipped as not offered
  }
}

/** Chapter 09's Agent operation over the export `find(modules, name, context)` resolves. */
export function agentOperations(find) {
  return {
    operations: {
      run_agent: async (modules, input, deadlineS) => runAgentOp(await find(modules, "Agent", AGENT_CONTEXT), input, deadlineS),
    },
  };
}
