// Chapter 03: the message IR, its constructors, text projection and system replay.
// Plain JavaScript written from spec/spec.md (IR-*, SYS-*); the shapes are the course's
// TypeScript interfaces, which leave no trace in compiled output.

/** IR-MAKE-1: a text block. */
export function text(value) {
  return { type: "text", text: value };
}

/** IR-MAKE-2: a user message with one text block, stamped with the current time. */
export function userMessage(value) {
  return { role: "user", content: [text(value)], timestamp: Date.now() };
}

/** IR-MAKE-3: an assistant message with typed defaults that `overrides` may replace. */
export function assistantMessage(content, stopReason = "stop", overrides = {}) {
  return {
    role: "assistant",
    content,
    provider: "scripted",
    model: "scripted-v1",
    usage: { input: 0, output: 0, totalTokens: 0 },
    stopReason,
    timestamp: Date.now(),
    ...overrides,
  };
}

/** IR-TEXT-1..4: the text blocks joined with "\n"; tool calls contribute nothing. */
export function textOf(message) {
  if (message.role === "system") return systemMessageText(message);
  return message.content
    .flatMap((block) => (block.type === "text" ? [block.text] : []))
    .join("\n");
}

/** SYS-TEXT-1: content, then each section in order; null and empty strings left out. */
export function systemMessageText(message) {
  const parts = [message.content];
  for (const value of Object.values(message.sections ?? {})) {
    if (value !== null) parts.push(value);
  }
  return [...parts.slice(1), parts[0]].filter((part) => part.length > 0).join("\n\n");
}

/** SYS-REPLAY-1..7: replay every system message, in order, into one new message. */
export function currentSystemMessage(messages) {
  const content = [];
  // A Map, not an object: a section deleted and added again goes to the end (SYS-REPLAY-4).
  const sections = new Map();
  let timestamp;
  for (const message of messages) {
    if (message.role !== "system") continue;
    timestamp ??= message.timestamp;
    if (message.content.length > 0) content.push(message.content);
    for (const [name, value] of Object.entries(message.sections ?? {})) {
      if (value === null) sections.delete(name);
      else sections.set(name, value);
    }
  }
  if (timestamp === undefined) return undefined;
  return {
    role: "system",
    content: content.join("\n\n"),
    ...(sections.size > 0 ? { sections: Object.fromEntries(sections) } : {}),
    timestamp,
  };
}

/** SYS-PROMPT-1: the replayed message's text, or undefined without a system message. */
export function currentSystemPrompt(messages) {
  const message = currentSystemMessage(messages);
  return message ? systemMessageText(message) : undefined;
}
