// Settling by idleness (spec/protocol.md, "Settling"), shared by the Node.js adapters: a
// waiting step ends when what it waits for settles, when the event loop is idle (nothing left
// that could settle it), or at the deadline, whichever comes first.

// Resources that stay active while nothing can happen: the protocol's own stdio pipes and
// signal handlers. Anything else (a timer of the implementation's, a socket, a child process,
// a file read) may still settle a stream, so the wait goes on until the deadline.
const IDLE_RESOURCES = new Set(["PipeWrap", "TTYWrap", "SignalWrap"]);
// Event-loop turns in a row that must find the loop idle before a wait ends early.
const IDLE_TURNS = 3;
// Turns in a row, with no settle wait of ours running, before an operation is declared hung.
const HUNG_TURNS = 10;
// How often a watch re-checks while the loop is busy (a timer, I/O or a child is pending).
const BUSY_POLL_MS = 5;
let ownTimers = 0; // our deadline and polling timers, which are active resources too
let ownImmediates = 0; // our polling immediates, listed as active resources while pending
let waits = 0; // settle waits running now: while one runs, the operation it belongs to is not hung

/**
 * Whether this runtime's list of active resources can be trusted: a timer of ours that is
 * pending must be in it. Bun has `process.getActiveResourcesInfo` but always returns an empty
 * list, which would read as "idle" while a stream is still producing; there (and where the
 * function is missing) the loop is never taken for idle, and waits end at their deadline.
 */
// Captured before the code under test loads: replacing process.getActiveResourcesInfo must not
// make the adapter take a busy loop for an idle one (and so answer early).
const activeResources = typeof process.getActiveResourcesInfo === "function" ? process.getActiveResourcesInfo.bind(process) : null;

const RESOURCES_REPORTED = (() => {
  if (activeResources === null) return false;
  const probe = setTimeout(() => {}, 1e6);
  try {
    return activeResources().includes("Timeout");
  } finally {
    clearTimeout(probe);
  }
})();

/** True when no timer, I/O or child of the implementation is pending (Node 17.3+; else never). */
function loopIsIdle() {
  if (!RESOURCES_REPORTED) return false;
  let timers = 0;
  let immediates = 0;
  for (const kind of activeResources()) {
    if (kind === "Timeout") timers += 1;
    else if (kind === "Immediate") immediates += 1;
    else if (!IDLE_RESOURCES.has(kind)) return false;
  }
  // Two watches may poll at once (a settle wait inside a watched operation): neither may
  // take the other's pending immediate or timer for the implementation's work.
  return timers <= ownTimers && immediates <= ownImmediates;
}

/** setImmediate for our own polling: counted, so that loopIsIdle does not see it as work. */
function pollNextTurn(check) {
  ownImmediates += 1;
  setImmediate(() => {
    ownImmediates -= 1;
    check();
  });
}

/**
 * Resolve once `isIdle()` has held for `turns` polls in a row; polls every turn while it
 * holds, and after `busyPollMs` (0: the next turn) while it does not. Stops polling, without
 * resolving, once `isOver()` is true.
 */
function idleFor(turns, isIdle, isOver, busyPollMs) {
  return new Promise((resolve) => {
    let quiet = 0;
    const check = () => {
      if (isOver()) return;
      const idle = isIdle();
      quiet = idle ? quiet + 1 : 0;
      if (quiet >= turns) resolve();
      else if (idle || busyPollMs === 0) pollNextTurn(check);
      else {
        ownTimers += 1;
        setTimeout(() => {
          ownTimers -= 1;
          pollNextTurn(check);
        }, busyPollMs);
      }
    };
    pollNextTurn(check);
  });
}

/**
 * Resolve (false) once the event loop has been idle for IDLE_TURNS turns in a row: every
 * microtask ran, no timer or I/O is pending, so nothing can settle anything any more.
 * Polls every BUSY_POLL_MS while the loop is busy (a stray child or a live timer of the
 * implementation's would otherwise keep one core spinning until the deadline). Stops
 * polling when `wait.over` is set.
 */
function idleLoop(wait) {
  return idleFor(IDLE_TURNS, loopIsIdle, () => wait.over, BUSY_POLL_MS).then(() => false);
}

/**
 * Wait until `promise` settles (true), the event loop is idle or `seconds` pass (false), or
 * `interrupt` resolves (its value). Clears its timer.
 */
export function settleOrIdle(promise, seconds, interrupt) {
  let timer;
  const wait = { over: false };
  ownTimers += 1;
  waits += 1;
  const deadline = new Promise((resolve) => {
    timer = setTimeout(resolve, seconds * 1000, false);
  });
  const settled = promise.then(
    () => true,
    () => true,
  );
  return Promise.race([settled, deadline, idleLoop(wait), interrupt]).finally(() => {
    wait.over = true;
    ownTimers -= 1;
    waits -= 1;
    clearTimeout(timer);
  });
}

/**
 * Resolve (true) if `promise` can never settle: it is still pending while the event loop has
 * been idle for HUNG_TURNS turns in a row and no settle wait of ours is running. Nothing is
 * left that could run code, so nothing can settle it (spec/protocol.md, "Settling": a
 * promise that never resolves is a hang that needs no deadline to be seen). Never resolves
 * otherwise; stops watching once `promise` settles. Polls every turn while the loop looks
 * idle and every BUSY_POLL_MS while it is busy, so a long legitimate wait costs no CPU.
 */
export function neverSettles(promise) {
  let done = false;
  promise.then(
    () => (done = true),
    () => (done = true),
  );
  return idleFor(HUNG_TURNS, () => waits === 0 && loopIsIdle(), () => done, BUSY_POLL_MS).then(() => true);
}
