/**
 * The runtime: recording events and running one turn (spec/replay.md).
 *
 * {@link Recorder} appends canonical events to a log and keeps the reduced state current.
 * {@link runTurn} is the turn loop shared by a live thread and a replay: append
 * `user_message` and `turn_started`; then ask the model, record its reply, run each tool
 * call, until a reply's stop_reason is not `tool_use` (`turn_completed`) or the step limit
 * is reached. A call the recording cannot answer stops the turn with a reason code and a
 * `stop_key` and records `turn_failed` with that code.
 */

import { createRequire, syncBuiltinESMExports } from "node:module";

// The CommonJS module objects: patching them (and syncing the ESM views) reaches every caller.
const require = createRequire(import.meta.url);
const http = require("node:http") as typeof import("node:http");
const https = require("node:https") as typeof import("node:https");
const net = require("node:net") as typeof import("node:net");
const dgram = require("node:dgram") as typeof import("node:dgram");
const dns = require("node:dns") as typeof import("node:dns");
const childProcess = require("node:child_process") as typeof import("node:child_process");

import { formatTs, parseTs } from "../core/timestamps.js";
export { formatTs, parseTs };
import { canonicalLine } from "../core/canonical.js";
import { AgentSpec, BadInput, ToolResult, asResult, type SandboxHandler, type ToolContext } from "./agent.js";
import { CaseError } from "../core/errors.js";
import { StopError, type Model, type Reply } from "./model.js";
import { RequestHasher, buildRequest } from "./request.js";

export { buildRequest };
import { quote } from "../core/texts.js";
import { Reducer, type Envelope, type State } from "../core/reducer.js";
import { FileMissing, checkPath, sha256Hex, type SandboxProvider } from "./sandbox.js";
import type { JsonObject, JsonValue } from "../core/strictjson.js";

export const STEP_LIMIT = 64;

/** actor_kind of each event type. */
export const ACTOR: Readonly<Record<string, string>> = {
  thread_started: "system",
  user_message: "user",
  turn_started: "system",
  model_requested: "system",
  model_responded: "model",
  tool_called: "model",
  tool_result: "tool",
  sandbox_read: "sandbox",
  sandbox_wrote: "sandbox",
  artifact_added: "sandbox",
  snapshot_taken: "system",
  restored: "system",
  forked: "system",
  turn_completed: "system",
  turn_failed: "system",
};

/** The recorded clock: the wall clock (never going backwards), or a deterministic one. */
export class Clock {
  private next: number | null;
  protected last = 0;

  constructor(
    startMs: number | null = null,
    private readonly stepMs = 1,
  ) {
    this.next = startMs;
  }

  nowMs(): number {
    if (this.next === null) {
      const now = Math.max(Date.now(), this.last + 1);
      this.last = now;
      return now;
    }
    const now = this.next;
    this.next += this.stepMs;
    return now;
  }
}

/** Bytes by sha256 hex: the artifacts a log refers to (`sha256:<hex>`). */
export class ArtifactStore {
  readonly blobs: Map<string, Uint8Array>;

  constructor(blobs: Iterable<[string, Uint8Array]> | Record<string, Uint8Array> = []) {
    this.blobs = new Map(Symbol.iterator in blobs ? (blobs as Iterable<[string, Uint8Array]>) : Object.entries(blobs));
  }

  put(data: Uint8Array): string {
    const h = sha256Hex(data);
    if (!this.blobs.has(h)) this.blobs.set(h, Uint8Array.from(data));
    return h;
  }

  get(sha: string): Uint8Array | undefined {
    return this.blobs.get(sha.startsWith("sha256:") ? sha.slice(7) : sha);
  }
}

/** Appends canonical events to `events` and folds them into {@link state}. */
export class Recorder {
  constructor(
    readonly events: Envelope[],
    readonly reducer: Reducer,
    readonly threadId: string,
    readonly idFor: (seq: number) => string,
    readonly clock: Clock,
  ) {}

  /** `request_sha256` of the state's request, kept incrementally across turns. */
  readonly hasher = new RequestHasher();

  /** Called with each event just recorded (a replay's {@link Interruption} check). */
  afterAppend: ((ev: Envelope) => void) | null = null;

  get state(): State {
    return this.reducer.state;
  }

  /** Record one event; `unsafe_value` (recording nothing) when `data` cannot be written canonically. */
  append(type: string, data: JsonObject, options: { critical?: boolean; actor?: string } = {}): Envelope {
    canonicalLine(data);
    const st = this.reducer.state;
    const seq = st.last_seq === null ? 0 : st.last_seq + 1;
    const ev: Envelope = {
      event_id: this.idFor(seq),
      thread_id: this.threadId,
      seq,
      type,
      actor_kind: options.actor ?? ACTOR[type] ?? "system",
      epoch: type === "restored" ? st.epoch + 1 : st.epoch,
      branch_id: type === "forked" ? (data["branch_id"] as string) : st.branch_id,
      critical: options.critical ?? false,
      ts: formatTs(this.clock.nowMs()),
      data,
    };
    this.reducer.apply(ev);
    this.events.push(ev);
    if (this.afterAppend !== null) this.afterAppend(ev);
    return ev;
  }
}

/** Thrown by {@link Interruption.check} at the recorded interruption point. */
class Interrupted extends Error {}

/**
 * The recorded end of an interrupted turn (model.json `interruption`, spec/replay.md 3.9): the turn ends with
 * `turn_failed` `{turn_id, error}` right after the `index`-th (from 0) event of type `after` of the turn.
 */
export class Interruption {
  private seen = 0;
  constructor(
    readonly after: string,
    readonly index: number,
    readonly error: { code: string; message: string },
  ) {}

  static fromJson(doc: unknown): Interruption | null {
    if (doc === undefined || doc === null) return null;
    const d = doc as { after: string; index: number; error: { code: string; message: string } };
    return new Interruption(d.after, d.index, { code: d.error.code, message: d.error.message });
  }

  check(ev: Envelope): void {
    if (ev.type === this.after) {
      this.seen += 1;
      if (this.seen === this.index + 1) throw new Interrupted();
    }
  }
}

// ------------------------------------------------------------------------------ egress

/** A network attempt during a replay: `egress_blocked`, stop_key `egress`. */
export function egressBlocked(target: string, what = "network access to"): StopError {
  return new StopError(
    "egress_blocked",
    `${what} ${target} was blocked during a replay`,
    "egress",
    "a replay never reaches the outside world; record the call as a stub instead",
  );
}

/**
 * The neutral text of a network target (spec/replay.md 9.1): the canonical JSON string of
 * `<host>:<port>` (`[<host>]:<port>` when the host holds `:`), or of `<unknown>`.
 */
export function egressTarget(host: unknown, port: unknown): string {
  const p = typeof port === "string" && /^[0-9]+$/.test(port) ? Number(port) : port;
  if (typeof host !== "string" || typeof p !== "number" || !Number.isInteger(p)) return quote("<unknown>");
  return quote(host.includes(":") ? `[${host}]:${p}` : `${host}:${p}`);
}

const DEFAULT_PORTS: Readonly<Record<string, number>> = { "http:": 80, "https:": 443, "ws:": 80, "wss:": 443 };

/** The target of a URL: its host name and its port, or the scheme's default port. */
function urlTarget(text: string): string {
  try {
    const url = new URL(text);
    const host = url.hostname.startsWith("[") ? url.hostname.slice(1, -1) : url.hostname;
    return egressTarget(host, url.port === "" ? DEFAULT_PORTS[url.protocol] : url.port);
  } catch {
    return quote("<unknown>");
  }
}

function describeTarget(args: unknown[]): { target: string; local: boolean } {
  let first = args[0];
  if (Array.isArray(first)) first = first[0]; // net.connect passes normalized [options, cb]
  if (first !== null && typeof first === "object") {
    const o = first as { path?: unknown; host?: unknown; port?: unknown };
    if (typeof o.path === "string") return { target: quote(o.path), local: true };
    return { target: egressTarget(o.host ?? "localhost", o.port), local: false };
  }
  if (typeof first === "string" && !/^\d+$/.test(first)) return { target: quote(first), local: true };
  return { target: egressTarget(args[1] ?? "localhost", first), local: false };
}

let egressDepth = 0;

/**
 * Block network access until `restore()` is called: `net.Socket.prototype.connect` (what
 * every TCP and TLS client ends in), `http.request`/`get`, `https.request`/`get` and
 * `globalThis.fetch` throw an `egress_blocked` error and record it in `attempts`, so a tool
 * that swallows the error still fails the replay. Unix-socket connects are allowed.
 */
/** A child process as `json(argv)`, or `json(command)` for a shell command string. */
function childTarget(args: unknown[]): string {
  const [file, rest] = args;
  if (typeof file !== "string") return quote("<unknown>");
  if (Array.isArray(rest)) return rest.every((x) => typeof x === "string") ? quote([file, ...rest]) : quote("<unknown>");
  return quote([file]);
}

export function blockEgress(): { attempts: StopError[]; restore: () => void } {
  const attempts: StopError[] = [];
  const refuse = (target: string, what?: string): StopError => {
    const err = egressBlocked(target, what);
    attempts.push(err);
    return err;
  };
  // name lookups and child processes: refused whatever they ask for
  const refusedModules: [Record<string, unknown>, string[], string, (args: unknown[]) => string][] = [
    [dns as unknown as Record<string, unknown>, ["lookup", "lookupService", "resolve", "resolve4", "resolve6", "resolveAny"], "the name lookup of", (a) => (typeof a[0] === "string" ? quote(a[0]) : quote("<unknown>"))],
    [dns.promises as unknown as Record<string, unknown>, ["lookup", "resolve", "resolve4", "resolve6"], "the name lookup of", (a) => (typeof a[0] === "string" ? quote(a[0]) : quote("<unknown>"))],
    [
      childProcess as unknown as Record<string, unknown>,
      ["spawn", "spawnSync", "execFile", "execFileSync", "fork"],
      "the child process",
      (a) => childTarget(a),
    ],
    // a shell command string
    [childProcess as unknown as Record<string, unknown>, ["exec", "execSync"], "the child process", (a) => quote(typeof a[0] === "string" ? a[0] : "<unknown>")],
  ];
  const savedModules: [Record<string, unknown>, string, unknown][] = [];
  for (const [mod, names, what, target] of refusedModules) {
    for (const name of names) {
      if (typeof mod[name] !== "function") continue;
      savedModules.push([mod, name, mod[name]]);
      mod[name] = (...args: unknown[]): never => {
        throw refuse(target(args), what);
      };
    }
  }
  const proto = net.Socket.prototype as unknown as { connect: (...args: unknown[]) => unknown };
  const udp = dgram.Socket.prototype as unknown as { send: (...args: unknown[]) => unknown; connect: (...args: unknown[]) => unknown };
  const saved = {
    udpSend: udp.send,
    udpConnect: udp.connect,
    connect: proto.connect,
    httpRequest: http.request,
    httpGet: http.get,
    httpsRequest: https.request,
    httpsGet: https.get,
    fetch: globalThis.fetch,
  };
  proto.connect = function connect(this: unknown, ...args: unknown[]): unknown {
    const { target, local } = describeTarget(args);
    if (local) return saved.connect.apply(this, args);
    throw refuse(target);
  };
  // a datagram needs no connect(): UDP to any address is egress too
  udp.connect = function connect(this: unknown, ...args: unknown[]): unknown {
    throw refuse(egressTarget(typeof args[1] === "string" ? args[1] : "localhost", args[0]));
  };
  udp.send = function send(this: unknown, ...args: unknown[]): unknown {
    // send(msg[, offset, length][, port][, address][, callback]): an address is a port number argument
    const rest = args.slice(1).filter((a) => typeof a !== "function");
    const numbers = rest.filter((a) => typeof a === "number") as number[];
    const port = rest.length === 1 || rest.length === 2 ? numbers[0] : rest.length >= 3 ? numbers[2] : undefined;
    if (port === undefined) return saved.udpSend.apply(this, args); // a connected socket
    const host = rest.find((a) => typeof a === "string") ?? "localhost";
    throw refuse(egressTarget(host, port));
  };
  const refuseRequest = (...args: unknown[]): never => {
    const first = args[0];
    const target =
      typeof first === "string" || first instanceof URL
        ? urlTarget(String(first))
        : describeTarget([{ host: (first as { hostname?: unknown; host?: unknown } | undefined)?.hostname ?? (first as { host?: unknown } | undefined)?.host, port: (first as { port?: unknown } | undefined)?.port }]).target;
    throw refuse(target);
  };
  const mutable = (m: object): Record<string, unknown> => m as Record<string, unknown>;
  mutable(http)["request"] = refuseRequest;
  mutable(http)["get"] = refuseRequest;
  mutable(https)["request"] = refuseRequest;
  mutable(https)["get"] = refuseRequest;
  globalThis.fetch = ((input: unknown): never => {
    const url = typeof input === "string" || input instanceof URL ? String(input) : String((input as { url?: unknown })?.url ?? input);
    throw refuse(urlTarget(url));
  }) as typeof fetch;
  syncBuiltinESMExports();
  egressDepth++;
  let restored = false;
  return {
    attempts,
    restore: () => {
      if (restored) return;
      restored = true;
      egressDepth--;
      proto.connect = saved.connect;
      udp.send = saved.udpSend;
      udp.connect = saved.udpConnect;
      mutable(http)["request"] = saved.httpRequest;
      mutable(http)["get"] = saved.httpGet;
      mutable(https)["request"] = saved.httpsRequest;
      mutable(https)["get"] = saved.httpsGet;
      globalThis.fetch = saved.fetch;
      for (const [mod, name, original] of savedModules) mod[name] = original;
      syncBuiltinESMExports();
    },
  };
}

/** Whether a {@link blockEgress} block is active. */
export function egressBlockedNow(): boolean {
  return egressDepth > 0;
}

// ------------------------------------------------------------------------------ the sandbox context

const TEXT_SUFFIXES = [".txt", ".md", ".py", ".json", ".csv"];

/** The {@link ToolContext} of a turn: sandbox operations that record events. */
export class SandboxContext implements ToolContext {
  constructor(
    private readonly rec: Recorder,
    private readonly sandbox: SandboxProvider,
    private readonly store: ArtifactStore,
  ) {}

  private artifact(data: Uint8Array, mediaType: string): string {
    const h = this.store.put(data);
    const id = "sha256:" + h;
    if (!Object.hasOwn(this.rec.state.artifacts, id)) {
      this.rec.append("artifact_added", { artifact_id: id, media_type: mediaType, size: data.length });
    }
    return h;
  }

  private media(path: string): string {
    return TEXT_SUFFIXES.some((s) => path.endsWith(s)) ? "text/plain" : "application/octet-stream";
  }

  read(path: string): Uint8Array {
    checkPath(path);
    const data = this.sandbox.read(path);
    const h = this.artifact(data, this.media(path));
    this.rec.append("sandbox_read", { path, sha256: h, size: data.length, artifact: "sha256:" + h });
    return data;
  }

  write(path: string, data: Uint8Array): void {
    checkPath(path);
    this.sandbox.write(path, data);
    const h = this.artifact(data, this.media(path));
    this.rec.append("sandbox_wrote", { path, sha256: h, size: data.length, artifact: "sha256:" + h }, { critical: true });
  }

  delete(path: string): void {
    checkPath(path);
    if (!Object.hasOwn(this.rec.state.sandbox.files, path)) this.read(path); // the log must see a file before it goes
    this.sandbox.delete(path);
    this.rec.append("sandbox_wrote", { path, sha256: null, size: 0, artifact: null }, { critical: true });
  }

  list(prefix = ""): string[] {
    const paths = this.sandbox.list(prefix);
    for (const p of paths) {
      if (!Object.hasOwn(this.rec.state.sandbox.files, p)) this.read(p); // a listing observes the file
    }
    return paths;
  }
}

/** How a turn ended; `stop` is set when a call the recording could not answer stopped it. */
export interface TurnOutcome {
  turnId: string;
  status: "completed" | "failed" | "stopped";
  events: Envelope[];
  stop: { code: string; stop_key: string; message: string } | null;
}

/** Answers an external tool call; throws a {@link StopError} (missing_stub) to stop the turn. */
export type ExternalCaller = (name: string, input: JsonObject) => ToolResult;

export interface RunTurnOptions {
  external: ExternalCaller;
  stepLimit?: number;
  /** The attempts list of {@link blockEgress}: an attempt there stops the turn after the tool. */
  egress?: readonly CaseError[];
  /** The recorded interruption: the turn ends there with the recorded turn_failed (spec/replay.md 3.9). */
  interruption?: Interruption | null;
}

/** Run one turn (spec/replay.md, section 3) and return how it ended. */
export function runTurn(
  rec: Recorder,
  agent: AgentSpec,
  sandbox: SandboxProvider,
  store: ArtifactStore,
  model: Model,
  content: JsonValue,
  options: RunTurnOptions,
): TurnOutcome {
  const stepLimit = options.stepLimit ?? STEP_LIMIT;
  const start = rec.events.length;
  rec.append("user_message", { content });
  const turnId = `turn-${rec.events.length}`;
  rec.append("turn_started", { turn_id: turnId });
  const ctx = new SandboxContext(rec, sandbox, store);
  const usage = { input_tokens: 0, output_tokens: 0 };

  const stop = (err: CaseError): TurnOutcome => {
    rec.append("turn_failed", { turn_id: turnId, error: { code: err.code, message: err.message } });
    const key = err instanceof StopError ? err.stopKey : err.code;
    return { turnId, status: "stopped", events: rec.events.slice(start), stop: { code: err.code, stop_key: key, message: err.message } };
  };

  const steps = (): TurnOutcome => {
    for (let index = 0; index < stepLimit; index++) {
      const { request, sha256 } = rec.hasher.request(rec.state);
      rec.append("model_requested", { turn_id: turnId, model: request["model"] as JsonValue, request_sha256: sha256 });
      let reply: Reply;
      try {
        reply = model.respond(request, index);
      } catch (err) {
        if (err instanceof CaseError) return stop(err);
        throw err;
      }
      try {
        rec.append("model_responded", {
          turn_id: turnId,
          message: reply.message,
          stop_reason: reply.stop_reason,
          usage: reply.usage as unknown as JsonObject,
        });
      } catch (err) {
        return stop(unwritable(err, `model reply ${index}`, `model:${index}`));
      }
      usage.input_tokens += reply.usage.input_tokens;
      usage.output_tokens += reply.usage.output_tokens;
      for (const block of reply.message.content) {
        if (block["type"] !== "tool_use") continue;
        const name = block["name"] as string;
        const input = block["input"] as JsonObject;
        const tool = agent.tool(name);
        const kind = tool?.kind ?? "external";
        const effect = tool?.effect ?? "pure";
        rec.append(
          "tool_called",
          { turn_id: turnId, tool_use_id: block["id"] as string, name, input, kind, effect },
          { critical: effect === "write" },
        );
        let result: ToolResult;
        try {
          if (tool === undefined) {
            result = new ToolResult(`unknown tool ${quote(name)}`, true);
          } else if (tool.kind === "sandbox") {
            result = runSandboxTool(tool.name, tool.handler as SandboxHandler | undefined, ctx, input);
          } else {
            result = options.external(tool.name, input);
          }
        } catch (err) {
          if (err instanceof CaseError) return stop(err);
          throw err;
        }
        const attempt = options.egress?.[0];
        if (attempt !== undefined) return stop(attempt); // a tool tried the network, even if it swallowed the error
        try {
          rec.append(
            "tool_result",
            { turn_id: turnId, tool_use_id: block["id"] as string, name, content: result.content, is_error: result.isError },
            { critical: kind === "external" },
          );
        } catch (err) {
          return stop(unwritable(err, `the result of tool ${quote(name)}`, `tool:${name}`));
        }
      }
      if (reply.stop_reason !== "tool_use") {
        rec.append("turn_completed", { turn_id: turnId, stop_reason: reply.stop_reason, usage: { ...usage } });
        return { turnId, status: "completed", events: rec.events.slice(start), stop: null };
      }
    }
    return stop(new CaseError("step_limit", `the turn made ${stepLimit} model calls without finishing`));
  };

  const interruption = options.interruption ?? null;
  if (interruption === null) return steps();
  rec.afterAppend = (ev) => interruption.check(ev);
  try {
    if (interruption.after === "turn_started" && interruption.index === 0) throw new Interrupted();
    return steps();
  } catch (err) {
    if (!(err instanceof Interrupted)) throw err;
    rec.afterAppend = null;
    rec.append("turn_failed", { turn_id: turnId, error: { code: interruption.error.code, message: interruption.error.message } });
    return { turnId, status: "failed", events: rec.events.slice(start), stop: null };
  } finally {
    rec.afterAppend = null;
  }
}

/** A value that cannot enter the log stops the turn: `unsafe_value` at `stopKey` (other errors go on). */
function unwritable(err: unknown, what: string, stopKey: string): StopError {
  if (!(err instanceof CaseError) || err.code !== "unsafe_value") throw err;
  return new StopError("unsafe_value", `${what} cannot be recorded: ${err.pointer || "/"}: ${err.message}`, stopKey);
}

function runSandboxTool(name: string, handler: SandboxHandler | undefined, ctx: ToolContext, input: JsonObject): ToolResult {
  if (handler === undefined) return new ToolResult(`no handler for sandbox tool ${quote(name)}`, true);
  try {
    return asResult(handler(ctx, input));
  } catch (err) {
    if (err instanceof FileMissing) return new ToolResult(`no such file: ${err.path}`, true);
    if (err instanceof CaseError) {
      if (err.code === "egress_blocked" || err.code === "sandbox_content_missing") throw err;
      return new ToolResult(err.message, true);
    }
    if (err instanceof BadInput) return new ToolResult(err.message, true);
    throw err;
  }
}
