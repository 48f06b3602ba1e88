// The JSON-lines protocol side of the Node.js adapters (spec/protocol.md): the server that
// reads requests on stdin and answers on stdout (sealed through channel.mjs), the handshake,
// loading notices, and the error response each failure (failures.mjs) maps onto. An adapter
// hands serve() its operations and scenario players; observation.mjs builds what they return.
//
// No dependencies: Node.js 20 built-ins only.

// channel.mjs first: it captures the built-ins the channel relies on before anything else runs.
import { openChannel, parseJson } from "./channel.mjs";
import { createInterface } from "node:readline";
import { lockDown } from "./lockdown.mjs";
import { LoadFailed, NotImplemented, ProtocolError, Threw, describe } from "./failures.mjs";
import { installStrayErrorHandlers, isObject, resetStrayErrors, throwIfStrayPlaceholder, tick } from "./observation.mjs";
import { neverSettles } from "./settling.mjs";

const PROTOCOL = 1;
const DEFAULT_PROFILE = "course";
const DEFAULT_SETTLE_DEADLINE_S = 0.25;

// ---------------------------------------------------------------------------------------
// loading implementation modules, with notices (spec/protocol.md, "Loading notices")
// ---------------------------------------------------------------------------------------

// Set by serve(): writes one protocol line. Until then (no server), notices go nowhere.
let writeNotice = () => {};
// Modules the runner said must not be loaded again (the handshake's failed_modules).
let failedModules = {};

/**
 * Import an implementation module, telling the runner before and after: if loading it kills
 * this process (or writes on stdout), the runner charges that to the module, not to the case,
 * and the next process is told not to load it again. A module named in the handshake's
 * `failed_modules` is not imported: the promise rejects with LoadFailed and the runner's words.
 */
export function importWatched(name, url) {
  if (Object.hasOwn(failedModules, name)) return Promise.reject(new LoadFailed(failedModules[name]));
  writeNotice({ notice: "loading", module: name });
  const loaded = () => writeNotice({ notice: "loaded", module: name });
  return import(url).finally(loaded);
}

// ---------------------------------------------------------------------------------------
// the protocol server
// ---------------------------------------------------------------------------------------

function errorResponse(kind, message) {
  return { ok: false, error: { kind, message } };
}

/**
 * Serve the protocol on stdin/stdout for one implementation, until `stop` or end of input.
 *
 * `adapter` is what is specific to the implementation:
 * - `name`: the program's name, in its usage line and its log lines;
 * - `argument`: the one command-line argument it takes, as the usage line shows it;
 * - `profile`: the profile its handshake states;
 * - `open(argument)`: the implementation (loaded lazily by the adapter), given to handlers;
 * - `implementation(impl)`: the handshake's `implementation` object;
 * - `operations`: op -> `async (impl, input, deadlineS) => observation` (most ignore the deadline);
 * - `scenarios`: op -> `async (impl, input, steps, deadlineS) => observation`;
 * - `offers(impl, op)`: optional, whether the handshake lists `op` (default: every handler's);
 * - `preload(impl)`: optional, imports every implementation module now, for the runner's
 *   `preload` request: the import is timed apart from the first case (spec/protocol.md, "preload").
 * The handshake lists the keys of `operations` then of `scenarios` (those `offers` allows): the
 * handler tables are the adapter's only list of what it supports.
 */
export function serve(adapter) {
  // Taken before any implementation module loads: nobody else can have it afterwards.
  const { startSealing, writeLine } = openChannel();
  const [argument, ...extra] = process.argv.slice(2);
  if (!argument || extra.length > 0) {
    process.stderr.write(`usage: node ${adapter.name}.mjs <${adapter.argument}>\n`);
    process.exit(2);
  }
  // Lab isolation's module hooks go in first; lockdown then refuses any others.
  const isolation = typeof adapter.isolate === "function" ? adapter.isolate(argument) : null;
  lockDown(); // and what the permission model leaves open is closed before any implementation module loads
  // Implementation code may console.log at import time or while playing a turn; one stray
  // line on stdout would break the protocol, so everything except our responses goes to stderr.
  // Responses go through channel.mjs, which writes on fd 1 itself (sealed once asked for).
  // Both streams are counted, so the runner can mention the output (spec/protocol.md,
  // "stray_output"): it costs nothing, but a student should hear of a forgotten console.log.
  const writeStderr = process.stderr.write.bind(process.stderr);
  process.stdout.write = (chunk, ...rest) => noteStrayOutput(chunk) && writeStderr(chunk, ...rest);
  process.stderr.write = (chunk, ...rest) => noteStrayOutput(chunk) && writeStderr(chunk, ...rest);
  const respond = writeLine;
  writeNotice = respond;
  const log = (text) => writeStderr(`[${adapter.name}] ${text}\n`);
  installStrayErrorHandlers(log);

  const server = new Server(adapter, adapter.open(argument, isolation), respond, log, startSealing);
  const lines = createInterface({ input: process.stdin, crlfDelay: Infinity });
  // One request at a time, in order, even if the runner writes ahead.
  let queue = Promise.resolve();
  let stopping = false;
  lines.on("line", (line) => {
    if (stopping || line.trim() === "") return;
    queue = queue.then(async () => {
      if (stopping) return;
      if (!(await server.handle(line))) {
        stopping = true;
        lines.close();
      }
    });
  });
  lines.on("close", () => {
    // Implementation code may leave timers or handles behind: exit explicitly once answered.
    queue.then(() => process.exit(0));
  });
}

class Server {
  constructor(adapter, impl, respond, log, startSealing) {
    this.adapter = adapter;
    this.startSealing = startSealing;
    this.impl = impl;
    this.respond = respond;
    this.log = log;
    this.settleDeadlineS = DEFAULT_SETTLE_DEADLINE_S;
    const handled = [...Object.keys(adapter.operations), ...Object.keys(adapter.scenarios)];
    this.operations = typeof adapter.offers === "function" ? handled.filter((op) => adapter.offers(impl, op)) : handled;
  }

  hello(request) {
    if (typeof request.settle_deadline_s === "number" && request.settle_deadline_s > 0) {
      this.settleDeadlineS = request.settle_deadline_s;
    }
    if (isObject(request.failed_modules)) failedModules = request.failed_modules;
    const implementation = this.adapter.implementation(this.impl);
    const response = { ok: true, protocol: PROTOCOL, profile: this.adapter.profile, implementation, operations: this.operations };
    if (typeof this.adapter.preload === "function") response.preload = true;
    if (typeof request.channel_key === "string") {
      this.startSealing(request.channel_key); // this response is the first sealed line
      response.sealed = true;
    }
    return response;
  }

  async operation(request) {
    const { op, input, steps } = request;
    if (!isObject(input)) throw new ProtocolError(`${op} needs an input object`);
    if (Object.hasOwn(this.adapter.operations, op)) {
      return { ok: true, observation: await this.adapter.operations[op](this.impl, input, this.settleDeadlineS) };
    }
    if (!Array.isArray(steps)) throw new ProtocolError(`${op} needs a steps array`);
    return { ok: true, observation: await this.adapter.scenarios[op](this.impl, input, steps, this.settleDeadlineS) };
  }

  /** Run one operation; its failures (and stray "not implemented" throws) become errors. */
  async guardedOperation(request) {
    resetStrayErrors();
    try {
      const response = await this.operation(request);
      await tick(); // let a rejection left unhandled by the last step be reported now
      throwIfStrayPlaceholder();
      return response;
    } catch (error) {
      if (error instanceof NotImplemented) return errorResponse("not_implemented", error.message);
      if (error instanceof Threw) return errorResponse("threw", error.message);
      if (error instanceof ProtocolError) return errorResponse("protocol", error.message);
      if (error instanceof LoadFailed) return errorResponse("load_failed", error.message);
      this.log(`internal error: ${error?.stack ?? describe(error)}`);
      return errorResponse("protocol", `the adapter failed: ${describe(error)}`);
    }
  }

  /** Answer one request line; never throws. Returns false once the server should stop. */
  async handle(line) {
    let request;
    try {
      request = parseJson(line);
    } catch (error) {
      // Answer with the request's own seq if one can be read, so the runner can match it.
      const seq = Number(/"seq"\s*:\s*(\d+)/.exec(line)?.[1] ?? 0);
      this.respond({ seq, ...errorResponse("protocol", `not JSON: ${describe(error)}`) });
      return true;
    }
    const seq = Number.isInteger(request?.seq) && request.seq >= 0 ? request.seq : 0;
    if (!isObject(request) || typeof request.op !== "string") {
      this.respond({ seq, ...errorResponse("protocol", "a request is an object with seq and op") });
      return true;
    }
    if (request.op === "hello") {
      this.respond({ seq, ...this.hello(request) });
      return true;
    }
    if (request.op === "preload" && typeof this.adapter.preload === "function") {
      // A module that fails to import is remembered by the adapter: the cases that need it say so.
      // An import that can never finish (a top-level await on nothing) is left pending: the
      // operations that need it are answered "hung", each at once, as without the preload.
      const work = Promise.resolve(this.adapter.preload(this.impl));
      await Promise.race([work, neverSettles(work)]);
      this.respond({ seq, ok: true });
      return true;
    }
    if (request.op === "stop") {
      this.respond({ seq, ok: true });
      return false;
    }
    if (!this.operations.includes(request.op)) {
      // Another profile's operation is the likely mistake; the default profile goes unnamed.
      const profile = this.adapter.profile === DEFAULT_PROFILE ? "" : ` (profile ${this.adapter.profile})`;
      this.respond({ seq, ...errorResponse("protocol", `unknown op ${JSON.stringify(request.op)}${profile}`) });
      return true;
    }
    // An operation still pending once nothing is left that could finish it is answered as
    // hung at once, instead of holding the runner until its timeout kills this process. Its
    // work is abandoned: should it ever finish, nobody answers for it.
    const work = this.guardedOperation(request);
    const hung = neverSettles(work).then(() =>
      errorResponse("hung", `${request.op} never finishes: it is still pending while the event loop is idle (nothing is left that could settle it)`),
    );
    const response = { seq, ...(await Promise.race([work, hung])) };
    const stray = takeStrayOutput();
    if (stray !== null) response.stray_output = stray;
    this.respond(response);
    return true;
  }
}

// Writes the implementation made on stdout or stderr since the last operation's response.
let strayWrites = 0;
let firstStray = "";
const STRAY_SHOWN_CHARS = 200;

/** Count one write of implementation output; always true, so the write goes on. */
function noteStrayOutput(chunk) {
  strayWrites += 1;
  if (strayWrites === 1) {
    const text = typeof chunk === "string" ? chunk : Buffer.from(chunk ?? "").toString("utf8");
    firstStray = text.slice(0, STRAY_SHOWN_CHARS);
  }
  return true;
}

/** The output counted since the last call, as the response's `stray_output`, or null if there was none. */
function takeStrayOutput() {
  if (strayWrites === 0) return null;
  const stray = { writes: strayWrites, first: firstStray };
  strayWrites = 0;
  firstStray = "";
  return stray;
}
