// Chapter 09's agent module, as the course compiles src/agent.ts to dist/src/agent.js: written
// from spec/spec.md section 11 for the course adapter's tests: the reducer (lab 9.1,
// AGENT-STATE-1..8) and the Agent (labs 9.2-9.5, AGENT-RUN-*, AGENT-SUB-*, AGENT-COPY-1,
// AGENT-ABORT-*, AGENT-QUEUE-*), which plays chapter 09's loop (make_variants.mjs's CHAPTER_09_LOOP).
import { runAgentLoop } from "./agent-loop.js";
import { assistantMessage, currentSystemPrompt, userMessage } from "./types.js";

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

const BUSY = "Agent is busy";
const STEERING_CLOSED = "steering 只在当前 run 尚未结束时有意义";
const FOLLOW_UP_CLOSED = "follow-up 只在当前 run 尚未结束时排队";

const messageOf = (error) => (error instanceof Error ? error.message : String(error));

/** AGENT-RUN-6: the run's system message, appended before its user message; undefined without the option. */
function systemPatch(system) {
  if (!system) return undefined;
  return { role: "system", content: system.content ?? "", ...(system.sections ? { sections: copyOf(system.sections) } : {}), timestamp: Date.now() };
}

/** A transcript, one run at a time, subscribers, and the user's controls (abort, steer, follow up). */
export class Agent {
  #options;
  #state;
  #listeners = new Set();
  #queued = [];
  #delivering = false;
  #active = undefined;
  #nextRunId = 1;

  /** AGENT-RUN-1: idle; a non-empty systemPrompt opens the transcript. */
  constructor(options) {
    this.#options = options;
    const messages = options.systemPrompt ? [{ role: "system", content: options.systemPrompt, timestamp: 0 }] : [];
    this.#state = { status: "idle", messages, streamingText: "", pendingToolCallIds: [], diagnostics: [] };
  }

  /** AGENT-COPY-1: a copy. */
  getState() {
    return copyOf(this.#state);
  }

  /** AGENT-RUN-2: the transcript's system messages, replayed. */
  get systemPrompt() {
    return currentSystemPrompt(this.#state.messages);
  }

  /** AGENT-SUB-1: every later event; the returned function stops that. */
  subscribe(listener) {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  /** AGENT-SUB-2/4: queued while another is delivered; each reduced before its listeners see a copy. */
  #emit(event) {
    this.#queued.push(event);
    if (this.#delivering) return;
    this.#delivering = true;
    try {
      while (this.#queued.length > 0) {
        const next = this.#queued.shift();
        this.#state = reduceAgentState(this.#state, next);
        for (const listener of [...this.#listeners]) this.#notify(listener, copyOf(next));
      }
    } finally {
      this.#delivering = false;
    }
  }

  /** AGENT-SUB-3: a throwing listener is a diagnostic, nothing more. */
  #notify(listener, event) {
    try {
      listener(event);
    } catch (error) {
      this.#state = { ...this.#state, diagnostics: [...this.#state.diagnostics, `subscriber: ${messageOf(error)}`] };
    }
  }

  /** AGENT-QUEUE-1 */
  steer(value) {
    if (!this.#active?.acceptingInput) throw new Error(STEERING_CLOSED);
    this.#active.steering.push(userMessage(value));
  }

  /** AGENT-QUEUE-1 */
  followUp(value) {
    if (!this.#active?.acceptingInput) throw new Error(FOLLOW_UP_CLOSED);
    this.#active.followUps.push(userMessage(value));
  }

  /** AGENT-ABORT-1: the active run's signal; nothing while idle. */
  abort() {
    this.#active?.controller.abort();
  }

  /** AGENT-RUN-3..6: one run; resolves with a copy of its result, rejects while another is active. */
  async prompt(value, options = {}) {
    if (this.#active) throw new Error(BUSY);
    const system = systemPatch(options.system);
    const message = userMessage(value);
    const messages = [...copyOf(this.#state.messages), ...(system ? [copyOf(system)] : []), copyOf(message)];
    const run = { id: this.#nextRunId++, controller: new AbortController(), steering: [], followUps: [], acceptingInput: true };
    this.#active = run;
    this.#emit({ type: "run_start", runId: run.id, message, ...(system ? { system } : {}) });
    let result;
    try {
      result = await runAgentLoop({
        model: this.#options.model,
        tools: this.#options.tools,
        context: { messages },
        signal: run.controller.signal,
        maxSteps: this.#options.maxSteps,
        executeToolCall: this.#options.toolExecutor,
        takeSteeringMessages: () => run.steering.splice(0),
        takeFollowUpMessages: () => run.followUps.splice(0),
        onEvent: (event) => {
          if (event.type === "turn_end") run.acceptingInput = false;
          this.#emit({ type: "loop", runId: run.id, event });
        },
      });
    } catch (error) {
      // AGENT-LOOP-2's implementation-defined part: the loop itself rejected.
      result = { reason: "error", messages: [...messages, assistantMessage([], "error", { errorMessage: messageOf(error) })], steps: 0 };
    } finally {
      // AGENT-RUN-5: inactive before run_end; AGENT-QUEUE-4: what the run did not take goes with it.
      if (this.#active === run) this.#active = undefined;
      run.steering.length = 0;
      run.followUps.length = 0;
    }
    this.#emit({ type: "run_end", runId: run.id, result });
    return copyOf(result);
  }
}
