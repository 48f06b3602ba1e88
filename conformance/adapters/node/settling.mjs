// Settling by idleness (spec/protocol.md, "Settling"), shared by the Node.js adapters: a
// waiting step ends when what it waits for settles, when the event loop is idle (nothing left
// that could settle it), or at the deadline, whichever comes first.

// Resources that stay active while nothing can happen: the protocol's own stdio pipes and
// signal handlers. Anything else (a timer of the implementation's, a socket, a child process,
// a file read) may still settle a stream, so the wait goes on until the deadline.
const IDLE_RESOURCES = new Set(["PipeWrap", "TTYWrap", "SignalWrap"]);
// Event-loop turns in a row that must find the loop idle before a wait ends early.
const IDLE_TURNS = 3;
let ownTimers = 0; // our deadline timers, which are active resources too

/** True when no timer, I/O or child of the implementation is pending (Node 17.3+; else never). */
function loopIsIdle() {
  if (typeof process.getActiveResourcesInfo !== "function") return false;
  let timers = 0;
  for (const kind of process.getActiveResourcesInfo()) {
    if (kind === "Timeout") timers += 1;
    else if (!IDLE_RESOURCES.has(kind)) return false;
  }
  return timers <= ownTimers;
}

/**
 * Resolve (false) once the event loop has been idle for IDLE_TURNS turns in a row: every
 * microtask ran, no timer or I/O is pending, so nothing can settle anything any more.
 * Stops polling when `wait.over` is set.
 */
function idleLoop(wait) {
  return new Promise((resolve) => {
    let quiet = 0;
    const check = () => {
      if (wait.over) return;
      quiet = loopIsIdle() ? quiet + 1 : 0;
      if (quiet >= IDLE_TURNS) resolve(false);
      else setImmediate(check);
    };
    setImmediate(check);
  });
}

/**
 * Wait until `promise` settles (true), the event loop is idle or `seconds` pass (false), or
 * `interrupt` resolves (its value). Clears its timer.
 */
export function settleOrIdle(promise, seconds, interrupt) {
  let timer;
  const wait = { over: false };
  ownTimers += 1;
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
    clearTimeout(timer);
  });
}
