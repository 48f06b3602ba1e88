#!/usr/bin/env node
// pi-conformance adapter for the published upstream agent runtime @earendil-works/pi-agent-core 1.x
// (profile pi-agent-core-1, spec/pi-agent-core-1/spec.md).
//
//   node pi_agent_core_adapter.mjs <PACKAGE_DIR>
//
// PACKAGE_DIR is the installed package (node_modules/@earendil-works/pi-agent-core). The
// program imports its public entry point and the @earendil-works/pi-ai that package resolves
// (its own dependency: the scripted model's event stream is pi-ai's), speaks the JSON-lines
// protocol of spec/protocol.md and states `profile: "pi-agent-core-1"` in its handshake.
// The scenario vocabulary (scripted model, tools, hooks, queues, steps) is agent_scenario.mjs;
// the `agent` operation (upstream's Agent class) is pi_agent_core_agent.mjs.
//
// No dependencies beyond the package under test: Node.js 20 built-ins only.

import { existsSync, readFileSync } from "node:fs";
import path from "node:path";
import { pathToFileURL } from "node:url";
// protocol.mjs first: it loads channel.mjs, which captures the built-ins the channel relies on.
import { importWatched, serve } from "./protocol.mjs";
import { LoadFailed, NotImplemented, ProtocolError, describe } from "./failures.mjs";
import { fingerprint, isObject, toJson } from "./observation.mjs";
import { Gates, Watch, playSteps, scriptedHook, scriptedModel, scriptedQueue, scriptedTool, scriptedTurnFunction, traceLine } from "./agent_scenario.mjs";
import { playAgent } from "./pi_agent_core_agent.mjs";

const PI_AI = "@earendil-works/pi-ai";
const ENTRIES = new Set(["agentLoop", "runAgentLoop", "agentLoopContinue", "runAgentLoopContinue"]);
const CONTINUING = new Set(["agentLoopContinue", "runAgentLoopContinue"]);

function manifest(folder) {
  return JSON.parse(readFileSync(path.join(folder, "package.json"), "utf8"));
}

function entryUrl(folder, info) {
  const entry = info.exports?.["."]?.import ?? info.exports?.["."]?.default ?? info.main ?? "./dist/index.js";
  return pathToFileURL(path.join(folder, entry)).href;
}

/** The folder `name` resolves to from `folder`, as Node.js resolves a bare import (null: none). */
function resolveFrom(folder, name) {
  for (let current = folder; ; current = path.dirname(current)) {
    if (path.basename(current) !== "node_modules") {
      const candidate = path.join(current, "node_modules", name);
      if (existsSync(path.join(candidate, "package.json"))) return candidate;
    }
    if (path.dirname(current) === current) return null;
  }
}

class Package {
  constructor(directory) {
    this.directory = path.resolve(directory);
    this.info = manifest(this.directory);
    this.loading = null;
  }

  /** The package's entry point and the pi-ai it depends on, each imported once. */
  load() {
    if (this.loading === null) {
      this.loading = (async () => {
        const piAiFolder = resolveFrom(this.directory, PI_AI);
        if (piAiFolder === null) throw new LoadFailed(`${this.info.name} resolves no ${PI_AI} (its dependency) from ${this.directory}`);
        const piAi = await importWatched(PI_AI, entryUrl(piAiFolder, manifest(piAiFolder)));
        const core = await importWatched(this.info.name, entryUrl(this.directory, this.info));
        return { core, piAi };
      })();
    }
    return this.loading;
  }

  async modules() {
    try {
      return await this.load();
    } catch (error) {
      if (error instanceof LoadFailed) throw error;
      // A package that cannot load is broken, not partial: every case errors (never "skipped").
      throw new LoadFailed(`${this.info.name} failed to import: ${describe(error)}`);
    }
  }
}

/** The signal a case asks for: `given` (default), `none`, or `pre_aborted`. */
function makeSignal(option) {
  if (option === "none") return { controller: null, signal: undefined };
  const controller = new AbortController();
  if (option === "pre_aborted") controller.abort();
  else if (option !== undefined && option !== "given") throw new ProtocolError(`unknown signal option ${JSON.stringify(option)}`);
  return { controller, signal: controller.signal };
}

function newState(signalOption) {
  const { controller, signal } = makeSignal(signalOption);
  return {
    controller,
    signal,
    abort: () => controller?.abort(),
    gates: new Gates(),
    watch: new Watch(),
    requests: [],
    models: [],
    received: [],
    started: [],
    hooks: [],
    turnFunctions: {},
    polls: { steering: 0, follow_up: 0 },
    raw: [],
    events: [],
    run: { settled: false, result: null, error: null },
  };
}

/** The config keys of the scripted turn functions, and upstream's name of each. */
const TURN_FUNCTIONS = { prepare_request: "prepareRequest", finish_turn: "finishTurn", prepare_next_turn: "prepareNextTurn", transform_context: "transformContext" };

/** The loop config: the model, convertToLlm (identity on LLM roles), tool execution mode, hooks, queues and turn functions. */
function makeConfig(input, state, tools) {
  const options = isObject(input.config) ? input.config : {};
  const model = structuredClone(options.model ?? { id: "scripted-1", name: "scripted", api: "scripted", provider: "scripted", baseUrl: "", reasoning: false, input: ["text"], cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 }, contextWindow: 1000, maxTokens: 100 });
  const config = {
    model,
    convertToLlm: (messages) => messages.filter((message) => ["user", "assistant", "toolResult", "system"].includes(message.role)),
  };
  if (options.tool_execution !== undefined) config.toolExecution = String(options.tool_execution);
  if (options.before_tool_call !== undefined) config.beforeToolCall = scriptedHook("before", options.before_tool_call, state);
  if (options.after_tool_call !== undefined) config.afterToolCall = scriptedHook("after", options.after_tool_call, state);
  if (options.steering !== undefined) config.getSteeringMessages = scriptedQueue("steering", options.steering, state);
  if (options.follow_up !== undefined) config.getFollowUpMessages = scriptedQueue("follow_up", options.follow_up, state);
  for (const [key, name] of Object.entries(TURN_FUNCTIONS)) {
    if (options[key] !== undefined) config[name] = scriptedTurnFunction(key, options[key], state, tools);
  }
  return config;
}

function record(state, event) {
  state.raw.push(event);
  state.events.push(toJson(event, `the ${event?.type} event`));
  state.watch.poke();
}

/** Start the entry point the case names; its settling is kept in `state.run`. */
function starter(modules, input, state, context, config, streamFn) {
  const entry = input.entry ?? "runAgentLoop";
  if (!ENTRIES.has(entry)) throw new ProtocolError(`unknown entry ${JSON.stringify(entry)}`);
  const fn = modules.core[entry];
  if (typeof fn !== "function") throw new NotImplemented(`${entry} is not exported`);
  const prompts = structuredClone(input.prompts ?? []);
  const settleWith = (promise) =>
    promise.then(
      (messages) => Object.assign(state.run, { settled: true, result: toJson(messages, `what ${entry} returned`) }),
      (error) => Object.assign(state.run, { settled: true, error: { message: error instanceof Error ? error.message : String(error) } }),
    ).finally(() => state.watch.poke());
  return () => {
    let work;
    try {
      if (entry === "runAgentLoop") work = fn(prompts, context, config, (event) => record(state, event), state.signal, streamFn);
      else if (entry === "runAgentLoopContinue") work = fn(context, config, (event) => record(state, event), state.signal, streamFn);
      else {
        const stream = CONTINUING.has(entry) ? fn(context, config, state.signal, streamFn) : fn(prompts, context, config, state.signal, streamFn);
        work = (async () => {
          for await (const event of stream) record(state, event);
          return stream.result();
        })();
      }
    } catch (error) {
      work = Promise.reject(error); // agentLoopContinue throws synchronously on a context it cannot continue
    }
    settleWith(Promise.resolve(work));
  };
}

async function playAgentLoop(pkg, input) {
  const modules = await pkg.modules();
  const state = newState(isObject(input.config) ? input.config.signal : undefined);
  const tools = (input.tools ?? []).map((spec) => scriptedTool(spec, state));
  const context = { messages: structuredClone(input.context?.messages ?? []) };
  if (tools.length > 0) context.tools = tools;
  const before = fingerprint(context.messages);
  const config = makeConfig(input, state, tools);
  const streamFn = scriptedModel(modules.piAi, input.model?.turns ?? [], state);
  const steps = input.steps ?? ["start", "await_run"];
  if (!Array.isArray(steps)) throw new ProtocolError("steps must be a list");
  const stalled = await playSteps(steps, state, starter(modules, input, state, context, config, streamFn), input.settle_deadline_s ?? 0.25);
  return {
    events: state.events,
    trace: state.raw.map(traceLine),
    requests: state.requests.map((request) => ({ messages: request.messages })),
    models: state.models,
    result: state.run.result,
    error: state.run.error,
    context_unchanged: fingerprint(context.messages) === before,
    received: state.received,
    hooks: state.hooks,
    turn_functions: state.turnFunctions,
    polls: state.polls,
    stalled,
  };
}

serve({
  name: "pi_agent_core_adapter",
  argument: "PACKAGE_DIR",
  profile: "pi-agent-core-1",
  open: (packageDir) => new Package(packageDir),
  preload: (pkg) => pkg.load().then(
    () => undefined,
    () => undefined,
  ),
  implementation(pkg) {
    const implementation = { name: String(pkg.info.name || "pi-agent-core"), language: "javascript" };
    if (typeof pkg.info.version === "string") implementation.version = pkg.info.version;
    return implementation;
  },
  operations: { agent_loop: playAgentLoop, agent: async (pkg, input) => playAgent(await pkg.modules(), input) },
  scenarios: {},
});
