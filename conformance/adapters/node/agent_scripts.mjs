// What a run_agent case scripts besides chapter 07's tools and executor (loop_ops.mjs): the model,
// the adapter's way to abort, and the subscribers. The counterpart of
// conformance/adapters/agent_scripts.py; all of it is the adapter's own, never student code
// (spec/fixture-format.md, "The stateful agent"):
//
// - agentModel plays the case's turns with the reference ScriptedModel (chapter 04), one turn per
//   stream() call; a turn {gate: T, message} is held until a step {complete: T} (the course's
//   ManualModel) and answers an abort at once unless it says honor_abort: false; a held turn
//   {gate: T, reject: MESSAGE} ignores abort and, once completed, fails: iterating its stream and
//   its result() reject with that error (a provider failing mid-request); a turn
//   {throw: MESSAGE} makes stream() throw; a turn with changed_later: true rewrites the texts of
//   the message it answered with at the next request and when the scenario ends. It records every
//   request and, per request, whether its signal is the previous request's.
// - Aborts calls the Agent's abort() and wakes every held turn, so it looks at its signal again.
// - subscriber is a scripted listener: each event it receives is a trace line, and its rules play
//   actions on the events they name.
//
// No dependencies: Node.js 20 built-ins only.

import { isObject, toJson, track } from "./observation.mjs";
import { scriptedError } from "./loop_ops.mjs";
import { AssistantMessageEventStream } from "./reference/event-stream.mjs";
import { ABORTED_MESSAGE, ScriptedModel, finish, play, terminalMessage } from "./reference/scripted-model.mjs";
import { assistantMessage } from "./reference/types.mjs";

/** The text a changed_later turn writes into the message it answered with, once it is answered. */
export const CHANGED_LATER = "changed by the model after it answered";

const isAborted = (signal) => signal !== undefined && signal !== null && signal.aborted === true;

/** The adapter's way to abort the Agent: abort() calls the Agent's and wakes every held turn. */
export class Aborts {
  constructor() {
    this.agent = null;
    this.wakers = [];
  }

  abort() {
    try {
      this.agent.abort();
    } finally {
      const wakers = this.wakers.splice(0);
      for (const wake of wakers) wake();
    }
  }

  /** A promise that resolves at the next abort. */
  next() {
    return new Promise((resolve) => this.wakers.push(resolve));
  }
}

/** The case's model: stream(context, {signal}) plays the next turn, recording the request and its signal. */
export function agentModel(turns, world, aborts) {
  if (!Array.isArray(turns)) throw new Error("model.turns must be an array");
  const answers = []; // the tracked results of changed_later turns
  let lastSignal;
  const model = {
    requests: [],
    signals: [],

    stream(context, options) {
      model.changeEarlierAnswers();
      try {
        model.requests.push(toJson(context, "a model request"));
      } catch (error) {
        model.requests.push(`<not a JSON value: ${error.message}>`);
      }
      const signal = isObject(options) ? options.signal : undefined;
      recordSignal(signal);
      world.watch.poke();
      const turn = isObject(turns[model.requests.length - 1]) ? turns[model.requests.length - 1] : {};
      if ("throw" in turn) throw scriptedError(turn.throw);
      if ("reject" in turn) return failingStream(world.gates.get(`turn:${turn.gate}`).promise.then(() => Promise.reject(scriptedError(turn.reject))));
      let stream;
      if (!("gate" in turn)) {
        // A played turn (or, past the script, the ScriptedModel's exhaustion error) at once.
        stream = new ScriptedModel("message" in turn ? [structuredClone(turn.message)] : []).stream(context, { signal });
      } else {
        stream = new AssistantMessageEventStream();
        hold(stream, turn, signal);
      }
      if (turn.changed_later === true) answers.push(track(Promise.resolve(stream.result()))[0]);
      return stream;
    },

    /** What a changed_later turn does once answered: the message it resolved with gets new texts (AGENT-LOOP-4). */
    changeEarlierAnswers() {
      for (const answer of answers) {
        const message = answer.state === "resolved" ? answer.value : null;
        for (const block of isObject(message) && Array.isArray(message.content) ? message.content : []) {
          if (isObject(block) && block.type === "text") block.text = CHANGED_LATER;
        }
      }
    },
  };

  function recordSignal(signal) {
    const absent = signal === undefined || signal === null;
    const identity = absent ? "absent" : model.signals.length === 0 ? "first" : signal === lastSignal ? "same" : "new";
    model.signals.push({ identity, aborted: isAborted(signal) });
    lastSignal = signal;
    world.signal = signal; // a tool's signal is "same" when it is this request's (AGENT-ABORT-3)
  }

  /** Wait for the turn's gate (or, when it honours abort, the signal), then play it. */
  async function hold(stream, turn, signal) {
    const honor = turn.honor_abort !== false;
    const gate = world.gates.get(`turn:${turn.gate}`);
    while (!gate.opened && !(honor && isAborted(signal))) await Promise.race([gate.promise, aborts.next()]);
    if (honor && isAborted(signal)) finish(stream, assistantMessage([], "aborted", { errorMessage: ABORTED_MESSAGE }));
    else play(stream, terminalMessage(structuredClone(turn.message)));
  }

  return model;
}

/** A reject turn's stream: no events; once its gate opens, iteration and result() reject with `failure`'s error. */
function failingStream(failure) {
  failure.catch(() => {}); // a loop that only iterates never asks result(): no unhandled rejection
  return {
    async *[Symbol.asyncIterator]() {
      await failure;
    },
    result() {
      return failure;
    },
  };
}

/** An Agent event's trace line (conformance/model/traces.py's agent_line). */
export function agentLine(event) {
  const field = (value, keys) => keys.reduce((item, key) => (isObject(item) ? item[key] : undefined), value);
  const show = (value) => (value === undefined || value === null ? "None" : String(value));
  const kind = isObject(event) ? show(event.type) : "None";
  const run = show(field(event, ["runId"]));
  if (kind === "loop") return `loop:${run}:${loopLine(field(event, ["event"]))}`;
  if (kind === "run_end") return `run_end:${run}:${show(field(event, ["result", "reason"]))}`;
  return `${kind}:${run}`;
}

/** What names a loop event in its trace line, by type (traces.LOOP_TRACE_FIELDS). */
const LOOP_TRACE_FIELDS = {
  model_event: ["event", "type"],
  assistant_message: ["message", "stopReason"],
  tool_start: ["call", "id"],
  tool_progress: ["callId"],
  tool_end: ["result", "toolCallId"],
  tool_skipped: ["result", "toolCallId"],
  turn_end: ["reason"],
};

function loopLine(event) {
  const kind = isObject(event) ? String(event.type) : "None";
  const fields = Object.hasOwn(LOOP_TRACE_FIELDS, kind) ? LOOP_TRACE_FIELDS[kind] : null;
  if (fields === null) return kind;
  const value = fields.reduce((item, key) => (isObject(item) ? item[key] : undefined), event);
  return `${kind}:${value === undefined || value === null ? "None" : String(value)}`;
}

/** Whether an Agent event (as JSON) is the one a subscriber's `when` names. */
export function ruleMatches(rule, event) {
  if (!isObject(event) || event.type !== rule.type) return false;
  if ("runId" in rule && event.runId !== rule.runId) return false;
  return !("loop" in rule) || (isObject(event.event) && event.event.type === rule.loop);
}

/** A scripted listener: each event it gets is a trace line; its rules play `act(subscriber, line, action, event)`. */
export function subscriber(spec, act) {
  const rules = Array.isArray(spec.rules) ? spec.rules : [];
  const self = {
    name: String(spec.name),
    atStart: spec.subscribed !== false,
    unsubscribe: null,
    lines: [],
    /** A new listener to subscribe (a new function each time, as a renderer subscribing again would pass). */
    listen() {
      return (event) => {
        const seen = toJson(event, "an event a subscriber received");
        const line = agentLine(seen);
        self.lines.push(line);
        for (const rule of rules) {
          if (!ruleMatches(isObject(rule.when) ? rule.when : {}, seen)) continue;
          for (const action of Array.isArray(rule.do) ? rule.do : []) act(self, line, action, event);
        }
      };
    },
  };
  return self;
}
