/**
 * The thread handle: a log being recorded or opened, its state, forks, snapshots, turns and
 * saved cases (the TypeScript twin of the Python `Thread`).
 *
 *     const thread = Thread.create({ agent: new AgentSpec("notes", "model-x", "Be brief."),
 *                                    sandbox: new FakeSandbox({ "notes.txt": "hello" }) });
 *     const at = thread.events[0].event_id;
 *     thread.runTurn("Read notes.txt", new ScriptedModel([...replies]));
 *     const saved = thread.saveCase("reads-notes", { at, dir: "cases",
 *                                   expect: { must: [{ type: "turn_completed" }], expect: [] } });
 *     if (!saved.ok) console.error(saved.error.code);
 */

import { randomBytes } from "node:crypto";
import { existsSync, mkdirSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";

import { AgentSpec, ToolResult, type ExternalHandler, type SandboxHandler } from "./agent.js";
import { DEFAULT_DIALECTS } from "../case/case.js";
import { CANONICAL, type DialectLike } from "../core/dialects.js";
import { CaseError } from "../core/errors.js";
import { eventsView } from "../core/frozen.js";
import { MAX_CASE_BYTES, readRegular, replaceFile } from "../core/files.js";
import { checkEvents, encodeLog, readLog } from "../core/log.js";
import type { Model } from "./model.js";
import { quote } from "../core/texts.js";
import { Reducer, deepCopy, type Envelope, type State } from "../core/reducer.js";
import { ArtifactStore, Clock, Recorder, STEP_LIMIT, parseTs, runTurn, type TurnOutcome } from "./runtime.js";
import { IdIndex, SharedLog } from "./branching.js";
import { FakeSandbox, type SandboxProvider } from "./sandbox.js";
import { saveCase, type SaveResult } from "../case/save.js";
import type { JsonObject, JsonValue } from "../core/strictjson.js";

const UNSAFE = /[^A-Za-z0-9._-]/g;

/** A wall clock that never reads earlier than the last event of an opened log. */
class AfterClock extends Clock {
  constructor(lastMs: number) {
    super();
    this.last = lastMs;
  }
}

export interface SaveCaseRequest {
  expect?: unknown;
  at: string;
  dir: string;
  externalEffects?: string;
  overwrite?: boolean;
  /** The dialects the case is saved in (case.json `dialects`; default threads-py and threads-ts). */
  dialects?: readonly string[];
  /** @deprecated the name of `dialects` in case format 1 (used when `dialects` is not given). */
  implementations?: readonly string[];
  /** `"refuse"` (default), `"redact"` or `"allow"` (spec/case-format.md section 10). */
  secrets?: string;
  /** Run the built case once before writing it (default true; spec/case-format.md 5.10). */
  verify?: boolean;
  /** A folder holding the bytes of sandbox files the log knows by hash only (spec/case-format.md 5.9; `SaveCaseOptions.sandboxDir`). */
  sandboxDir?: string;
  /** Without matchers in `expect` they are drafted from the recorded turn and `warnings` says so; `false` saves none (`SaveCaseOptions.draft`). */
  draft?: boolean;
}

export class Thread {
  private readonly log: SharedLog;
  private readonly reducer: Reducer;
  private readonly ids: IdIndex;
  private readonly recorder: Recorder;
  private readonly sandboxSnapshots = new Map<string, unknown>();
  /** Frozen copies of the first envelopes of the log, made by {@link events} on first access. */
  private readonly frozen: Envelope[] = [];
  /** The branch a `forked` event being recorded opens (its event id takes that name). */
  private nextBranch: string | null = null;

  private constructor(
    events: Envelope[] | SharedLog,
    readonly sandbox: SandboxProvider,
    readonly artifacts: ArtifactStore,
    readonly threadId: string,
    readonly clock: Clock,
    readonly agent: AgentSpec | null,
    /** A fork's reducer and ids, already in step with `events` (spare reducing the log again). */
    shared?: { reducer: Reducer; ids: IdIndex },
  ) {
    this.log = events instanceof SharedLog ? events : new SharedLog(events);
    if (shared !== undefined) {
      this.reducer = shared.reducer;
      this.ids = shared.ids;
    } else {
      this.reducer = new Reducer();
      for (const ev of this.log) this.reducer.apply(ev);
      this.ids = new IdIndex(this.log.slice().map((e, i): [string, number] => [e.event_id, i]));
    }
    this.recorder = new Recorder(this.log, this.reducer, threadId, (seq) => this.eventId(seq), clock);
  }

  /** Start a new thread: records `thread_started` with the agent. */
  static create(options: {
    agent: AgentSpec;
    sandbox?: SandboxProvider;
    threadId?: string;
    clock?: Clock;
    metadata?: JsonObject;
  }): Thread {
    const tid = options.threadId || `thread-${randomBytes(6).toString("hex")}`;
    const t = new Thread([], options.sandbox ?? new FakeSandbox(), new ArtifactStore(), tid, options.clock ?? new Clock(), options.agent);
    t.recorder.append("thread_started", { agent: options.agent.toJson(), metadata: options.metadata ?? {} });
    return t;
  }

  /**
   * Open an existing log: a path, the bytes of one, or envelopes in `dialect`. Without a
   * sandbox, a {@link FakeSandbox} is rebuilt from the state's files whose bytes are in the
   * artifacts (a folder of files named by sha256 hex, a store or a record).
   */
  static open(
    log: string | Uint8Array | ReadonlyArray<JsonValue | Envelope>,
    options: {
      sandbox?: SandboxProvider;
      artifacts?: string | ArtifactStore | Record<string, Uint8Array>;
      dialect?: DialectLike;
      handlers?: Record<string, SandboxHandler | ExternalHandler>;
    } = {},
  ): Thread {
    const dialect = options.dialect ?? CANONICAL;
    const events =
      typeof log === "string" || log instanceof Uint8Array ? [...readLog(log, { dialect })] : [...checkEvents(deepCopy([...log]) as JsonValue[], { dialect })];
    const store = artifactStore(options.artifacts, referencedArtifacts(events));
    const reducer = new Reducer();
    events.forEach((ev, i) => {
      try {
        reducer.apply(ev);
      } catch (err) {
        throw err instanceof CaseError ? err.at({ file: `event ${i}` }) : err;
      }
    });
    const state = reducer.state;
    let sandbox = options.sandbox;
    if (sandbox === undefined) {
      const files = new Map<string, Uint8Array>();
      for (const [path, sha] of Object.entries(state.sandbox.files)) {
        const data = store.get(sha);
        if (data !== undefined) files.set(path, data);
      }
      sandbox = new FakeSandbox(files);
    }
    const last = events[events.length - 1];
    const agent = state.agent !== null ? AgentSpec.fromJson(state.agent as JsonObject, options.handlers) : null;
    return new Thread(
      events,
      sandbox,
      store,
      state.thread_id || `thread-${randomBytes(6).toString("hex")}`,
      last === undefined ? new Clock() : new AfterClock(parseTs(last.ts)),
      agent,
    );
  }

  /**
   * The canonical envelopes, in log order, as they are now: a read-only array of read-only
   * envelopes (`TypeError` on a change; `deepCopy` gives mutable ones). Getting it costs
   * nothing; each envelope is copied and frozen on first access (core/frozen.ts).
   */
  get events(): readonly Envelope[] {
    return eventsView(this.log, this.frozen, this.log.length);
  }

  /** A copy of the canonical state (spec/reducer.md). */
  get state(): State {
    return deepCopy(this.reducer.state);
  }

  /**
   * `<branch>.<seq>` (the new branch for a `forked` event), then `.2`, `.3`... on a clash:
   * deterministic, so a recording with a fixed thread id and clock is byte-stable and the same
   * in both languages (spec/thread-log.md 9.2; spec/conformance/thread-api/).
   */
  private eventId(seq: number): string {
    const branch = (this.nextBranch ?? this.reducer.state.branch_id).replace(UNSAFE, "-").slice(0, 40);
    const base = `${branch}.${seq}`;
    let id = base;
    for (let n = 2; this.ids.has(id); n++) id = `${base}.${n}`;
    this.ids.add(id, this.log.length);
    return id;
  }

  /**
   * A new handle on a branch: the log up to `at`, then a `forked` event (`event_not_found`).
   * The fork shares the parent's events, ids and (at the last event) reduced state, each side
   * copying a shared container on its first change (spec/reducer.md 6.5): no deep copy and no
   * second reduction; a fork at an earlier event reduces the prefix again, without copies.
   */
  fork(at: string, options: { branchId?: string } = {}): Thread {
    const idx = this.ids.position(at) ?? -1;
    if (this.log.at(idx)?.event_id !== at) throw new CaseError("event_not_found", `event ${quote(at)} is not in the log`);
    const branch = options.branchId || `fork-${randomBytes(3).toString("hex")}`; // "" too, as in Python
    if (/[^A-Za-z0-9._-]/.test(branch)) {
      throw new CaseError("invalid_request", `branch_id ${quote(branch)} may hold only ASCII letters, digits, '.', '_' or '-'`);
    }
    const events = this.log.branch(idx + 1); // shared, not copied: a log's events never change
    const atEnd = idx + 1 === this.log.length;
    const reducer = atEnd ? this.reducer.branch() : new Reducer(null, { copyData: false });
    if (!atEnd) for (const ev of events) reducer.apply(ev);
    const sandbox = this.sandbox instanceof FakeSandbox ? new FakeSandbox(this.filesAt(this.sandbox, idx, reducer.state)) : this.sandbox;
    const ids = this.ids.branch(this.log.length, idx + 1);
    const child = new Thread(events, sandbox, new ArtifactStore(this.artifacts.blobs), this.threadId, this.clock, this.agent, { reducer, ids });
    if (atEnd) child.recorder.hasher = this.recorder.hasher.copy();
    child.nextBranch = branch;
    try {
      child.recorder.append("forked", { from_event_id: at, branch_id: branch });
    } finally {
      child.nextBranch = null;
    }
    return child;
  }

  /**
   * The in-memory sandbox's files as of event `idx` (`then` is the state there): the current
   * files with every path the log touched after `idx` put back (from the artifacts) as it was
   * then; a path first written after `idx` is left out (as Python's `Thread._files_at`).
   */
  private filesAt(sandbox: FakeSandbox, idx: number, then: State): Map<string, Uint8Array> {
    const files = sandbox.contents;
    const known = then.sandbox.files;
    const first = new Map<string, Envelope>();
    for (let i = idx + 1; i < this.log.length; i++) {
      const ev = this.log.at(i) as Envelope;
      if (ev.type !== "sandbox_read" && ev.type !== "sandbox_wrote") continue;
      const path = ev.data["path"] as string;
      if (!first.has(path)) first.set(path, ev);
    }
    for (const [path, ev] of first) {
      let sha: string | null;
      if (Object.hasOwn(known, path)) sha = known[path] as string;
      else if (ev.type === "sandbox_read") sha = ev.data["sha256"] as string; // there, unseen, at the fork point
      else sha = null; // created after the fork point
      const data = sha ? this.artifacts.get(sha) : undefined;
      if (data !== undefined) files.set(path, data);
      else if (sha === null) files.delete(path);
    }
    return files;
  }

  /** Record `snapshot_taken` and keep the sandbox's files; returns the snapshot_id. */
  snapshot(): string {
    let sid = `snap-${this.reducer.state.snapshots.length + 1}`;
    while (this.reducer.hasSnapshot(sid)) sid += "x";
    this.sandboxSnapshots.set(sid, this.sandbox.snapshot());
    this.recorder.append("snapshot_taken", { snapshot_id: sid });
    return sid;
  }

  /** Record `restored`: the state and the sandbox return to right after the snapshot. */
  restore(snapshotId: string): void {
    if (!this.reducer.hasSnapshot(snapshotId)) {
      throw new CaseError("invalid_request", `unknown snapshot_id ${quote(snapshotId)}`);
    }
    this.recorder.append("restored", { snapshot_id: snapshotId });
    const token = this.sandboxSnapshots.get(snapshotId);
    if (token !== undefined) {
      this.sandbox.restore(token);
      return;
    }
    const files = new Map<string, Uint8Array>();
    for (const [path, sha] of Object.entries(this.reducer.state.sandbox.files)) {
      const data = this.artifacts.get(sha);
      if (data !== undefined) files.set(path, data);
    }
    this.sandbox.restore(files);
  }

  /** Run one live turn with `model`; external tools call their handler. */
  runTurn(content: string | JsonObject[], model: Model, options: { stepLimit?: number } = {}): TurnOutcome {
    const agent = this.agent;
    if (agent === null) throw new CaseError("invalid_request", "the thread has no agent (no thread_started)");
    const external = (name: string, input: JsonObject): ToolResult => {
      const tool = agent.tool(name);
      if (tool?.handler === undefined) return new ToolResult(`no handler for external tool ${quote(name)}`, true);
      const out = (tool.handler as ExternalHandler)(input);
      return out instanceof ToolResult ? out : new ToolResult(out);
    };
    return runTurn(this.recorder, agent, this.sandbox, this.artifacts, model, content as JsonValue, {
      external,
      stepLimit: options.stepLimit ?? STEP_LIMIT,
    });
  }

  /**
   * Save the turn after `at` as the case directory `dir/name`. Returns
   * `{ok: true, value: {path, portable, fingerprint, outcome}}` or
   * `{ok: false, error: {code, message, hint}}`; never throws for a refusal, nor for a missing or
   * malformed request (`invalid_request`).
   */
  saveCase(name: string, request: SaveCaseRequest): SaveResult {
    if (request === null || typeof request !== "object" || Array.isArray(request)) {
      const what = request === null ? "null" : Array.isArray(request) ? "an array" : typeof request;
      const message = `thread.saveCase needs a request object, not ${what}`;
      return { ok: false, error: { code: "invalid_request", message, hint: "call thread.saveCase(name, { at, dir }), with at the event_id of the fork point" } };
    }
    return saveCase(this.log.slice(), name, {
      sandbox: this.sandbox,
      store: this.artifacts,
      expect: request.expect,
      at: request.at,
      dir: request.dir,
      externalEffects: request.externalEffects ?? "stub",
      overwrite: request.overwrite ?? false,
      dialects: request.dialects ?? request.implementations ?? DEFAULT_DIALECTS,
      secrets: request.secrets ?? "refuse",
      verify: request.verify ?? true,
      sandboxDir: request.sandboxDir,
      draft: request.draft,
      // verified with this thread's agent: custom sandbox tools run their handlers (spec/replay.md 8.4)
      ...(this.agent === null ? {} : { agent: this.agent }),
    });
  }

  /**
   * Write the log canonically to `path` in `dialect`, into a sibling file moved into place (as
   * Python's `write_log`): an event canonical JSON cannot hold (`unsafe_value`) or a failed
   * write leaves `path` as it was.
   */
  writeLog(path: string, options: { dialect?: DialectLike } = {}): void {
    const text = encodeLog(this.log, { dialect: options.dialect ?? CANONICAL });
    replaceFile(path, text);
  }

  /** Write every artifact's bytes to `directory/<sha256 hex>`. */
  writeArtifacts(directory: string): void {
    mkdirSync(directory, { recursive: true });
    for (const [sha, data] of [...this.artifacts.blobs].sort(([a], [b]) => (a < b ? -1 : 1))) writeFileSync(join(directory, sha), data);
  }
}

/** The sha256 hex of every artifact a log refers to (added, or named by a sandbox event). */
function referencedArtifacts(events: readonly Envelope[]): Set<string> {
  const out = new Set<string>();
  const hex = (v: JsonValue | undefined): string => String(v).replace(/^sha256:/, "");
  for (const ev of events) {
    const data = ev.data;
    if (ev.type === "artifact_added") out.add(hex(data["artifact_id"]));
    else if (ev.type === "sandbox_read" || ev.type === "sandbox_wrote") {
      if (data["artifact"]) out.add(hex(data["artifact"]));
      if (data["sha256"]) out.add(hex(data["sha256"]));
    }
  }
  return out;
}

/** The artifact store of an opened log; from a folder, only the files the log refers to are read, each within the case limit. */
function artifactStore(artifacts: string | ArtifactStore | Record<string, Uint8Array> | undefined, wanted: Set<string>): ArtifactStore {
  if (artifacts === undefined) return new ArtifactStore();
  if (artifacts instanceof ArtifactStore) return artifacts;
  if (typeof artifacts !== "string") return new ArtifactStore(artifacts);
  try {
    if (!statSync(artifacts).isDirectory()) throw new Error("not a folder");
  } catch {
    throw new CaseError("invalid_request", `artifacts folder ${artifacts} does not exist`);
  }
  const blobs = new Map<string, Uint8Array>();
  for (const name of [...wanted].sort()) {
    const p = join(artifacts, name);
    if (/^[0-9a-f]{64}$/.test(name) && existsSync(p)) {
      blobs.set(name, readRegular(p, { code: "invalid_request", limit: MAX_CASE_BYTES, limitCode: "case_too_large" }));
    }
  }
  return new ArtifactStore(blobs);
}
