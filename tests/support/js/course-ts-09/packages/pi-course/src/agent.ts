// Chapter 09, lab 9.1: the Agent's reducer. A typed port of tests/support/js/chapter-09/agent.js
// (AGENT-STATE-1..8). The course's agent.ts imports LoopEvent and AgentRunResult from chapter
// 07's agent-loop.ts; this project has no agent-loop.ts, so they are declared here, as the
// reducer reads them (spec/spec.md sections 10 and 11.1).
import type { AgentMessage, AssistantMessage, ModelEvent, SystemMessage, TextContent, ToolCall, ToolResultMessage, UserMessage } from "./types.js";

/** How a run ended. */
export interface AgentRunResult {
  reason: "stop" | "length" | "error" | "aborted" | "maxSteps";
  messages: AgentMessage[];
  steps: number;
}

/** What the loop reports while it runs. */
export type LoopEvent =
  | { type: "model_event"; event: ModelEvent }
  | { type: "assistant_message"; message: AssistantMessage }
  | { type: "tool_start"; call: ToolCall }
  | { type: "tool_progress"; callId: string; content: TextContent[] }
  | { type: "tool_end"; result: ToolResultMessage }
  | { type: "tool_skipped"; result: ToolResultMessage }
  | { type: "turn_end"; reason: AgentRunResult["reason"] };

export interface AgentState {
  status: "idle" | "running";
  messages: AgentMessage[];
  activeRunId?: number;
  lastReason?: AgentRunResult["reason"];
  streamingText: string;
  pendingToolCallIds: string[];
  diagnostics: string[];
}

export type AgentEvent =
  | { type: "run_start"; runId: number; message: UserMessage; system?: SystemMessage }
  | { type: "loop"; runId: number; event: LoopEvent }
  | { type: "run_end"; runId: number; result: AgentRunResult };

/** A deep copy: a state's transcript shares nothing with what the caller holds (AGENT-STATE-3). */
function copyOf<T>(value: T): T {
  return structuredClone(value);
}

/** AGENT-STATE-2: a new run; the transcript grows by the system patch (if any) and the user message. */
function started(state: AgentState, event: Extract<AgentEvent, { type: "run_start" }>): AgentState {
  const { lastReason: _previousReason, ...kept } = state;
  const added: AgentMessage[] = event.system ? [event.system, event.message] : [event.message];
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
function ended(state: AgentState, result: AgentRunResult): AgentState {
  return {
    status: "idle",
    messages: copyOf(result.messages),
    lastReason: result.reason,
    streamingText: "",
    pendingToolCallIds: [],
    diagnostics: [...state.diagnostics],
  };
}

/** AGENT-STATE-5..7: what one loop event of the active run changes. */
function afterLoopEvent(state: AgentState, loop: LoopEvent): AgentState {
  switch (loop.type) {
    case "model_event":
      return loop.event.type === "text_delta" ? { ...state, streamingText: `${state.streamingText}${loop.event.delta}` } : state;
    case "tool_start":
      return { ...state, pendingToolCallIds: [...state.pendingToolCallIds, loop.call.id] };
    case "tool_end":
    case "tool_skipped": {
      const finished = loop.result.toolCallId;
      return { ...state, pendingToolCallIds: state.pendingToolCallIds.filter((id) => id !== finished) };
    }
    case "assistant_message":
      return { ...state, streamingText: "" };
    default:
      return state;
  }
}

/** The state after `event`, never changing `state` or `event` (AGENT-STATE-1); AGENT-STATE-4: only the active run counts. */
export function reduceAgentState(state: AgentState, event: AgentEvent): AgentState {
  if (event.type === "run_start") return started(state, event);
  if (state.status !== "running" || state.activeRunId !== event.runId) return state;
  return event.type === "run_end" ? ended(state, event.result) : afterLoopEvent(state, event.event);
}
