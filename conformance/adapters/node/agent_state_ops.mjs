// Chapter 09's reducer for the course adapter: reduce_agent_state (lab 9.1), played against
// the student's compiled `agent` module (its export reduceAgentState). It observes exactly as
// the in-process Python binding does (conformance/adapters/agent_state_binding.py), so the
// same fixtures judge both:
//
//   value              the returned state, serialized right after the call
//   same_object        whether the returned state is the very state object given
//   input_unchanged    whether the given state and event are as they were before the call
//   messages_detached  whether the returned state's messages stay as they were once the adapter
//                      has changed every message it gave and appended one to every messages
//                      array it gave; null when it could change none of them
//
// The Agent's own labs (9.2-9.5) are agent_ops.mjs's; it scribbles with this module's helpers.
//
// `agentStateOperations(find)` takes the adapter's lookup of a named export
// (pi_course_adapter.mjs's Modules.find, with an isolation context) and returns the handlers.
//
// No dependencies: Node.js 20 built-ins only.

import { NotImplemented, Threw, describe, isNotImplemented } from "./failures.mjs";
import { fingerprint, isObject, toJson } from "./observation.mjs";

/** What the adapter writes into the inputs after the call (agent_state_binding.SCRIBBLE). */
export const SCRIBBLE = "changed by the caller after the reduce";

/** Overwrite a message's texts (a system message's content and sections); the number of changes made. */
function scribbleMessage(message) {
  if (!isObject(message)) return 0;
  const content = message.content;
  if (typeof content === "string") {
    message.content = SCRIBBLE;
    if (isObject(message.sections)) message.sections[SCRIBBLE] = SCRIBBLE;
    return 1;
  }
  const blocks = Array.isArray(content) ? content.filter((block) => isObject(block) && block.type === "text") : [];
  for (const block of blocks) block.text = SCRIBBLE;
  return blocks.length;
}

/** Change every message of `holder.messages` and append one more; the number of changes made. */
export function scribbleMessages(holder) {
  const messages = isObject(holder) ? holder.messages : undefined;
  if (!Array.isArray(messages)) return 0;
  let changed = 0;
  for (const message of messages) changed += scribbleMessage(message);
  messages.push({ role: "user", content: [{ type: "text", text: SCRIBBLE }], timestamp: 0 });
  return changed + 1;
}

/** Change what an event carries that the caller could still hold: its message, system patch or result's messages. */
export function scribbleEvent(event) {
  if (!isObject(event)) return 0;
  let changed = 0;
  for (const key of ["message", "system"]) if (isObject(event[key])) changed += scribbleMessage(event[key]);
  return changed + (isObject(event.result) ? scribbleMessages(event.result) : 0);
}

/** One reduceAgentState(state, event) on private copies: the new state, its identity, what it shares. */
async function reduceAgentStateOp(find, input) {
  const reduce = await find("reduceAgentState");
  // Private copies: the fixture's input is never the student's to keep or change.
  const state = structuredClone(input.state);
  const event = structuredClone(input.event);
  const before = fingerprint([state, event]);
  let returned;
  try {
    returned = reduce(state, event);
  } catch (error) {
    // The course's starter (starters/09-agent.ts) throws "Lab 9.1 reducer 尚未实现": a skip.
    if (isNotImplemented(error)) throw new NotImplemented(`reduceAgentState is not implemented: ${describe(error)}`);
    throw new Threw(`reduceAgentState() threw ${describe(error)}`);
  }
  const value = toJson(returned, "the state reduceAgentState() returned");
  const unchanged = fingerprint([state, event]) === before;
  const changed = scribbleMessages(state) + scribbleEvent(event);
  const after = toJson(returned, "the returned state, once the inputs were changed");
  let detached = null;
  if (changed > 0 && isObject(value) && isObject(after)) detached = fingerprint(after.messages) === fingerprint(value.messages);
  return { value, same_object: returned === state, input_unchanged: unchanged, messages_detached: detached };
}

/** Chapter 09's reducer operation over the exports `find(modules, name)` resolves. */
export function agentStateOperations(find) {
  return {
    operations: {
      reduce_agent_state: (modules, input) => reduceAgentStateOp((name) => find(modules, name), input),
    },
  };
}
