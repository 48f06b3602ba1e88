// A complete pi-conformance adapter in 30 lines of JavaScript: it checks the two pure
// functions of lab 3.1 that a module exports, over the JSON-lines protocol (spec/protocol.md).
// Run: pi-conformance run --impl "cmd:node examples/minimal_adapter.mjs path/to/types.js"
import { createInterface } from "node:readline";
import { pathToFileURL } from "node:url";
import { resolve } from "node:path";

const impl = await import(pathToFileURL(resolve(process.argv[2])).href);
const unchanged = (input, call) => {
  const before = JSON.stringify(input);
  const value = call(input);
  return { value: value ?? null, input_unchanged: JSON.stringify(input) === before };
};
const operations = {
  text_of: ({ message }) => unchanged(message, impl.textOf),
  current_system_prompt: ({ messages }) => unchanged(messages, impl.currentSystemPrompt),
};

for await (const line of createInterface({ input: process.stdin })) {
  const { seq, op, input } = JSON.parse(line);
  let response;
  if (op === "hello") {
    response = { seq, ok: true, protocol: 1, implementation: { name: "minimal-example" }, operations: Object.keys(operations) };
  } else if (op === "stop") {
    response = { seq, ok: true };
  } else {
    try {
      response = { seq, ok: true, observation: operations[op](input) };
    } catch (error) {
      response = { seq, ok: false, error: { kind: "threw", message: `${error.name}: ${error.message}` } };
    }
  }
  process.stdout.write(JSON.stringify(response) + "\n");
  if (op === "stop") process.exit(0);
}
