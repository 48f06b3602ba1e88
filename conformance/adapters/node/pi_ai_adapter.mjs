#!/usr/bin/env node
// pi-conformance adapter for the published upstream library @earendil-works/pi-ai 1.x
// (profile pi-ai-1, spec/pi-ai-1/spec.md).
//
//   node pi_ai_adapter.mjs <PACKAGE_DIR>
//
// PACKAGE_DIR is the installed package (node_modules/@earendil-works/pi-ai). The program
// imports its public entry point (dist/index.js), speaks the JSON-lines protocol of
// spec/protocol.md on stdin/stdout and states `profile: "pi-ai-1"` in its handshake. The
// protocol server (protocol.mjs) and the waiting, consuming and serializing machinery
// (observation.mjs) are shared with pi_course_adapter.mjs, so the two profiles observe
// streams in exactly the same way.
//
// No dependencies beyond the package under test: Node.js 20 built-ins only.

import { readFileSync } from "node:fs";
import path from "node:path";
import { pathToFileURL } from "node:url";
// protocol.mjs first: it loads channel.mjs, which captures the built-ins the channel relies on.
import { importWatched, serve } from "./protocol.mjs";
import { LoadFailed, NotImplemented, ProtocolError, Threw, describe, safeString } from "./failures.mjs";
import { ASSISTANT_TERMINAL_FIELDS, callStep, fingerprint, isObject, playCallSteps, playStreamSteps, toJson } from "./observation.mjs";

// ---------------------------------------------------------------------------------------
// the package
// ---------------------------------------------------------------------------------------

class Package {
  constructor(directory) {
    this.directory = path.resolve(directory);
    this.info = JSON.parse(readFileSync(path.join(this.directory, "package.json"), "utf8"));
    this.loading = null;
  }

  /** The package's public entry point (its "." export), imported once. */
  async load() {
    if (this.loading === null) {
      const entry = this.info.exports?.["."]?.import ?? this.info.main ?? "./dist/index.js";
      this.loading = importWatched(this.info.name, pathToFileURL(path.join(this.directory, entry)).href);
    }
    return this.loading;
  }

  async find(name) {
    let namespace;
    try {
      namespace = await this.load();
    } catch (error) {
      if (error instanceof LoadFailed) throw error;
      // A package that cannot load is broken, not partial: every case errors (never "skipped").
      throw new LoadFailed(`${this.info.name} failed to import: ${describe(error)}`);
    }
    if (typeof namespace[name] !== "function") throw new NotImplemented(`${this.info.name} exports no ${name}`);
    return namespace[name];
  }
}

/** Call a package function; a throw fails the case with the message. */
function callApi(name, fn, args) {
  try {
    return fn(...args);
  } catch (error) {
    throw new Threw(`${name}() threw ${describe(error)}`);
  }
}

/** Call a function on private copies of its arguments; report whether the first one changed. */
function pure(name, fn, args, identities = null) {
  const copies = args.map((argument) => structuredClone(argument));
  const before = fingerprint(copies[0]);
  const returned = callApi(name, fn, copies);
  const extra = identities === null ? {} : identities(returned, copies[0]);
  const value = toJson(returned, `the value ${name}() returned`);
  return { value, input_unchanged: fingerprint(copies[0]) === before, ...extra };
}

/** Whether every tool in `tools` is one of the very objects of the transcript's `toolsAdded` (null: no tools returned). */
function toolsAreInput(tools, messages) {
  if (!Array.isArray(tools) || tools.length === 0) return null;
  const given = new Set(Array.isArray(messages) ? messages.flatMap((message) => (isObject(message) && Array.isArray(message.toolsAdded) ? message.toolsAdded : [])) : []);
  return tools.every((tool) => given.has(tool));
}

// ---------------------------------------------------------------------------------------
// pure operations
// ---------------------------------------------------------------------------------------

const PURE = {
  async content_text(pkg, input) {
    const args = "separator" in input ? [input.content, input.separator] : [input.content];
    return pure("contentText", await pkg.find("contentText"), args);
  },
  async system_message_text(pkg, input) {
    return pure("getSystemMessageText", await pkg.find("getSystemMessageText"), [input.message]);
  },
  async render_system_message_update(pkg, input) {
    return pure("renderSystemMessageUpdate", await pkg.find("renderSystemMessageUpdate"), [input.message]);
  },
  async current_system_message(pkg, input) {
    const observed = pure("getCurrentSystemMessage", await pkg.find("getCurrentSystemMessage"), [input.messages], (returned, messages) => ({
      tools_are_input: toolsAreInput(isObject(returned) ? returned.toolsAdded : undefined, messages),
    }));
    const sections = isObject(observed.value) ? observed.value.sections : undefined;
    return { ...observed, section_order: isObject(sections) ? Object.keys(sections) : null };
  },
  async current_system_prompt(pkg, input) {
    return pure("getCurrentSystemPrompt", await pkg.find("getCurrentSystemPrompt"), [input.messages]);
  },
  async current_tools(pkg, input) {
    return pure("getCurrentTools", await pkg.find("getCurrentTools"), [input.messages], (returned, messages) => ({
      tools_are_input: toolsAreInput(returned, messages),
    }));
  },
  async normalize_context(pkg, input) {
    return pure("normalizeContext", await pkg.find("normalizeContext"), [input.context], (returned, context) => ({
      messages_are_input: isObject(returned) && isObject(context) && returned.messages === context.messages,
    }));
  },
  async faux_block(pkg, input) {
    let value;
    if (input.kind === "text") value = callApi("fauxText", await pkg.find("fauxText"), [input.text]);
    else if (input.kind === "thinking") value = callApi("fauxThinking", await pkg.find("fauxThinking"), [input.thinking]);
    else if (input.kind === "toolCall") {
      const args = [input.name, structuredClone(input.arguments)];
      if ("id" in input) args.push({ id: input.id });
      value = callApi("fauxToolCall", await pkg.find("fauxToolCall"), args);
    } else throw new ProtocolError(`unknown faux_block kind ${JSON.stringify(input.kind)}`);
    return { value: toJson(value, "the block") };
  },
  async faux_message(pkg, input) {
    const args = [structuredClone(input.content)];
    if ("options" in input) args.push(structuredClone(input.options));
    return { value: toJson(callApi("fauxAssistantMessage", await pkg.find("fauxAssistantMessage"), args), "fauxAssistantMessage()") };
  },
};

// ---------------------------------------------------------------------------------------
// event_stream scenarios
// ---------------------------------------------------------------------------------------

async function playEventStream(pkg, input, steps, deadlineS) {
  let stream;
  let terminalField; // event -> the field that carries its result, or null if not terminal
  if (input.kind === "assistant") {
    const AssistantMessageEventStream = await pkg.find("AssistantMessageEventStream");
    stream = new AssistantMessageEventStream();
    terminalField = (event) => ASSISTANT_TERMINAL_FIELDS.get(event.type) ?? null;
  } else if (input.kind === "generic") {
    const EventStream = await pkg.find("EventStream");
    const terminalTypes = [...input.terminal_types];
    const resultField = String(input.result_field);
    stream = new EventStream(
      (event) => terminalTypes.includes(event.type),
      (event) => event[resultField],
    );
    terminalField = (event) => (terminalTypes.includes(event.type) ? resultField : null);
  } else {
    throw new ProtocolError(`unknown event_stream kind ${JSON.stringify(input.kind)}`);
  }

  return playStreamSteps(stream, terminalField, steps, deadlineS);
}

// ---------------------------------------------------------------------------------------
// faux_provider scenarios
// ---------------------------------------------------------------------------------------

const CALL_ACTIONS = new Set(["abort", "start_consumer", "consume", "result"]);

/**
 * The faux provider's response steps from the case's JSON: `{message}` is the message itself,
 * `{factory}` a function step that records the context it is called with and returns the
 * message, `{factory_throws}` a function step that throws an Error with that message.
 */
function responseSteps(responses, recorder) {
  if (!Array.isArray(responses)) throw new ProtocolError("responses must be an array");
  return responses.map((response) => {
    if (!isObject(response)) throw new ProtocolError(`a response is an object, not ${safeString(response)}`);
    if ("message" in response) return structuredClone(response.message);
    if ("factory" in response) {
      const message = structuredClone(response.factory);
      return (context, _options, state) => {
        recorder.push({ context: toJson(context, "the context"), call_count: state.callCount });
        return message;
      };
    }
    if ("factory_throws" in response) {
      const text = String(response.factory_throws);
      return (context, _options, state) => {
        recorder.push({ context: toJson(context, "the context"), call_count: state.callCount });
        throw new Error(text);
      };
    }
    throw new ProtocolError(`unknown response form ${JSON.stringify(Object.keys(response))}`);
  });
}

async function playFauxProvider(pkg, input, steps, deadlineS) {
  const fauxProvider = await pkg.find("fauxProvider");
  const faux = callApi("fauxProvider", fauxProvider, "options" in input ? [structuredClone(input.options)] : []);
  const recorder = []; // what factory steps were called with
  let given = []; // the step objects handed over, to tell whether playing changed them
  let givenBefore = "";
  const setResponses = (responses, append) => {
    const objects = responseSteps(responses, recorder);
    if (append) {
      faux.appendResponses(objects);
      given.push(...objects);
    } else {
      faux.setResponses(objects);
      given = objects;
    }
    givenBefore = fingerprint(given);
  };
  setResponses(input.responses ?? [], false);
  const player = {
    name: "faux_provider",
    callActions: CALL_ACTIONS,
    open(step) {
      const model = "model" in step ? faux.getModel(String(step.model)) : faux.getModel();
      if (model === undefined) throw new ProtocolError(`the faux provider has no model ${JSON.stringify(step.model)}`);
      return { model };
    },
    stream: (call, step, signal) => callStream(faux, call, step, signal),
    callStep: fauxCallStep,
    actions: {
      requests: () => ({ requests: toJson(recorder, "the recorded requests") }),
      state: () => ({ call_count: faux.state.callCount, pending_responses: faux.getPendingResponseCount() }),
      set_responses: (step) => setResponses(step.responses, false),
      append_responses: (step) => setResponses(step.responses, true),
      check_turns: () => ({ turns_unchanged: fingerprint(given) === givenBefore }),
    },
  };
  return playCallSteps(player, steps, deadlineS);
}

/** Call the provider's stream() with the step's signal (null: none); the step's `threw` observation. */
function callStream(faux, call, step, signal) {
  const options = {};
  if (signal !== null) options.signal = signal;
  if ("session_id" in step) options.sessionId = String(step.session_id);
  if ("cache_retention" in step) options.cacheRetention = String(step.cache_retention);
  try {
    const context = structuredClone(step.context);
    call.stream = Object.keys(options).length === 0 ? faux.provider.stream(call.model, context) : faux.provider.stream(call.model, context, options);
    return null;
  } catch (error) {
    return describe(error);
  }
}

/**
 * A step on one call: `consume` with `abort_after` aborts the call after that many events.
 * Every `consume` also reports `tool_calls_are_final`: whether each `toolcall_end` carries the
 * very block object of the terminal message (PA-FAUX-TOOL-1).
 */
async function fauxCallStep(action, call, step, deadlineS) {
  if (action !== "consume" || call.stream === null || call.stream === undefined) return callStep(action, call, deadlineS);
  const observation = step.abort_after === undefined ? await callStep(action, call, deadlineS) : await consumeAborting(call, step.abort_after, deadlineS);
  if (isObject(observation) && call.consumer) observation.tool_calls_are_final = toolCallsAreFinal(call.consumer.received);
  return observation;
}

/** null without a toolcall_end event; else whether every one's toolCall is the terminal message's block at its contentIndex. */
function toolCallsAreFinal(events) {
  const ends = events.filter((event) => isObject(event) && event.type === "toolcall_end");
  if (ends.length === 0) return null;
  const last = events.at(-1);
  const message = isObject(last) ? (last.type === "error" ? last.error : last.message) : undefined;
  const blocks = isObject(message) && Array.isArray(message.content) ? message.content : [];
  return ends.every((event) => event.toolCall === blocks[event.contentIndex]);
}

async function consumeAborting(call, abortAfter, deadlineS) {
  if (call.controller === null) throw new ProtocolError("abort_after needs a call with signal: controller");
  call.consumer.onEvent = (count) => {
    if (count === abortAfter) call.controller.abort();
  };
  // The harness sums up how the stream ended (abort_summary) from these events and the case.
  return call.consumer.finish(call.stream, deadlineS);
}

// ---------------------------------------------------------------------------------------
// the protocol server
// ---------------------------------------------------------------------------------------

serve({
  name: "pi_ai_adapter",
  argument: "PACKAGE_DIR",
  profile: "pi-ai-1",
  open: (packageDir) => new Package(packageDir),
  // Its failure is kept in pkg.loading: every case then errors with it (Package.find).
  preload: (pkg) => pkg.load().then(
    () => undefined,
    () => undefined,
  ),
  implementation(pkg) {
    const implementation = { name: String(pkg.info.name || "pi-ai"), language: "javascript" };
    if (typeof pkg.info.version === "string") implementation.version = pkg.info.version;
    return implementation;
  },
  operations: PURE,
  scenarios: { event_stream: playEventStream, faux_provider: playFauxProvider },
});
