/**
 * The driver protocol server of threads-ts (spec/driver-protocol.md): one JSON request per
 * line on stdin, one canonical JSON answer per line on stdout, in order. Nothing else is ever
 * written to stdout; diagnostics go to stderr. Run as `node ts/dist/driver.js` (or
 * `node ts/dist/src/driver.js`).
 *
 * Commands (schemas/driver/*.schema.json): hello, reduce, match, canonicalize, replay,
 * write_case, the library requests of ./library-requests.ts, shutdown (exit 0, no answer). A failed request is answered
 * `{id, ok: false, error: {code, message}}`; a line that is not a JSON object gets
 * `protocol_error` with id null; an unexpected exception becomes `internal_error`. The driver
 * never dies on a bad request.
 */

import { readSync, realpathSync } from "node:fs";
import { fileURLToPath } from "node:url";

import { DEFAULT_DIALECTS, checkCaseName } from "../case/case.js";
import { foldCaseLog, type ReducedLog } from "../case/reduced-log.js";
import { canonicalDocument, canonicalLine, emitCanonicalLine } from "../core/canonical.js";
import { getDialect, type DialectLike } from "../core/dialects.js";
import { CaseError, pointerJoin } from "../core/errors.js";
import { checkEvents, reduceLog } from "../core/log.js";
import { differences } from "../core/matchers.js";
import { quote } from "../core/texts.js";
import { Reducer, type Envelope } from "../core/reducer.js";
import { replayCase, type ReplayOptions } from "../reference/replay.js";
import { loadAgent, loadedAgent, type AgentRef } from "../reference/agent-ref.js";
import { liveTurnFromRequest, type AskModel } from "../reference/live.js";
import { ArtifactStore } from "../reference/runtime.js";
import { buildCaseFiles, checkCaseFiles, checkExpectation, checkSecretsMode, type ExternalEffects } from "../case/save.js";
import { redactEvents } from "../case/redact.js";
import { supplySandboxBytes } from "../case/sandbox-files.js";
import { schemaProblems } from "../core/schemas.js";
import { parse, type JsonObject, type JsonValue, isObj } from "../core/strictjson.js";
import { version } from "../core/version.js";
import { checkCasePaths, decodeArtifacts } from "../case/layout.js";
import { LIBRARY_COMMANDS, LIBRARY_HANDLERS } from "./library-requests.js";
import { decodeBase64, oneReduceSource, under, writable } from "./request-values.js";

export const PROTOCOL = 1;
export const CAPABILITIES = ["reduce", "match", "canonicalize", "replay", "write_case", "live", "agent", "library"];
export const DIALECT = "threads-ts";


function need(message: JsonObject, key: string, cmd: string): JsonValue {
  if (!Object.hasOwn(message, key)) throw new CaseError("invalid_request", `${cmd} needs ${quote(key)}`, { pointer: `/${key}` });
  return message[key] as JsonValue;
}

function dialectName(value: JsonValue | undefined, fallback: string): string {
  if (value === undefined) return fallback;
  if (typeof value !== "string") throw new CaseError("dialect_unknown", `unknown dialect ${quote(value)}`);
  return value;
}

/**
 * A log given as values, checked as a log: the reader's rules and the reducer's, event by event
 * (`log_invalid` at `event N`), as `reduce` and the CLI check a log file.
 */
function checkedLog(log: JsonValue[], dialect: DialectLike, reducer: Reducer = new Reducer()): Envelope[] {
  const events: Envelope[] = [];
  let i = 0;
  for (const ev of checkEvents(log, { dialect })) {
    try {
      reducer.apply(ev);
    } catch (err) {
      throw err instanceof CaseError ? err.at({ file: `event ${i}` }) : err;
    }
    events.push(ev);
    i++;
  }
  return events;
}

/**
 * The fold of the last case log a `reduce` request named by path: a `replay` of that case whose
 * log is still those bytes goes on from it instead of reducing the log again (issue 33;
 * spec/driver-protocol.md 2.5).
 */
let lastFold: ReducedLog | undefined;

function reduceRequest(message: JsonObject, dialect: string): JsonObject {
  const source = oneReduceSource(message); // exactly one (spec/driver-protocol.md 2.2)
  const d = getDialect(dialectName(message["dialect"], dialect));
  let state;
  if (source === "path") {
    const path = message["path"];
    const name = typeof path === "string" ? path : String(path);
    const done = foldCaseLog(name, d.name);
    if (done !== undefined) lastFold = done; // one case at a time: the last one only
    // not a case's log, or refused: reduced (and refused) as any log
    state = done !== undefined ? done.reducer.state : reduceLog(name, { dialect: d });
  } else if (source === "log") {
    const log = message["log"];
    if (!Array.isArray(log)) throw new CaseError("invalid_request", "reduce: log must be a list of events", { pointer: "/log" });
    const r = new Reducer();
    checkedLog(log, d, r);
    state = r.state;
  } else {
    const text = message["log_text"];
    const raw =
      source === "log_text"
        ? new TextEncoder().encode(typeof text === "string" ? text : String(text))
        : decodeBase64(message["log_base64"], "/log_base64");
    state = reduceLog(raw, { dialect: d, name: "<stream>" });
  }
  return { state: d.encodeState(state as unknown as JsonObject) };
}

function replayRequest(message: JsonObject, dialect: string, ask?: AskModel): JsonObject {
  const c = message["case"];
  const spec = isObj(c) ? c : {};
  const path = need(spec, "path", "replay case");
  if (typeof path !== "string") throw new CaseError("invalid_request", "replay: case.path must be a string", { pointer: "/case/path" });
  // As the Python driver does: {"calls": {...}} or the calls mapping itself, used as given (a
  // malformed answer stops the turn when it is needed; the runner checks --supply up front).
  let supply: JsonObject | null = null;
  const given = spec["supply"];
  if (isObj(given)) {
    const calls = Object.hasOwn(given, "calls") ? given["calls"] : given;
    if (!isObj(calls)) throw new CaseError("invalid_request", 'supply must be {"calls": {...}}', { pointer: "/case/supply/calls" });
    supply = calls;
  } else if (given !== undefined && given !== null) {
    throw new CaseError("invalid_request", 'supply must be {"calls": {...}}', { pointer: "/case/supply" });
  }
  let live;
  if (Object.hasOwn(message, "live")) {
    if (ask === undefined) throw new CaseError("invalid_request", "a live replay needs a client that answers model calls");
    live = liveTurnFromRequest(message["live"] as JsonObject, ask);
  }
  const options: ReplayOptions = { implementation: dialect, supply, known: lastFold };
  if (live !== undefined) options.live = live;
  // the user's own agent, by reference (spec/driver-protocol.md 2.5.2), loaded by prepareRequest
  if (isObj(message["agent"])) options.agent = loadedAgent(message["agent"] as unknown as AgentRef);
  const out = replayCase(path, options);
  const d = getDialect(dialect);
  const answer: JsonObject = {
    events: out.events.map((e) => d.encodeEvent(e as unknown as JsonObject)),
    stop: out.stop as unknown as JsonValue,
    requests: out.requests,
    consumed: out.consumed,
    provenance: out.provenance,
  };
  if (out.agent !== undefined) answer["agent"] = out.agent;
  return answer;
}

function writeCaseRequest(message: JsonObject): JsonObject {
  const thread = need(message, "thread", "write_case");
  if (!isObj(thread) || !Array.isArray(thread["log"])) {
    throw new CaseError("invalid_request", "write_case: thread must be {log: [events], ...}", { pointer: "/thread" });
  }
  const blobs = decodeArtifacts(thread["artifacts"]); // before the log: bytes match names
  let events = checkedLog(thread["log"], dialectName(thread["dialect"], "threads-py"));
  const expect = checkExpectation(message["expect"] ?? {});
  const effects = message["external_effects"];
  if (effects !== "stub" && effects !== "forbid") throw new CaseError("invalid_request", "external_effects must be 'stub' or 'forbid'");
  const name = checkCaseName(need(message, "name", "write_case"));
  const at = need(message, "at", "write_case");
  if (typeof at !== "string") throw new CaseError("invalid_request", "at must be an event_id", { pointer: "/at" });
  const portable = thread["portable"];
  const secrets = checkSecretsMode(message["secrets"] ?? "refuse");
  let store = new ArtifactStore(blobs);
  const sandboxDir = message["sandbox_dir"]; // a string: the request schema says so
  if (typeof sandboxDir === "string") store = supplySandboxBytes(events, at, store, sandboxDir); // before the redaction, as saveCase does
  if (secrets === "redact") ({ events, store } = redactEvents(events, store));
  const { files } = buildCaseFiles({
    events,
    name,
    expect,
    at,
    externalEffects: effects as ExternalEffects,
    portable: portable === undefined ? true : Boolean(portable),
    store,
    dialects: DEFAULT_DIALECTS,
  });
  checkCasePaths(files); // the writer's checks (case-format.md 6.6): one safe writer
  checkCaseFiles(files, secrets);
  const out: JsonObject = {};
  for (const k of [...files.keys()].sort()) out[k] = Buffer.from(files.get(k) as Uint8Array).toString("base64");
  return { files: out };
}

/**
 * Answer one protocol request (the body of an `ok` answer, without id and ok). Throws
 * `CaseError` for a failed request.
 */
export const REQUEST_COMMANDS = ["hello", "reduce", "match", "canonicalize", "replay", "write_case", ...LIBRARY_COMMANDS, "shutdown"];

/**
 * Check a request against `schemas/driver/<cmd>.request.schema.json` (a request made in
 * process may leave out `id`): `invalid_request` with the pointer of the first problem.
 */
export function checkRequest(message: JsonObject): void {
  const cmd = message["cmd"];
  if (typeof cmd !== "string" || !REQUEST_COMMANDS.includes(cmd)) {
    throw new CaseError("invalid_request", `unknown command ${quote(cmd ?? null)}`, { pointer: Object.hasOwn(message, "cmd") ? "/cmd" : "" });
  }
  const body = Object.hasOwn(message, "id") ? message : { id: 0, ...message };
  const first = schemaProblems(body, `driver/${cmd}.request.schema.json`)[0];
  if (first !== undefined) {
    throw new CaseError("invalid_request", `${cmd} request breaks driver/${cmd}.request.schema.json: ${first.message}`, { pointer: first.pointer });
  }
}

export function handleRequest(message: JsonObject, dialect: string = DIALECT, ask?: AskModel): JsonObject {
  checkRequest(message);
  const cmd = message["cmd"];
  switch (cmd) {
    case "hello":
      return {
        protocol: PROTOCOL,
        implementation: { name: "threads-ts", language: "typescript", version: version(), dialect, homepage: "https://threads-cases.dev" },
        capabilities: CAPABILITIES,
      };
    case "reduce":
      return reduceRequest(message, dialect);
    case "match": {
      const matcher = writable(need(message, "matcher", "match"), "/matcher");
      const event = writable(need(message, "event", "match"), "/event");
      if (!isObj(event)) throw new CaseError("invalid_request", "match: event must be an object", { pointer: "/event" });
      // pointers into the request (driver-protocol.md 3.2b): a matcher's refusal under /matcher
      let found;
      try {
        found = differences(matcher, event);
      } catch (err) {
        throw under("/matcher", err);
      }
      // the differences decide and explain (spec/matchers.md 7): none exactly when it matches
      const diffs = found.map((d) => ({ ...d }) as unknown as JsonObject);
      return { matched: diffs.length === 0, differences: diffs };
    }
    case "canonicalize": {
      let value: JsonValue;
      if (Object.hasOwn(message, "text")) {
        const text = message["text"];
        if (typeof text !== "string") throw new CaseError("invalid_request", "canonicalize: text must be a string", { pointer: "/text" });
        value = parse(new TextEncoder().encode(text), { code: "json_invalid" });
      } else if (Object.hasOwn(message, "text_base64")) {
        const b64 = message["text_base64"];
        if (typeof b64 !== "string") throw new CaseError("invalid_request", "canonicalize: text_base64 must be a string", { pointer: "/text_base64" });
        value = parse(decodeBase64(b64, "/text_base64"), { code: "json_invalid" });
      } else if (Object.hasOwn(message, "value")) {
        value = message["value"] as JsonValue;
      } else {
        throw new CaseError("invalid_request", "canonicalize needs value, text or text_base64", { pointer: "" });
      }
      return { text: canonicalLine(value), document: canonicalDocument(value) };
    }
    case "replay":
      return replayRequest(message, dialect, ask);
    case "write_case":
      return writeCaseRequest(message);
    default:
      if (typeof cmd === "string" && Object.hasOwn(LIBRARY_HANDLERS, cmd)) return (LIBRARY_HANDLERS[cmd] as (m: JsonObject) => JsonObject)(message);
      throw new CaseError("invalid_request", `unknown command ${quote(cmd ?? null)}`);
  }
}

/** `file:line: pointer: message`, as Python's `str(CaseError)`. */
function describe(err: CaseError): string {
  const where = err.where();
  return where ? `${where}: ${err.message}` : err.message;
}

/**
 * Answer one request line. Returns the answer object, or null for `shutdown` (exit, no answer).
 */
export function answerLine(line: Uint8Array, dialect: string = DIALECT, ask?: (id: JsonValue) => AskModel): JsonObject | null {
  let id: JsonValue = null;
  try {
    const message = parse(line, { code: "protocol_error" });
    if (!isObj(message)) throw new CaseError("protocol_error", "a request must be a JSON object");
    id = message["id"] ?? null;
    if (message["cmd"] === "shutdown") return null;
    // a driver answers only requests it can pair with their answer (spec/driver-protocol.md 1.2)
    if (!Object.hasOwn(message, "id")) throw new CaseError("invalid_request", "a request needs an id", { pointer: "" });
    const body = handleRequest(message, dialect, ask === undefined ? undefined : ask(id));
    return { id, ok: true, ...body };
  } catch (err) {
    if (err instanceof CaseError) {
      const error: JsonObject = { code: err.code, message: describe(err) };
      if (err.pointer !== undefined) error["pointer"] = err.pointer;
      if (err.hint) error["hint"] = err.hint; // what the user does about it (driver-protocol.md 1.3)
      return { id, ok: false, error };
    }
    const e = err instanceof Error ? err : new Error(String(err));
    process.stderr.write(`threads-ts driver: internal error: ${e.stack ?? e.message}\n`);
    // one line for that case only: the suite goes on (spec/reports.md 5.3)
    const first = (e.message.split("\n")[0] ?? "").slice(0, 300);
    return { id, ok: false, error: { code: "internal_error", message: first ? `${e.name}: ${first}` : e.name } };
  }
}

/** Requests this long are never a `replay` naming an agent (a replay's supply is at most 64 KiB): not read twice. */
const PREPARE_MAX_BYTES = 1 << 20;

/**
 * Load what a request line needs before {@link answerLine} answers it: the agent a `replay`
 * names (spec/driver-protocol.md 2.5.2), imported once per reference. Never throws: a failure
 * is kept and answered with the request (`agent_unavailable`).
 */
export async function prepareLine(line: Uint8Array): Promise<void> {
  if (line.length > PREPARE_MAX_BYTES) return;
  let message: JsonValue;
  try {
    message = parse(line, { code: "protocol_error" });
  } catch {
    return; // answerLine refuses it
  }
  if (!isObj(message) || message["cmd"] !== "replay" || !isObj(message["agent"])) return;
  const agent = message["agent"];
  const appDir = agent["app_dir"];
  if (typeof agent["ref"] !== "string" || (appDir !== undefined && !(Array.isArray(appDir) && appDir.every((d) => typeof d === "string")))) return;
  try {
    await loadAgent(agent as unknown as AgentRef);
  } catch {
    // kept by loadAgent and thrown again when the request is answered
  }
}

/** Serve requests on stdin/stdout until `shutdown` or the end of input. */
export function serve(input: NodeJS.ReadableStream = process.stdin, output: NodeJS.WritableStream = process.stdout): void {
  const dialect = process.env["THREADS_CASES_DIALECT"] || DIALECT;
  let pending: Buffer[] = [];
  let done = false;
  const write = (answer: JsonObject): void => writeAnswer(output, answer);
  const finish = (): void => {
    if (done) return;
    done = true;
    input.removeAllListeners("data");
    input.pause();
    output.write("", () => process.exit(0));
  };
  const readLine = (): Buffer => readLineSync((rest) => pending.push(rest));
  const ask = (id: JsonValue): AskModel => modelAsker(id, write, readLine);
  // one request at a time, in order: a replay naming an agent first awaits its import
  let queue: Promise<void> = Promise.resolve();
  const handle = (line: Buffer): void => {
    queue = queue.then(async () => {
      if (done) return;
      await prepareLine(line);
      const answer = answerLine(line, dialect, ask);
      if (answer === null) finish();
      else write(answer);
    });
  };
  input.on("data", (chunk: Buffer | string) => {
    let buf = typeof chunk === "string" ? Buffer.from(chunk, "utf8") : chunk;
    for (let nl = buf.indexOf(0x0a); nl !== -1 && !done; nl = buf.indexOf(0x0a)) {
      pending.push(buf.subarray(0, nl));
      const line = Buffer.concat(pending);
      pending = [];
      buf = buf.subarray(nl + 1);
      handle(line);
    }
    if (!done && buf.length > 0) pending.push(buf);
  });
  input.on("end", () => {
    if (!done && pending.length > 0) {
      const line = Buffer.concat(pending);
      pending = [];
      handle(line);
    }
    queue = queue.then(finish);
  });
  process.on("uncaughtException", (err) => {
    process.stderr.write(`threads-ts driver: uncaught: ${err.stack ?? String(err)}\n`);
  });
}

/** Write one answer line (in pieces when long); an answer that cannot be written canonically becomes an internal_error answer. */
function writeAnswer(output: NodeJS.WritableStream, answer: JsonObject): void {
  try {
    // in pieces past 8 Mi characters (a reduce of a 268 MB log): one string and its copies
    // took 1.4 GB; the answer is checked whole before its first piece goes out
    emitCanonicalLine(answer, (text) => output.write(text));
  } catch (err) {
    const message = err instanceof Error ? err.message : String(err);
    // the request's id, never null: the client must be able to pair the failure with its request
    const id = typeof answer["id"] === "number" ? answer["id"] : null;
    output.write(canonicalLine({ id, ok: false, error: { code: "internal_error", message: `cannot write the answer: ${message}` } }));
  }
  output.write("\n");
}

/**
 * A live replay asks its client for each model call (spec/driver-protocol.md 2.5.1): the
 * model_call line goes out and the model_answer line is read synchronously from stdin,
 * while the event loop (and so the 'data' listener) waits. Bytes after that line go to `keep`.
 */
function readLineSync(keep: (rest: Buffer) => void): Buffer {
  const chunks: Buffer[] = [];
  const buf = Buffer.alloc(65536);
  for (;;) {
    let n: number;
    try {
      n = readSync(0, buf, 0, buf.length, null);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === "EAGAIN") {
        Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 2);
        continue;
      }
      throw err;
    }
    if (n === 0) throw new CaseError("protocol_error", "the input ended while a model call was pending");
    const chunk = Buffer.from(buf.subarray(0, n));
    const nl = chunk.indexOf(0x0a);
    if (nl === -1) {
      chunks.push(chunk);
      continue;
    }
    chunks.push(chunk.subarray(0, nl));
    if (nl + 1 < chunk.length) keep(chunk.subarray(nl + 1));
    return Buffer.concat(chunks);
  }
}

/** The model asker of request `id`: writes a model_call, reads and checks its model_answer. */
function modelAsker(id: JsonValue, write: (answer: JsonObject) => void, readLine: () => Buffer): AskModel {
  return (index, request, sha256) => {
    write({ id, model_call: { index, request, request_sha256: sha256 } });
    const answer = parse(readLine(), { code: "protocol_error" });
    if (!isObj(answer)) throw new CaseError("protocol_error", "a model_answer must be a JSON object");
    const first = schemaProblems(answer, "driver/model_answer.request.schema.json")[0];
    if (first !== undefined) throw new CaseError("protocol_error", `model_answer: ${first.message}`, { pointer: first.pointer });
    if (answer["id"] !== id || answer["index"] !== index) {
      throw new CaseError("protocol_error", `model_answer for ${String(answer["index"])} while ${index} was asked`);
    }
    const out: JsonObject = {};
    if (Object.hasOwn(answer, "reply")) out["reply"] = answer["reply"] as JsonValue;
    if (Object.hasOwn(answer, "stop")) out["stop"] = answer["stop"] as JsonValue;
    return out;
  };
}

function isMain(): boolean {
  const entry = process.argv[1];
  if (entry === undefined) return false;
  try {
    return realpathSync(entry) === realpathSync(fileURLToPath(import.meta.url));
  } catch {
    return false;
  }
}

if (isMain()) serve();
