// Reference of the course's chapter 03 IR helpers (packages/pi-course/src/types.ts), for lab
// isolation (lab_isolation.mjs): a lab 4 ScriptedModel or a lab 5 provider adapter that imports "./types.js" gets these, so
// its points depend on its own code alone. Written from spec/spec.md (IR-MAKE-*, IR-TEXT-*,
// SYS-*); the course's interfaces are types only and leave nothing at run time.

/** The course's zero usage (a chapter 05 provider-adapter imports it, as ZERO_USAGE's value). */
export const EMPTY_USAGE = { input: 0, output: 0, totalTokens: 0 };

/** IR-MAKE-1: `{type: "text", text}`. */
export const text = (value) => ({ type: "text", text: value });

/** IR-MAKE-2: a user message of one text block, stamped now. */
export const userMessage = (value) => ({ role: "user", content: [text(value)], timestamp: Date.now() });

/** IR-MAKE-3: an assistant message with the scripted defaults; `overrides` win. */
export function assistantMessage(content, stopReason = "stop", overrides = {}) {
  const defaults = { provider: "scripted", model: "scripted-v1", usage: { input: 0, output: 0, totalTokens: 0 } };
  return { role: "assistant", content, ...defaults, stopReason, timestamp: Date.now(), ...overrides };
}

/** SYS-TEXT-1: the content and each present, non-empty section, blank-line separated. */
export function systemMessageText(message) {
  const sections = Object.values(message.sections ?? {}).filter((value) => value !== null);
  return [message.content, ...sections].filter((part) => part !== "").join("\n\n");
}

/** IR-TEXT-1..4: a message's text blocks, one per line; tool calls add nothing. */
export function textOf(message) {
  if (message.role === "system") return systemMessageText(message);
  const texts = [];
  for (const block of message.content) if (block.type === "text") texts.push(block.text);
  return texts.join("\n");
}

/** SYS-REPLAY-1..7: every system message replayed in order into a new one; undefined without any. */
export function currentSystemMessage(messages) {
  const system = messages.filter((message) => message.role === "system");
  if (system.length === 0) return undefined;
  const sections = new Map(); // insertion order: a section removed then set again goes last
  for (const message of system) {
    for (const [name, value] of Object.entries(message.sections ?? {})) {
      if (value === null) sections.delete(name);
      else sections.set(name, value); // an update keeps the section's place
    }
  }
  const content = system.map((message) => message.content).filter((part) => part !== "").join("\n\n");
  const replayed = sections.size > 0 ? { sections: Object.fromEntries(sections) } : {};
  return { role: "system", content, ...replayed, timestamp: system[0].timestamp };
}

/** SYS-PROMPT-1: the replayed system message's text, or undefined. */
export function currentSystemPrompt(messages) {
  const message = currentSystemMessage(messages);
  return message === undefined ? undefined : systemMessageText(message);
}
