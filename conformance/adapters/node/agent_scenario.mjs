// The agent tier's scenario vocabulary (spec/fixture-format.md, "Agent scenarios"), played
// against upstream pi-agent-core's low-level loop: the adapter's scripted model (a streamFn
// built on pi-ai's own AssistantMessageEventStream), scripted tools with gates, scripted
// hooks and queues, and the steps that drive them. Everything scripted lives here, in the
// adapter: the package under test only ever gets a streamFn, AgentTools and a config.
//
// Determinism: a scripted turn pushes all its events in one synchronous go when it plays;
// gates are released only by steps; waiting steps end when their condition holds or when the
// event loop is idle, so a step that can never be satisfied is reported as `stalled`, never as
// a hang (the gates, the watch and the waits are scenario_sync.mjs's, shared with loop_ops.mjs).
//
// No dependencies: Node.js 20 built-ins only (and the pi-ai the package itself depends on).

import { ProtocolError, describe, safeString } from "./failures.mjs";
import { isObject, toJson } from "./observation.mjs";
import { Gates, Watch, settle, waitUntil } from "./scenario_sync.mjs";

const copy = (value, what) => toJson(value, what);

/** The partial of a turn's message before any block, as pi-ai's faux provider starts it. */
function startPartial(message) {
  return { ...message, content: [], stopReason: "pending" };
}

/** The events of one scripted turn, pushed in one go (pi-ai 1.6.0 dist/providers/faux.js shapes). */
function pushTurn(stream, message, signal, honorAbort) {
  const partial = startPartial(message);
  if (honorAbort && signal?.aborted) {
    const aborted = { ...partial, stopReason: "aborted", errorMessage: "Request was aborted" };
    stream.push({ type: "error", reason: "aborted", error: aborted });
    stream.end(aborted);
    return;
  }
  stream.push({ type: "start", partial: { ...partial } });
  message.content.forEach((block, index) => {
    partial.content = [...partial.content, block];
    const kind = block.type === "toolCall" ? "toolcall" : block.type;
    const delta = block.type === "text" ? block.text : block.type === "thinking" ? block.thinking : JSON.stringify(block.arguments);
    stream.push({ type: `${kind}_start`, contentIndex: index, partial: { ...partial } });
    stream.push({ type: `${kind}_delta`, contentIndex: index, delta, partial: { ...partial } });
    const end = { type: `${kind}_end`, contentIndex: index, partial: { ...partial } };
    if (block.type === "toolCall") end.toolCall = block;
    else end.content = delta;
    stream.push(end);
  });
  const final = { ...message, content: [...message.content] };
  if (final.stopReason === "error" || final.stopReason === "aborted") stream.push({ type: "error", reason: final.stopReason, error: final });
  else stream.push({ type: "done", reason: final.stopReason, message: final });
  stream.end(final);
}

/** The scripted model: a streamFn playing `turns` in order and recording every request. */
export function scriptedModel(piAi, turns, state) {
  if (!Array.isArray(turns)) throw new ProtocolError("model.turns must be an array");
  return (model, context, options) => {
    const index = state.requests.length;
    state.requests.push({ messages: copy(context.messages, "the request's messages"), has_signal: options?.signal !== undefined });
    state.models.push(model?.id ?? null);
    state.watch.poke();
    const turn = turns[index];
    if (isObject(turn) && "throw" in turn) throw new Error(String(turn.throw));
    const stream = piAi.createAssistantMessageEventStream();
    const message = isObject(turn) && isObject(turn.message) ? structuredClone(turn.message) : null;
    const play = () => {
      if (message === null) {
        const missing = { role: "assistant", content: [], api: "scripted", provider: "scripted", model: model?.id ?? "scripted", usage: ZERO_USAGE, stopReason: "error", errorMessage: `scripted model: no turn ${index + 1}`, timestamp: 0 };
        stream.push({ type: "error", reason: "error", error: missing });
        stream.end(missing);
        return;
      }
      pushTurn(stream, message, options?.signal, turn.honor_abort !== false);
    };
    if (isObject(turn) && typeof turn.gate === "string") state.gates.wait(`turn:${turn.gate}`).then(play);
    else play();
    return stream;
  };
}

const ZERO_USAGE = { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, totalTokens: 0, cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 } };

/** One scripted AgentTool: runs its script's actions in order on every execution, recording what it received. */
export function scriptedTool(spec, state) {
  if (!isObject(spec) || typeof spec.name !== "string") throw new ProtocolError(`a scripted tool needs a name, not ${safeString(spec)}`);
  const script = Array.isArray(spec.script) ? spec.script : [{ return: { content: [{ type: "text", text: "ok" }], details: {} } }];
  const tool = {
    name: spec.name,
    label: spec.label ?? spec.name,
    description: spec.description ?? spec.name,
    parameters: structuredClone(spec.parameters ?? { type: "object", properties: {} }),
    async execute(toolCallId, params, signal, onUpdate) {
      state.received.push({
        tool: spec.name,
        call_id: toolCallId,
        params: copy(params, "the tool's params"),
        signal: signal === undefined ? "absent" : signal === state.signal ? "same" : "other",
        on_update: typeof onUpdate === "function" ? "function" : "absent",
      });
      state.started.push(spec.name, toolCallId);
      state.watch.poke();
      return runScript(script, { toolCallId, onUpdate, state });
    },
  };
  if (spec.execution_mode !== undefined) tool.executionMode = spec.execution_mode;
  return tool;
}

async function runScript(script, { onUpdate, state }) {
  for (const action of script) {
    if (!isObject(action)) throw new ProtocolError(`a tool action is an object, not ${safeString(action)}`);
    if ("wait" in action) await state.gates.wait(`tool:${action.wait}`);
    else if ("progress" in action) onUpdate?.(structuredClone(action.progress));
    else if ("abort" in action) state.abort();
    else if ("throw" in action) throw new Error(String(action.throw));
    else if ("return" in action) return structuredClone(action.return);
    else throw new ProtocolError(`unknown tool action ${JSON.stringify(Object.keys(action))}`);
  }
  return { content: [], details: {} };
}

/** A scripted hook: per tool call id, what it returns (or throws); every call recorded in `hooks`. */
export function scriptedHook(name, table, state) {
  if (!isObject(table)) throw new ProtocolError(`${name} must be a mapping of tool call ids`);
  return async (context, signal) => {
    const record = { hook: name, toolCallId: context.toolCall.id, args: copy(context.args, "the hook's args") };
    if (name === "after") record.isError = context.isError;
    record.signal = signal === state.signal ? "same" : signal === undefined ? "absent" : "other";
    state.hooks.push(record);
    const answer = table[context.toolCall.id];
    if (isObject(answer) && "throw" in answer) throw new Error(String(answer.throw));
    if (isObject(answer) && answer.abort === true) {
      state.abort();
      return undefined;
    }
    return answer === undefined || answer === null ? undefined : structuredClone(answer);
  };
}

/** A scripted queue poll: each call returns the next list of `polls` (then []), counted in `polls`. */
export function scriptedQueue(name, polls, state) {
  if (!Array.isArray(polls)) throw new ProtocolError(`${name} must be a list of polls`);
  return async () => {
    const index = state.polls[name]++;
    return structuredClone(polls[index] ?? []);
  };
}

const roles = (messages) => (Array.isArray(messages) ? messages.map((message) => message?.role ?? null) : null);
const signalIdentity = (signal, state) => (signal === state.signal ? "same" : signal === undefined ? "absent" : "other");

/** What one call of a turn function saw, in the compact form `turn_functions` records (spec/fixture-format.md). */
const TURN_RECORDS = {
  prepare_request: (request, signal, state) => ({ model: request?.model?.id ?? null, thinkingLevel: request?.thinkingLevel ?? null, messages: roles(request?.context?.messages), signal: signalIdentity(signal, state) }),
  finish_turn: (turn, signal, state) => ({ stopReason: turn?.message?.stopReason ?? null, toolResults: (turn?.toolResults ?? []).map((result) => result.toolCallId), messages: roles(turn?.context?.messages), newMessages: roles(turn?.newMessages), signal: signalIdentity(signal, state) }),
  prepare_next_turn: (turn) => ({ stopReason: turn?.message?.stopReason ?? null, toolResults: (turn?.toolResults ?? []).map((result) => result.toolCallId), messages: roles(turn?.context?.messages), newMessages: roles(turn?.newMessages) }),
  transform_context: (messages, signal, state) => ({ messages: roles(messages), signal: signalIdentity(signal, state) }),
};

/** A scripted answer's runtime update: a replacement context keeps the case's tools (`messages` only are scripted). */
function turnUpdate(answer, tools) {
  const update = structuredClone(answer);
  if (isObject(update.context)) {
    update.context = { messages: Array.isArray(update.context.messages) ? update.context.messages : [] };
    if (tools.length > 0) update.context.tools = tools;
  }
  return update;
}

/**
 * A scripted turn function (`prepare_request`, `finish_turn`, `prepare_next_turn`, `transform_context`): call by
 * call, the next answer of `answers` (then null); every call recorded in `turn_functions[name]`. An answer `{throw: M}` throws; null
 * returns undefined (transformContext: the messages it got); transformContext's `{keep_last: N}` returns the last N.
 */
export function scriptedTurnFunction(name, answers, state, tools) {
  if (!Array.isArray(answers)) throw new ProtocolError(`${name} must be a list of answers, one per call`);
  const recordOf = TURN_RECORDS[name];
  state.turnFunctions[name] = [];
  let calls = 0;
  return async (value, signal) => {
    // `after`: the last event emitted before the call, which places the call among the events.
    const after = state.raw.length > 0 ? traceLine(state.raw[state.raw.length - 1]) : null;
    state.turnFunctions[name].push({ ...recordOf(value, signal, state), after });
    const answer = answers[calls++] ?? null;
    if (isObject(answer) && "throw" in answer) throw new Error(String(answer.throw));
    if (name === "transform_context") {
      if (isObject(answer) && Number.isInteger(answer.keep_last)) return value.slice(Math.max(0, value.length - answer.keep_last));
      if (isObject(answer) && Array.isArray(answer.messages)) return structuredClone(answer.messages);
      return value;
    }
    return isObject(answer) ? turnUpdate(answer, tools) : undefined;
  };
}

/** A compact line per event: its type, and the role, assistant event or tool call id it is about. */
export function traceLine(event) {
  if (event.type.startsWith("message_")) {
    const role = event.message?.role;
    const what = event.type === "message_update" ? event.assistantMessageEvent?.type : role;
    return `${event.type}:${what}`;
  }
  if (event.type.startsWith("tool_execution_")) return `${event.type}:${event.toolCallId}`;
  return event.type;
}

const WAITING = {
  await_started(state, value) {
    const names = Array.isArray(value) ? value.map(String) : [String(value)];
    return { condition: () => names.every((name) => state.started.includes(name)), what: `tools ${names.join(", ")} to start` };
  },
  await_event(state, value) {
    if (!isObject(value)) throw new ProtocolError("await_event needs a mapping of event fields");
    const fits = (event) => Object.entries(value).every(([key, wanted]) => event[key] === wanted);
    return { condition: () => state.raw.some(fits), what: `an event ${JSON.stringify(value)}` };
  },
  await_run(state) {
    return { condition: () => state.run.settled, what: "the run to settle" };
  },
};

/** Play the steps in order; a waiting step that cannot be satisfied once the loop is idle stops the play, as `stalled`. */
export async function playSteps(steps, state, start, deadlineS) {
  for (const [index, step] of steps.entries()) {
    const [name, value] = typeof step === "string" ? [step, null] : isObject(step) && Object.keys(step).length === 1 ? Object.entries(step)[0] : [null, null];
    if (name === "start") start();
    else if (name === "release") state.gates.open(`tool:${value}`);
    else if (name === "complete") state.gates.open(`turn:${value}`);
    else if (name === "abort") state.abort();
    else if (name === "settle") await settle(deadlineS);
    else if (Object.hasOwn(WAITING, name)) {
      const { condition, what } = WAITING[name](state, value);
      if (!(await waitUntil(state.watch, condition, deadlineS))) return { step: index, waiting_for: what };
    } else throw new ProtocolError(`unknown step ${safeString(step)}`);
  }
  return null;
}

export { Gates, Watch, describe };
