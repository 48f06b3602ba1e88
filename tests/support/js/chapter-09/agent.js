// Chapter 09's agent module, as the course compiles src/agent.ts to dist/src/agent.js: written
// from spec/spec.md section 11.1 (AGENT-STATE-1..8) for the course adapter's tests. Only the
// reducer (lab 9.1) is here: the Agent's own labs (9.2-9.5) have no cases yet, and the Agent
// needs chapter 07's agent-loop.js, which these projects do not have.

/** A deep copy: a state's transcript shares nothing with what the caller holds (AGENT-STATE-3). */
const copyOf = (value) => structuredClone(value);

/** AGENT-STATE-4: only the active run's events count. */
function isActiveRun(state, event) {
  return state.status === "running" && state.activeRunId === event.runId;
}

/** AGENT-STATE-2: a new run; the transcript grows by the system patch (if any) and the user message. */
function started(state, event) {
  const { lastReason: _previousReason, ...kept } = state;
  const added = event.system ? [event.system, event.message] : [event.message];
  return {
    ...kept,
    status: "running",
    activeRunId: event.runId,
    messages: copyOf([...state.messages, ...added]),
    streamingText: "",
    pendingToolCallIds: [],
  };
}

/** AGENT-STATE-8: idle again; the run's transcript replaces the state's. */
function ended(state, result) {
  return {
    status: "idle",
    messages: copyOf(result.messages),
    lastReason: result.reason,
    streamingText: "",
    pendingToolCallIds: [],
    diagnostics: [...state.diagnostics],
  };
}

/** AGENT-STATE-6: every copy of a finished call's id leaves the pending list. */
function withoutPending(state, loop) {
  const finished = loop.result.toolCallId;
  return { ...state, pendingToolCallIds: state.pendingToolCallIds.filter((id) => id !== finished) };
}

/** AGENT-STATE-5..7: what each loop event changes; a type not listed changes nothing. */
const LOOP_CHANGES = {
  model_event: (state, loop) =>
    loop.event.type === "text_delta" ? { ...state, streamingText: `${state.streamingText}${loop.event.delta}` } : state,
  tool_start: (state, loop) => ({ ...state, pendingToolCallIds: [...state.pendingToolCallIds, loop.call.id] }),
  tool_end: withoutPending,
  tool_skipped: withoutPending,
  assistant_message: (state) => ({ ...state, streamingText: "" }),
};

/** The state after `event`, never changing `state` or `event` (AGENT-STATE-1). */
export function reduceAgentState(state, event) {
  if (event.type === "run_start") return started(state, event);
  if (!isActiveRun(state, event)) return state;
  if (event.type === "run_end") return ended(state, event.result);
  const change = Object.hasOwn(LOOP_CHANGES, event.event.type) ? LOOP_CHANGES[event.event.type] : null;
  return change === null ? state : change(state, event.event);
}
