// Chapter 07, before lab 7.1: a repository that has started chapter 07 and implemented none of
// it. Written for these tests (not the course's starter): it declares the loop's entry point and
// throws a lab's placeholder error, which is what makes the project "at chapter 07" and its
// chapter 07 cases skipped (conformance/adapters/course_chapters.py).
import type { ToolRegistry } from "./tool.js";
import type { AgentContext, AgentMessage, Model } from "./types.js";

/** How a run ended (spec/spec.md section 10). */
export interface AgentRunResult {
  reason: "stop" | "length" | "error" | "aborted" | "maxSteps";
  messages: AgentMessage[];
  steps: number;
}

/** The options runAgentLoop takes; the event callback and the executor are left to lab 7.1 and 7.2. */
export interface AgentLoopOptions {
  model: Model;
  tools: ToolRegistry;
  context: AgentContext;
  signal?: AbortSignal;
  maxSteps?: number;
}

export async function runAgentLoop(_options: AgentLoopOptions): Promise<AgentRunResult> {
  throw new Error("Lab 7.1 runAgentLoop 尚未实现");
}
