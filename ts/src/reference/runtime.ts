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

import { basename } from "node:path";
import { formatTs, parseTs } from "../core/timestamps.js";
export { formatTs, parseTs };
import { canonicalLine } from "../core/canonical.js";
import { AgentSpec, BadInput, ToolResult, asResult, type SandboxHandler, type ToolContext } from "./agent.js";
import { MAX_EVENT_DEPTH, depthMessage, maybeTooDeep, tooDeep } from "../core/depth.js";
import { CaseError, pointerJoin } from "../core/errors.js";
import { StopError, type Model, type Reply } from "./model.js";
import { RequestHasher, buildRequest } from "./request.js";

export { buildRequest };
import { quote } from "../core/texts.js";
export { blockEgress, egressBlocked, egressBlockedNow, egressTarget } from "./egress.js";
import { Reducer, type Envelope, type State } from "../core/reducer.js";
import { FileMissing, checkPath, sha256Hex, type SandboxProvider } from "./sandbox.js";
import type { JsonObject, JsonValue } from "../core/strictjson.js";

export const STEP_LIMIT = 64;
/** The stop reasons after which a turn goes on with the next model call (spec/replay.md 3.2, 8). */
const GOES_ON: ReadonlySet<string> = new Set(["tool_use", "pause_turn"]);

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

/** What a {@link Recorder} appends to: an array, or a fork's shared log. */
export interface AppendLog {
  push(event: Envelope): void;
  readonly length: number;
  slice(start?: number, end?: number): Envelope[];
}

/** Appends canonical events to `events` and folds them into {@link state}. */
export class Recorder {
  constructor(
    readonly events: AppendLog,
    readonly reducer: Reducer,
    readonly threadId: string,
    readonly idFor: (seq: number) => string,
    readonly clock: Clock,
  ) {}

  /** `request_sha256` of the state's request, kept incrementally across turns. */
  hasher = new RequestHasher();

  /** Called with each event just recorded (a replay's {@link Interruption} check). */
  afterAppend: ((ev: Envelope) => void) | null = null;

  get state(): State {
    return this.reducer.state;
  }

  /** Record one event; `unsafe_value` (recording nothing) when `data` cannot be written canonically or its event would nest past 248 levels. */
  append(type: string, data: JsonObject, options: { critical?: boolean; actor?: string } = {}): Envelope {
    const text = canonicalLine(data);
    if (maybeTooDeep(text, MAX_EVENT_DEPTH - 1)) {
      const path = tooDeep(data, MAX_EVENT_DEPTH, 2); // data is level 2 of its event (thread-log.md 5.1a)
      if (path !== null) throw new CaseError("unsafe_value", depthMessage(), { pointer: pointerJoin(["data", ...path]) });
    }
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
  /** A replay: a sandbox tool without a handler throws {@link HandlerMissing} instead of giving an error result (spec/replay.md 8.4). */
  refuseMissingHandlers?: boolean;
}

/** A replay called a sandbox tool that has no handler (spec/replay.md 3.3, 8.4): the replay is refused with `handler_missing`. */
export class HandlerMissing extends CaseError {
  constructor(name: string) {
    super("handler_missing", `sandbox tool ${quote(name)} has no handler: a case holds a tool's definition, not its code`);
  }
}

/** Thrown inside a turn when a call stops it; `err` is the reason. */
class Stopped extends Error {
  constructor(readonly err: CaseError) {
    super(err.code);
  }
}

/** One running turn (spec/replay.md 3): what its steps share, one job per method (mirrors runtime.py `_Turn`). */
class Turn {
  readonly start: number;
  turnId = "";
  readonly usage = { input_tokens: 0, output_tokens: 0 };

  constructor(
    readonly rec: Recorder,
    readonly agent: AgentSpec,
    readonly ctx: SandboxContext,
    readonly model: Model,
    readonly external: ExternalCaller,
    readonly egress: readonly CaseError[] | undefined,
    readonly refuseMissing = false,
  ) {
    this.start = rec.events.length;
  }

  /** Record `user_message` and `turn_started`; the turn id follows the log length. */
  begin(content: JsonValue): void {
    this.rec.append("user_message", { content });
    this.turnId = `turn-${this.rec.events.length}`;
    this.rec.append("turn_started", { turn_id: this.turnId });
  }

  /** Record `turn_failed` with `err`'s code: the turn is stopped. */
  stop(err: CaseError): TurnOutcome {
    this.rec.append("turn_failed", { turn_id: this.turnId, error: { code: err.code, message: err.message } });
    const key = err instanceof StopError ? err.stopKey : err.code;
    const stop = { code: err.code, stop_key: key, message: err.message };
    return { turnId: this.turnId, status: "stopped", events: this.rec.events.slice(this.start), stop };
  }

  /** Ask the model and run its tool calls until a reply ends the turn. */
  steps(stepLimit: number): TurnOutcome {
    try {
      for (let index = 0; index < stepLimit; index++) {
        const reply = this.askModel(index);
        for (const block of reply.message.content) {
          if (block["type"] === "tool_use") this.runTool(block);
        }
        if (!GOES_ON.has(reply.stop_reason)) return this.complete(reply.stop_reason);
      }
    } catch (err) {
      if (err instanceof Stopped) return this.stop(err.err);
      throw err;
    }
    return this.stop(new CaseError("step_limit", `the turn made ${stepLimit} model calls without finishing`));
  }

  /** Record `model_requested`, ask the model, record `model_responded`. */
  askModel(index: number): Reply {
    const rec = this.rec;
    const { request, sha256 } = rec.hasher.request(rec.state);
    rec.append("model_requested", { turn_id: this.turnId, model: request["model"] as JsonValue, request_sha256: sha256 });
    let reply: Reply;
    try {
      reply = this.model.respond(request, index);
    } catch (err) {
      if (err instanceof CaseError) throw new Stopped(err);
      throw err;
    }
    try {
      rec.append("model_responded", {
        turn_id: this.turnId,
        message: reply.message,
        stop_reason: reply.stop_reason,
        usage: reply.usage as unknown as JsonObject,
      });
    } catch (err) {
      throw new Stopped(unwritable(err, `model reply ${index}`, `model:${index}`));
    }
    this.usage.input_tokens += reply.usage.input_tokens;
    this.usage.output_tokens += reply.usage.output_tokens;
    return reply;
  }

  /** Record `tool_called`, run the tool, record `tool_result` (spec/replay.md 3.3). */
  runTool(block: JsonObject): void {
    const name = block["name"] as string;
    const input = block["input"] as JsonObject;
    const tool = this.agent.tool(name);
    const kind = tool?.kind ?? "external";
    const effect = tool?.effect ?? "pure";
    this.rec.append(
      "tool_called",
      { turn_id: this.turnId, tool_use_id: block["id"] as string, name, input, kind, effect },
      { critical: effect === "write" },
    );
    let result: ToolResult;
    try {
      result = callTool(tool, name, input, this.ctx, this.external, this.refuseMissing);
    } catch (err) {
      // not a stop: the replay cannot run here, or the agent's own code broke (spec/replay.md 8.1, 8.4)
      if (err instanceof HandlerMissing || (err instanceof CaseError && err.code === "handler_failed")) throw err;
      if (err instanceof CaseError) throw new Stopped(err);
      throw err;
    }
    const attempt = this.egress?.[0];
    if (attempt !== undefined) throw new Stopped(attempt); // a tool tried the network, even if it swallowed the error
    try {
      this.rec.append(
        "tool_result",
        { turn_id: this.turnId, tool_use_id: block["id"] as string, name, content: result.content, is_error: result.isError },
        { critical: kind === "external" },
      );
    } catch (err) {
      throw new Stopped(unwritable(err, `the result of tool ${quote(name)}`, `tool:${name}`));
    }
  }

  /** Record `turn_completed` with the turn's summed usage. */
  complete(stopReason: string): TurnOutcome {
    this.rec.append("turn_completed", { turn_id: this.turnId, stop_reason: stopReason, usage: { ...this.usage } });
    return { turnId: this.turnId, status: "completed", events: this.rec.events.slice(this.start), stop: null };
  }
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
  const ctx = new SandboxContext(rec, sandbox, store);
  const turn = new Turn(rec, agent, ctx, model, options.external, options.egress, options.refuseMissingHandlers ?? false);
  turn.begin(content);
  const interruption = options.interruption ?? null;
  if (interruption === null) return turn.steps(stepLimit);
  rec.afterAppend = (ev) => interruption.check(ev);
  try {
    if (interruption.after === "turn_started" && interruption.index === 0) throw new Interrupted();
    return turn.steps(stepLimit);
  } catch (err) {
    if (!(err instanceof Interrupted)) throw err;
    rec.afterAppend = null;
    const error = { code: interruption.error.code, message: interruption.error.message };
    rec.append("turn_failed", { turn_id: turn.turnId, error });
    return { turnId: turn.turnId, status: "failed", events: rec.events.slice(turn.start), stop: null };
  } finally {
    rec.afterAppend = null;
  }
}

/** The result of one tool call (spec/replay.md 3.3); throws a CaseError to stop (mirrors runtime.py `_call_tool`). */
function callTool(
  tool: ReturnType<AgentSpec["tool"]>,
  name: string,
  input: JsonObject,
  ctx: ToolContext,
  external: ExternalCaller,
  refuseMissing: boolean,
): ToolResult {
  if (tool === undefined) return new ToolResult(`unknown tool ${quote(name)}`, true);
  if (tool.kind === "sandbox") {
    if (tool.handler === undefined && refuseMissing) throw new HandlerMissing(tool.name);
    return runSandboxTool(tool.name, tool.handler as SandboxHandler | undefined, ctx, input);
  }
  return external(tool.name, input);
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
    // a handler refusing its input (spec/replay.md 8.1): the error's own text never enters the log
    const reason = err instanceof TypeError ? "a value has the wrong type" : err instanceof RangeError ? "a value is not valid" : null;
    if (reason !== null) return new ToolResult(`bad input for ${name}: the handler refused it (${reason})`, true);
    throw handlerFailed(name, err);
  }
}

/**
 * `handler_failed` (spec/replay.md 8.1): a handler threw an error that is not an input
 * refusal, a bug in the agent's own code: the tool, the error's first line and the file and
 * line of the stack's first frame.
 */
function handlerFailed(name: string, err: unknown): CaseError {
  const error = err instanceof Error ? `${err.name}: ${(err.message.trim().split("\n")[0] ?? "").slice(0, 300)}` : `${String(err).slice(0, 300)}`;
  const frame = err instanceof Error ? /\(?(?:file:\/\/)?([^\s()]+):(\d+):\d+\)?\s*$/m.exec(err.stack?.split("\n").find((l) => l.trim().startsWith("at ")) ?? "") : null;
  const where = frame ? ` at ${basename(frame[1] as string)}:${frame[2] as string}` : "";
  return new CaseError("handler_failed", `the handler of sandbox tool ${quote(name)} raised ${error.replace(/: $/, "")}${where}`);
}
