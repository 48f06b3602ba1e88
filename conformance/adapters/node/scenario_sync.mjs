// What the Node.js adapters' scenario players share (spec/fixture-format.md, "Scenarios: the
// agent loop" and "Agent scenarios"): gates that only steps open, a watch that wakes waiting
// steps whenever something was recorded, and the wait of a step, which ends when its condition
// holds or when the event loop is idle (settling.mjs), so that a step that can never be
// satisfied is reported as `stalled`, never as a hang. Used by agent_scenario.mjs (upstream
// pi-agent-core) and loop_ops.mjs (the course's chapter 07).
//
// No dependencies: Node.js 20 built-ins only.

import { settleOrIdle } from "./settling.mjs";

/** Named gates: `wait(name)` resolves once `open(name)` ran (a gate opened earlier does not wait). */
export class Gates {
  constructor() {
    this.gates = new Map();
  }
  get(name) {
    if (!this.gates.has(name)) {
      let open;
      const promise = new Promise((resolve) => (open = resolve));
      this.gates.set(name, { promise, open, opened: false });
    }
    return this.gates.get(name);
  }
  wait(name) {
    return this.get(name).promise;
  }
  open(name) {
    const gate = this.get(name);
    gate.opened = true;
    gate.open();
  }
}

/** Wakes the steps that wait for a condition whenever something was recorded (`poke`). */
export class Watch {
  constructor() {
    this.waiters = [];
  }
  until(condition) {
    if (condition()) return Promise.resolve();
    return new Promise((resolve) => this.waiters.push({ condition, resolve }));
  }
  poke() {
    this.waiters = this.waiters.filter((waiter) => {
      if (!waiter.condition()) return true;
      waiter.resolve();
      return false;
    });
  }
}

// settleOrIdle races its `interrupt` too: a promise that never settles stands for "none".
export const NEVER = new Promise(() => {});

/** Wait until `condition()` holds (true), or the loop is idle or `deadlineS` passed without it (false). */
export async function waitUntil(watch, condition, deadlineS) {
  const met = await settleOrIdle(watch.until(condition), deadlineS, NEVER);
  return met || condition();
}

/** Wait until the event loop is idle (or `deadlineS` passed): the `settle` step. */
export function settle(deadlineS) {
  return settleOrIdle(NEVER, deadlineS, NEVER);
}
