// The `agent` operation of profile pi-agent-core-1 (spec/pi-agent-core-1/spec.md, section 7):
// one upstream `Agent` (dist/agent.js) driven through a case's steps, in the agent tier's
// scenario vocabulary (spec/fixture-format.md, "The stateful agent" and "Agent scenarios").
// The Agent gets the adapter's scripted streamFn and AgentTools (agent_scenario.mjs, the same
// ones `agent_loop` plays) and the case's scripted subscribers; everything it does is observed
// from outside, through its public API only.
//
// Determinism: scripted turns push their events in one synchronous go, gates (held turns,
// tools, listeners that wait) are opened only by steps, and a waiting step ends when its
// condition holds or the event loop is idle, so a step that can never be satisfied is
// reported as `stalled`, never as a hang.
//
// No dependencies: Node.js 20 built-ins only (and the package under test).

import { NotImplemented, ProtocolError, Threw, describe, safeString } from "./failures.mjs";
import { isObject, toJson } from "./observation.mjs";
import { Gates, Watch, scriptedHook, scriptedModel, scriptedTool, traceLine } from "./agent_scenario.mjs";
import { settle, waitUntil } from "./scenario_sync.mjs";

/** The model every Agent case runs with (initialState.model): the scripted model agent_loop uses. */
export const SCRIPTED_MODEL = { id: "scripted-1", name: "scripted", api: "scripted", provider: "scripted", baseUrl: "", reasoning: false, input: ["text"], cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 }, contextWindow: 1000, maxTokens: 100 };

const messageOf = (error) => (error instanceof Error ? error.message : String(error));

/** What `fn()` threw (its message), or null. */
function attempt(fn) {
  try {
    fn();
    return null;
  } catch (error) {
    return messageOf(error);
  }
}

/** The Agent's options from the case's `agent` settings, the scripted tools and the scripted hooks. */
function agentOptions(settings, tools, streamFn, play) {
  const initialState = { model: structuredClone(SCRIPTED_MODEL), tools };
  if (settings.system_prompt !== undefined) initialState.systemPrompt = String(settings.system_prompt);
  if (settings.messages !== undefined) initialState.messages = structuredClone(settings.messages);
  if (settings.thinking_level !== undefined) initialState.thinkingLevel = String(settings.thinking_level);
  const options = { streamFn, initialState };
  if (settings.steering_mode !== undefined) options.steeringMode = String(settings.steering_mode);
  if (settings.follow_up_mode !== undefined) options.followUpMode = String(settings.follow_up_mode);
  if (settings.tool_execution !== undefined) options.toolExecution = String(settings.tool_execution);
  if (settings.before_tool_call !== undefined) options.beforeToolCall = scriptedHook("before", settings.before_tool_call, play);
  if (settings.after_tool_call !== undefined) options.afterToolCall = scriptedHook("after", settings.after_tool_call, play);
  return options;
}

/** A subscriber's `when`: the event's type, and when given its message role, tool call id and occurrence. */
function fits(when, event) {
  if (!isObject(event) || event.type !== when.type) return false;
  if (when.role !== undefined && event.message?.role !== when.role) return false;
  if (when.toolCallId !== undefined && event.toolCallId !== when.toolCallId) return false;
  return true;
}

class Play {
  constructor(modules, input) {
    this.gates = new Gates();
    this.watch = new Watch();
    this.requests = [];
    this.models = []; // scriptedModel records each request's model id; agent cases do not observe it
    this.signals = [];
    this.received = [];
    this.started = [];
    this.hooks = [];
    this.raw = [];
    this.events = [];
    this.promises = new Map(); // name -> {status, error, order}
    this.snapshots = {};
    this.actions = [];
    this.lastSignal = undefined;
    const Agent = modules.core.Agent;
    if (typeof Agent !== "function") throw new NotImplemented("Agent is not exported");
    const tools = (input.tools ?? []).map((spec) => scriptedTool(spec, this));
    const model = scriptedModel(modules.piAi, input.model?.turns ?? [], this);
    const streamFn = (chosen, context, options) => {
      this.recordSignal(options?.signal);
      return model(chosen, context, options);
    };
    const settings = isObject(input.agent) ? input.agent : {};
    try {
      this.agent = new Agent(agentOptions(settings, tools, streamFn, this));
    } catch (error) {
      throw new Threw(`new Agent() threw ${describe(error)}`);
    }
    this.agent.subscribe((event) => this.record(event));
    this.subscribers = new Map();
    for (const spec of input.subscribers ?? []) {
      if (!isObject(spec) || typeof spec.name !== "string") throw new ProtocolError(`a subscriber needs a name, not ${safeString(spec)}`);
      this.subscribers.set(spec.name, { spec, lines: [], unsubscribe: null, counts: new Map() });
    }
    for (const [name, subscriber] of this.subscribers) if (subscriber.spec.subscribed !== false) this.subscribe(name);
  }

  /** The run's signal, as the scripted tools and hooks compare theirs with it. */
  get signal() {
    return this.agent?.signal;
  }

  abort() {
    this.agent.abort();
  }

  recordSignal(signal) {
    const identity = signal === undefined ? "absent" : this.lastSignal === undefined ? "first" : signal === this.lastSignal ? "same" : "new";
    this.signals.push({ identity, aborted: signal?.aborted === true });
    if (signal !== undefined) this.lastSignal = signal;
  }

  record(event) {
    this.raw.push(event);
    this.events.push(toJson(event, `the ${event?.type} event`));
    this.watch.poke();
  }

  subscribe(name) {
    const subscriber = this.subscribers.get(name);
    if (subscriber === undefined) throw new ProtocolError(`no subscriber ${JSON.stringify(name)}`);
    subscriber.unsubscribe = this.agent.subscribe((event, signal) => this.deliver(subscriber, event, signal));
  }

  unsubscribe(name) {
    const subscriber = this.subscribers.get(name);
    if (subscriber === undefined) throw new ProtocolError(`no subscriber ${JSON.stringify(name)}`);
    subscriber.unsubscribe?.();
  }

  /** A scripted listener: its trace line, then each rule that names the event plays its actions, awaited in order. */
  async deliver(subscriber, event, signal) {
    const line = traceLine(event);
    subscriber.lines.push(line);
    for (const [index, rule] of (subscriber.spec.rules ?? []).entries()) {
      const when = isObject(rule.when) ? rule.when : {};
      if (!fits(when, event)) continue;
      const seen = (subscriber.counts.get(index) ?? 0) + 1;
      subscriber.counts.set(index, seen);
      if (when.nth !== undefined && when.nth !== seen) continue;
      for (const action of rule.do ?? []) await this.act(subscriber.spec.name, line, action, event, signal);
    }
  }

  /** One action of a subscriber (`by` its name) or of the steps (`by: steps`, `at: null`). */
  async act(by, at, action, event, signal) {
    const [name, value] = typeof action === "string" ? [action, null] : isObject(action) && Object.keys(action).length === 1 ? Object.entries(action)[0] : [null, null];
    if (name === "throw") throw new Error(String(value));
    if (name === "wait") {
      this.actions.push({ by, at, action: "wait", gate: String(value) });
      await this.gates.wait(`listener:${value}`);
      return;
    }
    const entry = { by, at, action: name };
    if (name === "snapshot") Object.assign(entry, this.view(true));
    else if (name === "record") {
      entry.event = toJson(event, "an event a subscriber received");
      entry.signal = signal === undefined ? "absent" : signal === this.agent.signal ? "same" : "other";
    } else if (name === "subscribe") this.subscribe(String(value));
    else if (name === "unsubscribe") this.unsubscribe(String(value));
    else if (name === "prompt" || name === "continue" || name === "wait_for_idle") entry.error = this.call(name, value);
    else if (name === "abort") entry.error = attempt(() => this.agent.abort());
    else if (name === "steer") entry.error = attempt(() => this.agent.steer(structuredClone(value)));
    else if (name === "follow_up") entry.error = attempt(() => this.agent.followUp(structuredClone(value)));
    else if (name === "reset") entry.error = attempt(() => this.agent.reset());
    else if (name === "clear_steering_queue") entry.error = attempt(() => this.agent.clearSteeringQueue());
    else if (name === "clear_follow_up_queue") entry.error = attempt(() => this.agent.clearFollowUpQueue());
    else if (name === "clear_all_queues") entry.error = attempt(() => this.agent.clearAllQueues());
    else if (name === "steering_mode") entry.error = attempt(() => (this.agent.steeringMode = String(value)));
    else if (name === "follow_up_mode") entry.error = attempt(() => (this.agent.followUpMode = String(value)));
    else throw new ProtocolError(`unknown agent action ${safeString(action)}`);
    this.actions.push(entry);
  }

  /**
   * `prompt`, `continue` or `waitForIdle`, not awaited: its promise is kept under its name (`as`,
   * default p1, p2 ...). What it threw synchronously is returned (and its outcome is `rejected`).
   */
  call(kind, value) {
    const spec = kind === "prompt" ? (isObject(value) ? value : { text: value }) : isObject(value) ? value : value === null ? {} : { as: value };
    const name = String(spec.as ?? `p${this.promises.size + 1}`);
    if (this.promises.has(name)) throw new ProtocolError(`two calls are named ${JSON.stringify(name)}`);
    const outcome = { status: "pending", error: null };
    this.promises.set(name, outcome);
    let promise;
    try {
      if (kind === "continue") promise = this.agent.continue();
      else if (kind === "wait_for_idle") promise = this.agent.waitForIdle();
      else if ("messages" in spec) promise = this.agent.prompt(structuredClone(spec.messages));
      else if ("message" in spec) promise = this.agent.prompt(structuredClone(spec.message));
      else promise = this.agent.prompt(String(spec.text ?? ""));
    } catch (error) {
      Object.assign(outcome, { status: "rejected", error: { message: messageOf(error) } });
      return messageOf(error);
    }
    Promise.resolve(promise)
      .then(
        () => (outcome.status = "fulfilled"),
        (error) => Object.assign(outcome, { status: "rejected", error: { message: messageOf(error) } }),
      )
      .finally(() => this.watch.poke());
    return null;
  }

  /** The Agent's state, queues and signal now, as JSON; with `calls`, each call's status so far (snapshots). */
  /** What a reading method returns, as JSON; null where the version lacks it (its cases then fail there, not the adapter). */
  query(name) {
    return typeof this.agent[name] === "function" ? toJson(this.agent[name](), `${name}()`) : null;
  }

  view(withCalls = false) {
    const state = this.agent.state;
    const signal = this.agent.signal;
    return {
      state: toJson(
        {
          systemPrompt: state.systemPrompt,
          thinkingLevel: state.thinkingLevel,
          tools: state.tools.map((tool) => tool.name),
          messages: state.messages,
          isStreaming: state.isStreaming,
          streamingMessage: state.streamingMessage ?? null,
          pendingToolCalls: [...state.pendingToolCalls],
          errorMessage: state.errorMessage ?? null,
        },
        "the Agent's state",
      ),
      queues: {
        steeringMode: this.agent.steeringMode,
        followUpMode: this.agent.followUpMode,
        hasQueuedMessages: this.query("hasQueuedMessages"),
        peek: this.query("peekQueuedMessages"),
      },
      signal: signal === undefined ? "absent" : signal.aborted ? "aborted" : "live",
      ...(withCalls ? { calls: Object.fromEntries([...this.promises].map(([name, outcome]) => [name, outcome.status])) } : {}),
    };
  }
}

const WAITS = {
  await_prompt(play, value) {
    const outcome = play.promises.get(String(value));
    if (outcome === undefined) throw new ProtocolError(`no call ${JSON.stringify(value)} before this step`);
    return { condition: () => outcome.status !== "pending", what: `call ${value} to settle` };
  },
  await_request(play, value) {
    const count = Number(value);
    return { condition: () => play.requests.length >= count, what: `model request ${count} to start` };
  },
  await_started(play, value) {
    const names = Array.isArray(value) ? value.map(String) : [String(value)];
    return { condition: () => names.every((name) => play.started.includes(name)), what: `tools ${names.join(", ")} to start` };
  },
  await_event(play, value) {
    if (!isObject(value)) throw new ProtocolError("await_event needs a mapping of event fields");
    return { condition: () => play.raw.some((event) => fits(value, event)), what: `an event ${JSON.stringify(value)}` };
  },
};

const CONTROLS = new Set(["abort", "steer", "follow_up", "reset", "prompt", "continue", "wait_for_idle", "clear_steering_queue", "clear_follow_up_queue", "clear_all_queues", "steering_mode", "follow_up_mode", "subscribe", "unsubscribe"]);

/** Play the steps; then wait for every call in the order made. The step that waited in vain, or null. */
async function playSteps(play, steps, deadlineS) {
  for (const [index, step] of steps.entries()) {
    const [name, value] = typeof step === "string" ? [step, null] : isObject(step) && Object.keys(step).length === 1 ? Object.entries(step)[0] : [null, null];
    if (Object.hasOwn(WAITS, name)) {
      const { condition, what } = WAITS[name](play, value);
      if (!(await waitUntil(play.watch, condition, deadlineS))) return { step: index, waiting_for: what };
    } else if (name === "release") play.gates.open(`tool:${value}`);
    else if (name === "complete") play.gates.open(`turn:${value}`);
    else if (name === "resume") play.gates.open(`listener:${value}`);
    else if (name === "settle") await settle(deadlineS);
    else if (name === "snapshot") play.snapshots[String(value)] = play.view(true);
    else if (CONTROLS.has(name)) await play.act("steps", null, step, undefined, undefined);
    else throw new ProtocolError(`unknown agent step ${safeString(step)}`);
  }
  for (const [name, outcome] of play.promises) {
    if (!(await waitUntil(play.watch, () => outcome.status !== "pending", deadlineS))) return { step: steps.length, waiting_for: `call ${name} to settle` };
  }
  return null;
}

/** The `agent` operation: build the Agent, play the steps, observe everything. */
export async function playAgent(modules, input) {
  const play = new Play(modules, input);
  const steps = input.steps ?? [];
  if (!Array.isArray(steps)) throw new ProtocolError("steps must be a list");
  const stalled = await playSteps(play, steps, input.settle_deadline_s ?? 0.25);
  const final = play.view();
  return {
    events: play.events,
    trace: play.raw.map(traceLine),
    requests: play.requests.map((request) => ({ messages: request.messages })),
    signals: play.signals,
    prompts: Object.fromEntries([...play.promises].map(([name, outcome]) => [name, { status: outcome.status, error: outcome.error }])),
    state: final.state,
    queues: final.queues,
    signal: final.signal,
    snapshots: play.snapshots,
    deliveries: Object.fromEntries([...play.subscribers].map(([name, subscriber]) => [name, subscriber.lines])),
    actions: play.actions,
    received: play.received,
    hooks: play.hooks,
    stalled,
  };
}
