#!/usr/bin/env node
// Generate tests/support/js/variants/<name>/ from tests/support/js/course-correct/: each variant is the
// correct course layout with exactly one bug (a textual patch of one compiled module) or,
// for the partial-credit folders, a lab's placeholder patched in and later files removed.
//
//   node tests/support/js/make_variants.mjs           regenerate every variant folder
//   node tests/support/js/make_variants.mjs --check   exit 1 if a folder on disk is out of date
//
// A patch names the exact text it replaces and how often it occurs, so a change to the
// correct implementation that moves that text makes generation fail instead of silently
// producing a variant without its bug.

import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, statSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";

const HERE = path.dirname(fileURLToPath(import.meta.url));
const CORRECT = path.join(HERE, "course-correct");
const VARIANTS = path.join(HERE, "variants");
const SRC = "packages/pi-course/dist/src";
const TYPES = `${SRC}/types.js`;
const EVENT_STREAM = `${SRC}/event-stream.js`;
const SCRIPTED_MODEL = `${SRC}/scripted-model.js`;
const TOOL = `${SRC}/tool.js`;
const PROVIDER = `${SRC}/provider-adapter.js`;
const LOOP = `${SRC}/agent-loop.js`;
// course-correct is at chapter 04 (no tool.js); the chapter 06 folders add this correct tool.js.
const TOOL_CORRECT = readFileSync(path.join(HERE, "chapter-06", "tool.js"), "utf8");
// ... and chapter 05's correct provider-adapter.js, which every folder at chapter 05 or later has.
const PROVIDER_CORRECT = readFileSync(path.join(HERE, "chapter-05", "provider-adapter.js"), "utf8");
// The chapter 07 folders add chapter 05's provider-adapter.js, chapter 06's tool.js and this correct agent-loop.js.
const LOOP_CORRECT = readFileSync(path.join(HERE, "chapter-07", "agent-loop.js"), "utf8");
// The chapter 09 folders add chapter 05's and 06's files, chapter 09's agent-loop.js (CHAPTER_09_LOOP)
// and this correct agent.js (the reducer and the Agent).
const AGENT = `${SRC}/agent.js`;
const AGENT_CORRECT = readFileSync(path.join(HERE, "chapter-09", "agent.js"), "utf8");
// The course's tsconfig.json, as the grader pins it by default (conformance/toolchain/course/).
const COURSE_TSCONFIG = readFileSync(path.join(HERE, "..", "..", "..", "conformance", "toolchain", "course", "tsconfig.json"), "utf8");

/** Replace `find` (which must occur exactly `count` times) in `file`. */
const patch = (file, find, replace, count = 1) => ({ kind: "patch", file, find, replace, count });
const remove = (file) => ({ kind: "remove", file });
/** Create `file` (which must not exist yet) holding `text`. */
const add = (file, text) => ({ kind: "add", file, text });
/** What a folder at chapter 05 or later adds to course-correct: the correct provider-adapter.js. */
const CHAPTER_05 = add(PROVIDER, PROVIDER_CORRECT);
/** What every chapter 07 folder adds to course-correct: the correct provider-adapter.js, tool.js and agent-loop.js. */
const CHAPTER_07 = [CHAPTER_05, add(TOOL, TOOL_CORRECT), add(LOOP, LOOP_CORRECT)];

// What the course's chapter 06 starter (starters/06-tool.ts) compiles to, in effect: the
// exports exist, the constructor accepts tools and does nothing, everything else throws
// "<lab> 尚未实现" ("not implemented yet"); executeToolCall is async, so it rejects.
const TOOL_STARTER = `const pending = (what) => new Error(\`\${what} 尚未实现\`);
export const stringValue = () => { throw pending("Lab 6.1 stringValue"); };
export const optionalString = () => { throw pending("Lab 6.1 optionalString"); };
export const optionalPositiveInteger = () => { throw pending("Lab 6.1 optionalPositiveInteger"); };
export function objectSchema() { throw pending("Lab 6.1 objectSchema"); }
export class ToolRegistry {
  constructor(_tools = []) {}
  register() { throw pending("Lab 6.2 ToolRegistry.register"); }
  get() { throw pending("Lab 6.2 ToolRegistry.get"); }
  list() { throw pending("Lab 6.2 ToolRegistry.list"); }
  definitions() { throw pending("Lab 6.2 ToolRegistry.definitions"); }
}
export async function executeToolCall() { throw pending("Lab 6.3 executeToolCall"); }
`;

// What the course's chapter 05 starter (starters/05-provider-adapter.ts) compiles to, in
// effect: the five exports exist and throw "<lab> 尚未实现"; ZERO_USAGE is the zero usage.
const PROVIDER_STARTER = `const pending = (what) => new Error(\`\${what} 尚未实现\`);
export function toProviderMessages() { throw pending("Lab 5.1 toProviderMessages"); }
export function toProviderTools() { throw pending("Lab 5.1 toProviderTools"); }
export function createOpenAICompatibleModel() { throw pending("Lab 5.2 createOpenAICompatibleModel"); }
export function fixedTransport() { throw pending("Lab 5.2 fixedTransport"); }
export function createOpenAICompatibleTransport() { throw pending("Lab 5.3 createOpenAICompatibleTransport"); }
export const ZERO_USAGE = { input: 0, output: 0, totalTokens: 0 };
`;

// What the course's chapter 07 starter (starters/07-agent-loop.ts) does, in effect: runAgentLoop
// is async and rejects at its first placeholder, "Lab 7.5 ..." for an aborted signal or no step
// left, else "Lab 7.1 ..." (collecting the model's turn comes first).
const LOOP_STARTER = `const pending = (what) => new Error(\`\${what} 尚未实现\`);
export async function runAgentLoop(options) {
  structuredClone(options.context.messages);
  if ((options.maxSteps ?? 32) < 1 || options.signal?.aborted) throw pending("Lab 7.5 cancellation and limits");
  throw pending("Lab 7.1 收集模型终态");
}
`;

// What the course's chapter 09 starter (starters/09-agent.ts) compiles to, in effect, for lab
// 9.1: reduceAgentState throws "Lab 9.1 reducer 尚未实现". (The starter also imports chapter
// 07's runAgentLoop; that import is left out here, and tried by agent-without-loop, a project
// without agent-loop.js.)
const AGENT_STARTER = `export function reduceAgentState(_state, _event) {
  throw new Error("Lab 9.1 reducer 尚未实现");
}
`;

// Chapter 09's loop: chapter 07's correct agent-loop.js with the additions of spec section 11.6: the
// model turn's throw caught and its message copied (AGENT-LOOP-2, -4), each result a clone
// (AGENT-LOOP-3), the queues taken after a batch and at a text stop, abort first (AGENT-QUEUE-2/3,
// AGENT-ABORT-4). A Node.js without lab isolation (20) plays it under the Agent.
const CHAPTER_09_LOOP = [
  add(LOOP, LOOP_CORRECT),
  patch(LOOP, 'import { executeToolCall as coreExecuteToolCall } from "./tool.js";\n', 'import { executeToolCall as coreExecuteToolCall } from "./tool.js";\nimport { assistantMessage } from "./types.js";\n'),
  patch(
    LOOP,
    `    const request = { messages: this.transcript, tools: this.options.tools.definitions() };
    const stream = this.options.model.stream(request, { signal: this.options.signal });
    for await (const event of stream) this.emit({ type: "model_event", event });
    const message = await stream.result();`,
    `    let message;
    try {
      const request = { messages: this.transcript, tools: this.options.tools.definitions() };
      const stream = this.options.model.stream(request, { signal: this.options.signal });
      for await (const event of stream) this.emit({ type: "model_event", event });
      message = structuredClone(await stream.result());
    } catch (error) {
      const reason = this.options.signal?.aborted ? "aborted" : "error";
      message = assistantMessage([], reason, { errorMessage: error instanceof Error ? error.message : String(error) });
    }`,
  ),
  patch(
    LOOP,
    `      if (calls.length === 0) return "stop";
      this.skipAll(calls, "unexpected-stop");
      return "error";`,
    `      if (calls.length > 0) {
        this.skipAll(calls, "unexpected-stop");
        return "error";
      }
      if (this.options.signal?.aborted) return "aborted";
      let queued = this.options.takeSteeringMessages?.() ?? [];
      if (queued.length === 0) queued = this.options.takeFollowUpMessages?.() ?? [];
      this.transcript.push(...queued);
      return queued.length > 0 ? null : "stop";`,
  ),
  patch(
    LOOP,
    "      result = await this.execute(call, { signal: this.options.signal, reportProgress });",
    `      result = await this.execute(call, { signal: this.options.signal, reportProgress });
      try {
        result = structuredClone(result);
      } catch {
        result = failed(call, new Error("tool result is not structured-cloneable"));
      }`,
  ),
  patch(LOOP, "    if (reason !== null) return run.end(reason, step);\n", '    if (reason !== null) return run.end(reason, step);\n    if (message.stopReason === "stop") continue;\n'),
  patch(
    LOOP,
    '    if (options.signal?.aborted) return run.end("aborted", step);\n  }',
    '    if (options.signal?.aborted) return run.end("aborted", step);\n    run.transcript.push(...(options.takeSteeringMessages?.() ?? []));\n  }',
  ),
];

/** A chapter 09 repository: chapter 05's and 06's files, chapter 09's agent-loop.js and agent.js. */
const chapter09 = (...changes) => [CHAPTER_05, add(TOOL, TOOL_CORRECT), ...CHAPTER_09_LOOP, add(AGENT, AGENT_CORRECT), ...changes];

const VARIANT_SPECS = {
  // ---- one bug each ------------------------------------------------------------------
  "textof-tool-names": {
    bug: "the chapter 03 fault experiment: textOf() lists tool-call names among the texts",
    changes: [patch(TYPES, '(block.type === "text" ? [block.text] : [])', '(block.type === "text" ? [block.text] : [block.name])')],
  },
  "replay-last-timestamp": {
    bug: "currentSystemMessage() keeps the timestamp of the last system message, not the first",
    changes: [patch(TYPES, "timestamp ??= message.timestamp;", "timestamp = message.timestamp;")],
  },
  "replay-tombstones": {
    bug: "sections merged with Object.assign and nulls dropped at the end: a deleted then re-added section keeps its old place",
    changes: [
      patch(
        TYPES,
        `    for (const [name, value] of Object.entries(message.sections ?? {})) {
      if (value === null) sections.delete(name);
      else sections.set(name, value);
    }
  }
  if (timestamp === undefined) return undefined;`,
        `    for (const [name, value] of Object.entries(message.sections ?? {})) sections.set(name, value);
  }
  for (const [name, value] of sections) if (value === null) sections.delete(name);
  if (timestamp === undefined) return undefined;`,
      ),
    ],
  },
  "error-needs-end": {
    bug: "AssistantMessageEventStream treats only done as terminal: an error event needs end()",
    changes: [patch(EVENT_STREAM, '(event) => event.type === "done" || event.type === "error",', '(event) => event.type === "done",')],
  },
  "result-is-a-copy": {
    bug: "AssistantMessageEventStream resolves result() with a copy of the terminal message",
    changes: [
      patch(EVENT_STREAM, 'if (event.type === "done") return event.message;', 'if (event.type === "done") return structuredClone(event.message);'),
      patch(EVENT_STREAM, 'if (event.type === "error") return event.error;', 'if (event.type === "error") return structuredClone(event.error);'),
    ],
  },
  "exhaustion-throws": {
    bug: "the chapter 04 fault experiment: stream() throws synchronously when the script is exhausted",
    changes: [
      patch(
        SCRIPTED_MODEL,
        "    const turn = this.#turns[this.#cursor++];\n",
        '    const turn = this.#turns[this.#cursor++];\n    if (turn === undefined) throw new Error("script exhausted");\n',
      ),
    ],
  },
  "requests-by-reference": {
    bug: "the chapter 04 fault experiment: requests keeps the caller's context object instead of a structuredClone",
    changes: [patch(SCRIPTED_MODEL, "this.requests.push(structuredClone(context));", "this.requests.push(context);")],
  },
  "shared-partial": {
    bug: "one partial object is mutated and carried by every event instead of a snapshot per event",
    changes: [patch(SCRIPTED_MODEL, "partial: structuredClone(partial)", "partial", 4)],
  },
  "abort-checked-early": {
    bug: "stream() reads signal.aborted synchronously, before queueMicrotask: an abort right after it returns is missed",
    changes: [
      patch(SCRIPTED_MODEL, "    queueMicrotask(() => {\n      if (options.signal?.aborted) {", "    const aborted = options.signal?.aborted;\n    queueMicrotask(() => {\n      if (aborted) {"),
    ],
  },
  "production-not-deferred": {
    bug: "the turn is played inside stream(), before it returns: nothing is deferred",
    changes: [patch(SCRIPTED_MODEL, "    queueMicrotask(() => {\n", "    (() => {\n"), patch(SCRIPTED_MODEL, "    });\n    return stream;", "    })();\n    return stream;")],
  },

  "sections-always": {
    bug: "currentSystemMessage() always adds a sections object, empty when no section is left",
    changes: [patch(TYPES, "...(sections.size > 0 ? { sections: Object.fromEntries(sections) } : {}),", "sections: Object.fromEntries(sections),")],
  },
  "sections-before-content": {
    bug: "systemMessageText() joins the sections before the content",
    changes: [patch(TYPES, "return parts.filter((part) => part.length > 0)", "return [...parts.slice(1), parts[0]].filter((part) => part.length > 0)")],
  },
  "error-loses-message": {
    bug: "an error turn's terminal message loses the turn's errorMessage",
    changes: [patch(SCRIPTED_MODEL, "return assistantMessage(content, turn.stopReason, { errorMessage: turn.errorMessage });", "return assistantMessage(content, turn.stopReason);")],
  },
  "preabort-keeps-turn": {
    bug: "a call whose signal is already aborted does not use up its turn: the next call replays it",
    changes: [patch(SCRIPTED_MODEL, "const turn = this.#turns[this.#cursor++];", "const turn = options.signal?.aborted ? undefined : this.#turns[this.#cursor++];")],
  },

  // ---- chapter 05 (course-correct plus chapter-05/provider-adapter.js): one bug each, costing only its own lab
  "chapter-05": {
    bug: "no bug: course-correct with chapter 05's provider-adapter.js, a repository at chapter 05 that passes every case",
    changes: [CHAPTER_05],
  },

  "tool-result-as-user": {
    bug: "toProviderMessages sends a tool result with role \"user\" instead of \"tool\" (lab 5.1)",
    changes: [CHAPTER_05, patch(PROVIDER, 'return { role: "tool", tool_call_id', 'return { role: "user", tool_call_id')],
  },
  "arguments-not-stringified": {
    bug: "a wire tool call without rawArguments carries the arguments object, not its JSON text (lab 5.1)",
    changes: [CHAPTER_05, patch(PROVIDER, "JSON.stringify(call.arguments ?? {})", "call.arguments ?? {}")],
  },
  "missing-finish-is-done": {
    bug: "a transport that ends without a finish chunk ends the call as a normal stop (lab 5.2)",
    changes: [
      CHAPTER_05,
      patch(PROVIDER, 'if (finish === undefined) throw new Error("Provider stream ended without a finish chunk");', 'if (finish === undefined) finish = { type: "finish", reason: "stop" };'),
    ],
  },
  "utf8-not-streamed": {
    bug: "each read of the SSE body is decoded on its own: a character split between two reads is lost (lab 5.3)",
    changes: [CHAPTER_05, patch(PROVIDER, "decoder.decode(value, { stream: true })", "decoder.decode(value)")],
  },
  "key-not-redacted": {
    bug: "the transport's errors keep the API key in their message (lab 5.3)",
    changes: [CHAPTER_05, patch(PROVIDER, 'const message = apiKey ? text.split(apiKey).join("[redacted]") : text;', "const message = text;")],
  },
  "provider-starter": {
    bug: "a student who has just started chapter 05: provider-adapter.js is the course's starter, every export throws \"Lab 5.x ... 尚未实现\"",
    changes: [add(PROVIDER, PROVIDER_STARTER)],
  },

  // ---- chapter 06 (chapter 05 plus chapter-06/tool.js): one bug each, costing only its own lab
  "chapter-06": {
    bug: "no bug: course-correct with chapter 06's tool.js, a repository at chapter 06 that passes every case",
    changes: [CHAPTER_05, add(TOOL, TOOL_CORRECT)],
  },
  "required-lists-optional": {
    bug: "objectSchema's JSON Schema lists the optional keys as required too (lab 6.1)",
    changes: [CHAPTER_05, add(TOOL, TOOL_CORRECT), patch(TOOL, "required: entries.filter(([, check]) => !check.optional).map(([key]) => key),", "required: entries.map(([key]) => key),")],
  },
  "duplicate-overwrites": {
    bug: "register replaces a tool whose name is taken instead of throwing (lab 6.2)",
    changes: [CHAPTER_05, add(TOOL, TOOL_CORRECT), patch(TOOL, "    if (this.#tools.has(tool.name)) throw new Error(`Tool 已存在：${tool.name}`);\n", "")],
  },
  "failure-names-error-type": {
    bug: "a failure result quotes String(error) (\"Error: exploded\") instead of the error's message (lab 6.3)",
    changes: [CHAPTER_05, add(TOOL, TOOL_CORRECT), patch(TOOL, "return failure(call, error instanceof Error ? error.message : String(error));", "return failure(call, String(error));")],
  },

  // ---- chapter 09's reducer (lab 9.1): one bug each, costing only its own clause's cases
  "chapter-09": {
    bug: "no bug: course-correct with chapter 06's tool.js and chapter 09's agent-loop.js and agent.js (the reducer and the Agent), a repository at chapter 09",
    changes: chapter09(),
  },
  "reducer-ignores-run-id": {
    bug: "the reducer applies a loop or run_end event of any run while running, not only the active run's (AGENT-STATE-4)",
    changes: chapter09(patch(AGENT, 'return state.status === "running" && state.activeRunId === event.runId;', 'return state.status === "running";')),
  },
  "reducer-mutates-state": {
    bug: "tool_start pushes the call's id onto the given state's pendingToolCallIds (AGENT-STATE-1)",
    changes: chapter09(
      patch(
        AGENT,
        "tool_start: (state, loop) => ({ ...state, pendingToolCallIds: [...state.pendingToolCallIds, loop.call.id] }),",
        "tool_start: (state, loop) => (state.pendingToolCallIds.push(loop.call.id), { ...state }),",
      ),
    ),
  },
  "reducer-shares-result-messages": {
    bug: "run_end's state holds the result's own messages array instead of a copy (AGENT-STATE-3)",
    changes: chapter09(patch(AGENT, "messages: copyOf(result.messages),", "messages: result.messages,")),
  },
  "reducer-keeps-streaming-text": {
    bug: "assistant_message leaves streamingText as it was instead of clearing it (AGENT-STATE-7)",
    changes: chapter09(patch(AGENT, '  assistant_message: (state) => ({ ...state, streamingText: "" }),\n', "")),
  },
  "reducer-keeps-pending-id": {
    bug: "tool_end leaves the finished call's id pending (only tool_skipped removes it) (AGENT-STATE-6)",
    changes: chapter09(patch(AGENT, "  tool_end: withoutPending,\n", "")),
  },

  // ---- chapter 09's Agent (labs 9.2-9.5): one bug each, failing the cases of its clause (a few of
  // those are in another lab: they port a course test of that lab that also shows the clause)
  "run-end-before-cleanup": {
    bug: "the run is still active when its run_end is emitted: a run_end listener's prompt is refused as busy (AGENT-RUN-5, lab 9.2)",
    changes: chapter09(
      patch(AGENT, "    } finally {\n      // AGENT-RUN-5:", "    } finally {\n      this.#emit({ type: \"run_end\", runId: run.id, result });\n      // AGENT-RUN-5:"),
      patch(AGENT, "    this.#emit({ type: \"run_end\", runId: run.id, result });\n    return copyOf(result);", "    return copyOf(result);"),
    ),
  },
  "busy-guard-missing": {
    bug: "prompt does not refuse while a run is active: a second run starts over the first (AGENT-RUN-4, lab 9.2)",
    changes: chapter09(patch(AGENT, "    if (this.#active) throw new Error(BUSY);\n", "")),
  },
  "listeners-before-reduce": {
    bug: "each event reaches the listeners before the state is reduced with it (AGENT-SUB-2, lab 9.3)",
    changes: chapter09(
      patch(
        AGENT,
        "        this.#state = reduceAgentState(this.#state, next);\n        for (const listener of [...this.#listeners]) this.#notify(listener, copyOf(next));",
        "        for (const listener of [...this.#listeners]) this.#notify(listener, copyOf(next));\n        this.#state = reduceAgentState(this.#state, next);",
      ),
    ),
  },
  "state-not-copied": {
    bug: "getState() hands out the Agent's own state object, not a copy (AGENT-COPY-1, lab 9.3)",
    changes: chapter09(patch(AGENT, "  getState() {\n    return copyOf(this.#state);", "  getState() {\n    return this.#state;")),
  },
  "abort-misses-run": {
    bug: "the loop gets a signal of its own, not the run's controller's: abort() never reaches the run (AGENT-ABORT-1, lab 9.4)",
    changes: chapter09(patch(AGENT, "        signal: run.controller.signal,", "        signal: new AbortController().signal,")),
  },
  "steering-dropped": {
    bug: "the run's steering queue is never handed to the loop: steer() is accepted and lost (AGENT-QUEUE-2/3, lab 9.5)",
    changes: chapter09(patch(AGENT, "        takeSteeringMessages: () => run.steering.splice(0),", "        takeSteeringMessages: () => [],")),
  },
  "follow-ups-lost": {
    bug: "the run's follow-up queue is never handed to the loop: followUp() is accepted and lost (AGENT-QUEUE-3, lab 9.5)",
    changes: chapter09(patch(AGENT, "        takeFollowUpMessages: () => run.followUps.splice(0),", "        takeFollowUpMessages: () => [],")),
  },
  "loop-bug-spares-agent": {
    bug: "a chapter 09 project whose agent-loop.js is still chapter 07's (no queues, a model throw rejects): the loop's chapter 09 additions are labs 9.2-9.5 code, so its Agent loses those cases with and without lab isolation",
    changes: [CHAPTER_05, add(TOOL, TOOL_CORRECT), add(LOOP, LOOP_CORRECT), add(AGENT, AGENT_CORRECT)],
  },

  // ---- partial credit ----------------------------------------------------------------
  "lab31-only": {
    bug: "a student who finished lab 3.1: the temporary AssistantMessageEventStream, no scripted-model.js",
    changes: [
      patch(
        EVENT_STREAM,
        `    super(
      (event) => event.type === "done" || event.type === "error",
      (event) => {
        if (event.type === "done") return event.message;
        if (event.type === "error") return event.error;
        throw new Error("非终态事件不能生成最终消息");
      },
    );`,
        `    // Lab 3.1's temporary stream: never terminal, no result yet (lab 3.2 finishes it).
    super(
      () => false,
      () => {
        throw new Error("not implemented in lab 3.1");
      },
    );`,
      ),
      remove(SCRIPTED_MODEL),
    ],
  },
  "lab41-only": {
    bug: "a student who finished lab 4.1: abort, exhaustion and error turns throw \"not implemented in lab 4.1\" in the deferred producer",
    changes: [
      patch(
        SCRIPTED_MODEL,
        `      if (options.signal?.aborted) {
        finish(stream, assistantMessage([], "aborted", { errorMessage: ABORTED_MESSAGE }));
      } else if (turn === undefined) {
        finish(stream, assistantMessage([], "error", { errorMessage: EXHAUSTED_MESSAGE }));
      } else {
        play(stream, terminalMessage(turn));
      }`,
        `      if (options.signal?.aborted || turn === undefined || !("role" in turn)) {
        throw new Error("not implemented in lab 4.1");
      }
      play(stream, terminalMessage(turn));`,
      ),
    ],
  },
  "tool-starter": {
    bug: "a student who has just started chapter 06: tool.js is the course's starter, every export throws \"Lab 6.x ... 尚未实现\"",
    changes: [CHAPTER_05, add(TOOL, TOOL_STARTER)],
  },
  "lab61-only": {
    bug: "a student who finished lab 6.1: ToolRegistry and executeToolCall still throw the starter's \"尚未实现\"",
    changes: [
      CHAPTER_05,
      add(TOOL, TOOL_CORRECT),
      patch(TOOL, "    this.#tools.set(tool.name, tool);\n", "    throw new Error(\"Lab 6.2 ToolRegistry.register 尚未实现\");\n"),
      patch(TOOL, "    return this.#tools.get(name);\n", "    throw new Error(\"Lab 6.2 ToolRegistry.get 尚未实现\");\n"),
      patch(TOOL, "  const tool = registry.get(call.name);\n", "  throw new Error(\"Lab 6.3 executeToolCall 尚未实现\");\n  const tool = registry.get(call.name);\n"),
    ],
  },
  // ---- chapter 07 (course-correct plus chapter-06/tool.js and chapter-07/agent-loop.js): one bug each
  "chapter-07": {
    bug: "none: course-correct plus chapter 06's tool.js and chapter 07's agent-loop.js, a repository at chapter 07",
    changes: CHAPTER_07,
  },
  "shares-caller-transcript": {
    bug: "the loop appends to the caller's own context.messages instead of a deep copy (lab 7.1)",
    changes: [...CHAPTER_07, patch(LOOP, "this.transcript = structuredClone(options.context.messages);", "this.transcript = options.context.messages;")],
  },
  "results-in-completion-order": {
    bug: "each result is appended to the transcript as its call settles, not in call order (lab 7.4)",
    changes: [
      ...CHAPTER_07,
      patch(
        LOOP,
        "    const results = await Promise.all(calls.map((call) => this.runCall(call)));\n    this.transcript.push(...results);",
        "    await Promise.all(calls.map(async (call) => this.transcript.push(await this.runCall(call))));",
      ),
    ],
  },
  "sequential-batch": {
    bug: "the batch runs one call at a time: a waiting call keeps the next from starting (lab 7.4)",
    changes: [
      ...CHAPTER_07,
      patch(
        LOOP,
        "    const results = await Promise.all(calls.map((call) => this.runCall(call)));\n    this.transcript.push(...results);",
        "    for (const call of calls) this.transcript.push(await this.runCall(call));",
      ),
    ],
  },
  "loses-siblings": {
    bug: "an executor's rejection is not caught per call: Promise.all rejects and the run loses the batch (lab 7.4)",
    changes: [
      ...CHAPTER_07,
      patch(
        LOOP,
        `    let result;
    try {
      result = await this.execute(call, { signal: this.options.signal, reportProgress });
    } catch (error) {
      result = failed(call, error);
    }`,
        "    const result = await this.execute(call, { signal: this.options.signal, reportProgress });",
      ),
    ],
  },
  "two-turn-ends-at-limit": {
    bug: "a run that reaches maxSteps emits turn_end twice (lab 7.5)",
    changes: [...CHAPTER_07, patch(LOOP, '  return run.end("maxSteps", limit);', '  run.emit({ type: "turn_end", reason: "maxSteps" });\n  return run.end("maxSteps", limit);')],
  },
  "max-steps-off-by-one": {
    bug: "the loop stops one step early: at most maxSteps - 1 requests (lab 7.5)",
    changes: [...CHAPTER_07, patch(LOOP, "for (let step = 1; step <= limit; step += 1)", "for (let step = 1; step < limit; step += 1)")],
  },
  "loop-starter": {
    bug: "a student who has just started chapter 07: agent-loop.js behaves as the course's starter, runAgentLoop rejects with \"Lab 7.x ... 尚未实现\"",
    changes: [CHAPTER_05, add(TOOL, TOOL_CORRECT), add(LOOP, LOOP_STARTER)],
  },
  "tool-bug-spares-loop": {
    bug: "a chapter 06 bug (failure results quote String(error)) under a correct agent-loop.js: with lab isolation it costs lab 6.3 only",
    changes: [...CHAPTER_07, patch(TOOL, "return failure(call, error instanceof Error ? error.message : String(error));", "return failure(call, String(error));")],
  },
  "agent-starter": {
    bug: "a student who has just started chapter 09: reduceAgentState is the course's starter, it throws \"Lab 9.1 reducer 尚未实现\"",
    changes: [...CHAPTER_07, add(AGENT, AGENT_STARTER)],
  },
  "agent-without-loop": {
    bug: "agent.js imports chapter 07's runAgentLoop from ./agent-loop.js, which the project does not have: the module fails to import",
    changes: [CHAPTER_05, add(TOOL, TOOL_CORRECT), add(AGENT, AGENT_CORRECT)],
  },
  "build-fails": {
    bug: "the build fails (a TypeScript error: lab 4.1's module imports a types.ts not written yet): no dist/ is produced",
    changes: [
      patch("packages/pi-course/package.json", `"build": "node -e \\"\\""`, `"build": "tsc -p tsconfig.json"`),
      add("packages/pi-course/tsconfig.json", COURSE_TSCONFIG),
      add("packages/pi-course/src/scripted-model.ts", `import { text } from "./types.js";\n\nexport const firstText = text;\n`),
      remove("packages/pi-course/dist"),
    ],
  },
};

function apply(root, change) {
  const file = path.join(root, change.file);
  if (change.kind === "add") {
    if (existsSync(file)) throw new Error(`${change.file}: already there`);
    mkdirSync(path.dirname(file), { recursive: true });
    writeFileSync(file, change.text);
    return;
  }
  if (change.kind === "remove") {
    if (!existsSync(file)) throw new Error(`${change.file}: nothing to remove`);
    rmSync(file, { recursive: true });
    return;
  }
  const text = readFileSync(file, "utf8");
  const found = text.split(change.find).length - 1;
  if (found !== change.count) {
    throw new Error(`${change.file}: expected ${change.count} occurrence(s) of ${JSON.stringify(change.find)}, found ${found}`);
  }
  writeFileSync(file, text.replaceAll(change.find, change.replace));
}

function generate(target) {
  rmSync(target, { recursive: true, force: true });
  for (const [name, spec] of Object.entries(VARIANT_SPECS)) {
    const root = path.join(target, name);
    cpSync(CORRECT, root, { recursive: true });
    for (const change of spec.changes) apply(root, change);
    writeFileSync(path.join(root, "VARIANT.md"), `# ${name}\n\n${spec.bug}.\n\nGenerated by tests/support/js/make_variants.mjs from tests/support/js/course-correct; do not edit.\n`);
  }
}

/** Every file under `root` with its content, to compare two generated trees. */
function snapshot(root) {
  const files = new Map();
  const walk = (directory) => {
    for (const entry of readdirSync(directory).sort()) {
      const full = path.join(directory, entry);
      if (statSync(full).isDirectory()) walk(full);
      else files.set(path.relative(root, full), readFileSync(full, "utf8"));
    }
  };
  if (existsSync(root)) walk(root);
  return files;
}

function check() {
  const scratch = mkdtempSync(path.join(os.tmpdir(), "pi-variants-"));
  try {
    generate(path.join(scratch, "variants"));
    const expected = snapshot(path.join(scratch, "variants"));
    const actual = snapshot(VARIANTS);
    const stale = [...new Set([...expected.keys(), ...actual.keys()])].filter((file) => expected.get(file) !== actual.get(file));
    if (stale.length > 0) {
      console.error(`tests/support/js/variants is out of date (run node tests/support/js/make_variants.mjs):\n  ${stale.join("\n  ")}`);
      return 1;
    }
    console.log(`tests/support/js/variants is up to date (${Object.keys(VARIANT_SPECS).length} variants)`);
    return 0;
  } finally {
    rmSync(scratch, { recursive: true, force: true });
  }
}

if (process.argv.includes("--check")) {
  process.exitCode = check();
} else {
  generate(VARIANTS);
  console.log(`generated ${Object.keys(VARIANT_SPECS).length} variants under ${path.relative(process.cwd(), VARIANTS) || VARIANTS}`);
}
