// The failures the Node.js adapters throw, each mapping onto one error kind of the protocol
// (spec/protocol.md, "Errors"), and how to describe what implementation code threw.
// protocol.mjs turns them into error responses; observation.mjs and the adapters throw them.
//
// No dependencies: Node.js 20 built-ins only.

/** The implementation lacks what the operation needs: the case is skipped. */
export class NotImplemented extends Error {}
/** The implementation threw (or returned a non-JSON value) where a value is expected. */
export class Threw extends Error {}
/** The request cannot be played (bad request, unknown action): the case errors. */
export class ProtocolError extends Error {}
/** The operation needs a module whose loading killed an earlier process of this run: the case errors. */
export class LoadFailed extends Error {}

/** `Name: message` of anything implementation code threw (binding.py's describe_exception). */
export function describe(error) {
  if (error instanceof Error || (error !== null && typeof error === "object" && "message" in error)) {
    const name = error.name || error.constructor?.name || "Error";
    return `${name}: ${error.message}`;
  }
  return `non-Error value thrown: ${safeString(error)}`;
}

/** A short text form of any value, even one whose toString throws. */
export function safeString(value) {
  try {
    return typeof value === "string" ? JSON.stringify(value) : String(value);
  } catch {
    return Object.prototype.toString.call(value);
  }
}

/**
 * The course's placeholders throw "not implemented in lab 3.1" and the like; its chapter 06
 * starter (starters/06-tool.ts) throws "Lab 6.1 stringValue 尚未实现" ("not implemented yet").
 */
export function isNotImplemented(error) {
  const message = error !== null && typeof error === "object" ? error.message : error;
  return typeof message === "string" && /not implemented|尚未实现/i.test(message);
}

/** null, or what `action` threw: a scenario step observes throws instead of failing. */
export function threwFrom(action) {
  try {
    action();
    return null;
  } catch (error) {
    return describe(error);
  }
}
