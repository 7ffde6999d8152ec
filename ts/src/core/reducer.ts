/**
 * The reducer: the state a thread log reduces to (spec/reducer.md).
 *
 * A pure streaming fold over canonical envelopes (`threads-py` keys). Each event costs time in
 * proportion to its own size: turn and snapshot ids are checked in sets, and `snapshot_taken`
 * shares the messages and turns with the live state (messages are never changed in place: a
 * tool result merged into the last message replaces it), keeping only their lengths, the last
 * message and small copies of the rest (spec/reducer.md, "Cost"). Every broken rule throws `CaseError("log_invalid")` with
 * the JSON pointer of the offending field and the event's seq in the message; {@link Reducer.apply}
 * checks everything before it changes anything, so a refused event leaves the state as it was.
 */

import { CaseError } from "./errors.js";
import { IdMap, IdSet } from "./idtable.js";
import { setOwn, type JsonObject, type JsonValue } from "./strictjson.js";

/** A canonical event envelope (schema-valid; see schemas/event.schema.json). */
export interface Envelope {
  event_id: string;
  thread_id: string;
  seq: number;
  type: string;
  actor_kind: string;
  epoch: number;
  branch_id: string;
  critical: boolean;
  ts: string;
  data: JsonObject;
}

export type Status = "idle" | "in_turn" | "failed";

export interface Turn {
  turn_id: string;
  status: "completed" | "failed";
  stop_reason: string | null;
  error: JsonValue;
}

export interface Message {
  role: "user" | "assistant";
  content: JsonValue;
}

export interface Artifact {
  media_type: string;
  size: number;
}

/** The canonical state (spec/reducer.md); `Dialect.encodeState` spells it in another dialect. */
export interface State {
  thread_id: string | null;
  branch_id: string;
  epoch: number;
  last_seq: number | null;
  last_event_id: string | null;
  status: Status;
  current_turn: string | null;
  turns: Turn[];
  agent: JsonValue;
  messages: Message[];
  pending_tool_calls: string[];
  sandbox: { files: Record<string, string> };
  artifacts: Record<string, Artifact>;
  usage: { input_tokens: number; output_tokens: number };
  snapshots: string[];
}

/** State keys that `restored` brings back from the snapshot. */
export const RESTORED_KEYS = [
  "status",
  "current_turn",
  "turns",
  "agent",
  "messages",
  "pending_tool_calls",
  "sandbox",
  "artifacts",
  "usage",
] as const satisfies ReadonlyArray<keyof State>;

/** A copy of a flat record whose values are never changed in place (keeps `__proto__` keys as data). */
function shallowCopy<T>(record: Record<string, T>): Record<string, T> {
  const out: Record<string, T> = {};
  for (const [k, v] of Object.entries(record)) setOwn(out as unknown as JsonObject, k, v as unknown as JsonValue);
  return out;
}

/**
 * What `snapshot_taken` keeps: shared lists with their lengths, the last message (the only slot
 * a later event may replace), and the small mutable parts, shared until the reducer's next
 * change to them (copy on write, {@link Reducer} `unshare`), as in Python.
 */
class Saved {
  readonly status: Status;
  readonly currentTurn: string | null;
  readonly turns: Turn[];
  readonly nTurns: number;
  readonly agent: JsonValue;
  readonly messages: Message[];
  readonly nMessages: number;
  readonly lastMessage: Message | undefined;
  readonly pending: readonly string[];
  readonly files: Record<string, string>;
  readonly artifacts: Record<string, Artifact>;
  readonly usage: { input_tokens: number; output_tokens: number };

  constructor(state: State) {
    this.status = state.status;
    this.currentTurn = state.current_turn;
    this.turns = state.turns;
    this.nTurns = state.turns.length;
    this.agent = state.agent;
    this.messages = state.messages;
    this.nMessages = state.messages.length;
    this.lastMessage = state.messages[state.messages.length - 1];
    // shared, not copied: the reducer copies them before its next change (unshare)
    this.pending = state.pending_tool_calls;
    this.files = state.sandbox.files;
    this.artifacts = state.artifacts;
    this.usage = state.usage;
  }

  /** Put the saved parts back as fresh containers; the saved ones stay as they were. */
  restoreInto(state: State): void {
    const messages = this.messages.slice(0, this.nMessages);
    if (this.lastMessage !== undefined && messages.length > 0) messages[messages.length - 1] = this.lastMessage;
    state.status = this.status;
    state.current_turn = this.currentTurn;
    state.turns = this.turns.slice(0, this.nTurns);
    state.agent = this.agent;
    state.messages = messages;
    state.pending_tool_calls = [...this.pending];
    state.sandbox = { files: shallowCopy(this.files) };
    state.artifacts = shallowCopy(this.artifacts);
    state.usage = { ...this.usage };
  }
}

/** The state of an empty log. */
export function initialState(): State {
  return {
    thread_id: null,
    branch_id: "main",
    epoch: 0,
    last_seq: null,
    last_event_id: null,
    status: "idle",
    current_turn: null,
    turns: [],
    agent: null,
    messages: [],
    pending_tool_calls: [],
    sandbox: { files: {} },
    artifacts: {},
    usage: { input_tokens: 0, output_tokens: 0 },
    snapshots: [],
  };
}

/** A deep copy of a JSON value (keeps `__proto__` keys as data). */
export function deepCopy<T>(value: T): T {
  if (Array.isArray(value)) return value.map((v: unknown) => deepCopy(v)) as T;
  if (value !== null && typeof value === "object") {
    const out: JsonObject = {};
    for (const [k, v] of Object.entries(value)) setOwn(out, k, deepCopy(v as JsonValue));
    return out as T;
  }
  return value;
}

const str = (v: JsonValue | undefined): string => v as string;
const num = (v: JsonValue | undefined): number => v as number;
const obj = (v: JsonValue | undefined): JsonObject => v as JsonObject;
const repr = (v: string | null): string => (v === null ? "None" : `'${v}'`);

type Handler = (ev: Envelope, data: JsonObject) => void;

export interface ReducerOptions {
  /** Copy values taken from events into the state (default true); the log reader hands over fresh objects and turns this off. */
  copyData?: boolean;
}

/**
 * A streaming reducer: feed canonical envelopes to {@link apply}, read {@link state}.
 * `new Reducer(state)` resumes from a state produced earlier; snapshots taken before that are
 * then unknown, so restoring one throws `log_invalid`.
 */
export class Reducer {
  /** The state (read it; do not assign it). */
  state: State;
  private readonly copy: <T>(value: T) => T;
  /** Every snapshot id taken, with what it saved (null: taken before the state this reducer resumed from). */
  private saved: IdMap<Saved | null>;
  private started: boolean;
  private turnIds: IdSet;
  /** Every container of the state, the saved snapshots and the id sets are shared with a branch. */
  private borrowed = false;
  /** pending_tool_calls, sandbox.files, artifacts and usage are held by a snapshot (or a branch). */
  private shared = false;

  constructor(state?: State | null, options: ReducerOptions = {}) {
    this.state = state ? deepCopy(state) : initialState();
    this.turnIds = new IdSet(this.state.turns.map((t) => t.turn_id));
    this.saved = new IdMap(this.state.snapshots.map((sid) => [sid, null]));
    this.copy = options.copyData === false ? (v) => v : deepCopy;
    // Started means "thread_started was applied", which is exactly "agent is not null": a
    // prefix of x_ events moves last_seq but does not start the thread.
    this.started = this.state.agent !== null;
  }

  /** True when `snapshotId` was taken (a set lookup, not a scan of `state.snapshots`). */
  hasSnapshot(snapshotId: string): boolean {
    return this.saved.has(snapshotId);
  }

  /**
   * A reducer in the same state that goes its own way from here (a fork's reducer, spec/reducer.md
   * 6.5). Costs the same whatever the log's length: the two share every container until one of
   * them changes it, and the first change copies it (the items, never changed in place, stay shared).
   */
  branch(): Reducer {
    const child = new Reducer(null, { copyData: this.copy === deepCopy });
    child.state = { ...this.state };
    child.saved = this.saved;
    child.started = this.started;
    child.turnIds = this.turnIds;
    child.shared = this.shared = true;
    child.borrowed = this.borrowed = true;
    return child;
  }

  /** Copy the lists and id tables a {@link branch} shares, before changing them. */
  private own(): void {
    const st = this.state;
    st.messages = [...st.messages];
    st.turns = [...st.turns];
    st.snapshots = [...st.snapshots];
    this.saved = this.saved.copy();
    this.turnIds = this.turnIds.copy();
    this.borrowed = false; // the small parts stay shared until unshare copies them
  }

  /** Copy the small mutable parts a snapshot (or a branch) shares, before changing them. */
  private unshare(): void {
    if (!this.shared) return;
    const st = this.state;
    st.pending_tool_calls = [...st.pending_tool_calls];
    st.sandbox = { files: shallowCopy(st.sandbox.files) };
    st.artifacts = shallowCopy(st.artifacts);
    st.usage = { ...st.usage };
    this.shared = false;
  }

  private fail(ev: Envelope, message: string, pointer = ""): CaseError {
    return new CaseError("log_invalid", `seq ${ev.seq}: ${message}`, { pointer });
  }

  private checkEnvelope(ev: Envelope): void {
    const st = this.state;
    const expectedSeq = st.last_seq === null ? 0 : st.last_seq + 1;
    if (ev.seq !== expectedSeq) throw this.fail(ev, `seq gap: expected seq ${expectedSeq}`, "/seq");
    if (st.thread_id !== null && ev.thread_id !== st.thread_id) {
      throw this.fail(ev, `thread_id ${repr(ev.thread_id)} differs from ${repr(st.thread_id)}`, "/thread_id");
    }
    const wantEpoch = ev.type === "restored" ? st.epoch + 1 : st.epoch;
    if (ev.epoch !== wantEpoch) throw this.fail(ev, `epoch ${ev.epoch} where ${wantEpoch} is expected`, "/epoch");
    if (ev.type === "forked") {
      if (ev.branch_id !== ev.data["branch_id"]) throw this.fail(ev, "a forked event carries its new branch_id", "/branch_id");
    } else if (ev.branch_id !== st.branch_id) {
      throw this.fail(ev, `branch_id ${repr(ev.branch_id)} differs from ${repr(st.branch_id)}`, "/branch_id");
    }
  }

  /** Fold one canonical envelope into the state; throws `log_invalid` (state unchanged) for a broken rule. */
  apply(ev: Envelope): void {
    this.checkEnvelope(ev);
    if (!ev.type.startsWith("x_")) {
      if (!this.started && ev.type !== "thread_started") {
        throw this.fail(ev, `the first event must be thread_started, not ${ev.type}`, "/type");
      }
      const handler = this.handlers[ev.type];
      if (handler === undefined) throw this.fail(ev, `unknown event type ${ev.type}`, "/type");
      // equal copies: a refused event still leaves the state as it was
      if (this.borrowed && ev.type !== "forked" && ev.type !== "model_requested" && ev.type !== "turn_started") this.own();
      handler(ev, ev.data);
    }
    const st = this.state;
    st.thread_id ??= ev.thread_id;
    st.last_seq = ev.seq;
    st.last_event_id = ev.event_id;
  }

  private inTurn(ev: Envelope, data: JsonObject): void {
    const st = this.state;
    if (st.status !== "in_turn") {
      const why = st.status === "failed" ? "after turn_failed without a new turn" : "outside a turn";
      throw this.fail(ev, `${ev.type} ${why}`, "/type");
    }
    if (data["turn_id"] !== st.current_turn) {
      throw this.fail(ev, `turn_id ${repr(str(data["turn_id"]))} is not the current turn ${repr(st.current_turn)}`, "/data/turn_id");
    }
  }

  private checkArtifact(ev: Envelope, data: JsonObject): void {
    const art = data["artifact"];
    if (art === null || art === undefined) return;
    if (art !== "sha256:" + str(data["sha256"])) {
      throw this.fail(ev, "artifact must be 'sha256:' + the file's sha256", "/data/artifact");
    }
    const known = Object.hasOwn(this.state.artifacts, art) ? this.state.artifacts[art] : undefined;
    if (known === undefined) throw this.fail(ev, `artifact ${art} was not added before`, "/data/artifact");
    if (known.size !== data["size"]) {
      throw this.fail(ev, `size ${num(data["size"])} differs from the artifact's ${known.size}`, "/data/size");
    }
  }

  private readonly handlers: Readonly<Record<string, Handler>> = {
    thread_started: (ev, data) => {
      if (this.started) throw this.fail(ev, "a second thread_started", "/type");
      this.started = true;
      this.state.agent = this.copy(data["agent"] ?? null);
    },

    user_message: (ev, data) => {
      if (this.state.status === "in_turn") throw this.fail(ev, "user_message during a turn", "/type");
      this.state.messages.push({ role: "user", content: this.copy(data["content"] ?? null) });
    },

    turn_started: (ev, data) => {
      const st = this.state;
      const turnId = str(data["turn_id"]);
      if (st.status === "in_turn") throw this.fail(ev, `turn_started while turn ${repr(st.current_turn)} is open`, "/type");
      if (this.turnIds.has(turnId)) throw this.fail(ev, `turn_id ${repr(turnId)} was used before`, "/data/turn_id");
      st.status = "in_turn";
      st.current_turn = turnId;
    },

    model_requested: (ev, data) => this.inTurn(ev, data),

    model_responded: (ev, data) => {
      this.inTurn(ev, data);
      const st = this.state;
      const usage = obj(data["usage"]);
      const totals = { input_tokens: 0, output_tokens: 0 };
      for (const key of ["input_tokens", "output_tokens"] as const) {
        const total = st.usage[key] + num(usage[key]);
        if (total > Number.MAX_SAFE_INTEGER) {
          throw this.fail(ev, `usage.${key} would exceed 2^53-1 (${Number.MAX_SAFE_INTEGER})`, `/data/usage/${key}`);
        }
        totals[key] = total;
      }
      this.unshare();
      st.messages.push({ role: "assistant", content: this.copy(obj(data["message"])["content"] ?? null) });
      st.usage.input_tokens = totals.input_tokens;
      st.usage.output_tokens = totals.output_tokens;
    },

    tool_called: (ev, data) => {
      this.inTurn(ev, data);
      const id = str(data["tool_use_id"]);
      if (this.state.pending_tool_calls.includes(id)) throw this.fail(ev, `tool_use_id ${repr(id)} is already pending`, "/data/tool_use_id");
      this.unshare();
      this.state.pending_tool_calls.push(id);
    },

    tool_result: (ev, data) => {
      this.inTurn(ev, data);
      const st = this.state;
      const id = str(data["tool_use_id"]);
      const pending = st.pending_tool_calls.indexOf(id);
      if (pending === -1) throw this.fail(ev, `tool_result with no call: ${repr(id)}`, "/data/tool_use_id");
      this.unshare();
      st.pending_tool_calls.splice(pending, 1);
      const block: JsonObject = {
        type: "tool_result",
        tool_use_id: id,
        content: this.copy(data["content"] ?? null),
        is_error: data["is_error"] ?? false,
      };
      const last = st.messages[st.messages.length - 1];
      const content = last?.content;
      if (
        last !== undefined &&
        last.role === "user" &&
        Array.isArray(content) &&
        content.length > 0 &&
        content.every((b) => b !== null && typeof b === "object" && !Array.isArray(b) && b["type"] === "tool_result")
      ) {
        // replaced, not extended in place: a snapshot may share the old message
        st.messages[st.messages.length - 1] = { role: "user", content: [...content, block] };
      } else {
        st.messages.push({ role: "user", content: [block] });
      }
    },

    sandbox_read: (ev, data) => {
      this.checkArtifact(ev, data);
      this.unshare();
      setOwn(this.state.sandbox.files as JsonObject, str(data["path"]), str(data["sha256"]));
    },

    sandbox_wrote: (ev, data) => {
      const path = str(data["path"]);
      if (data["sha256"] === null) {
        if (data["artifact"] !== null || data["size"] !== 0) {
          throw this.fail(ev, "a deletion (sha256 null) has size 0 and no artifact", "/data");
        }
        if (!Object.hasOwn(this.state.sandbox.files, path)) throw this.fail(ev, `deleting ${repr(path)}, which the log never saw`, "/data/path");
        this.unshare();
        delete this.state.sandbox.files[path];
        return;
      }
      this.checkArtifact(ev, data);
      this.unshare();
      setOwn(this.state.sandbox.files as JsonObject, path, str(data["sha256"]));
    },

    artifact_added: (ev, data) => {
      const id = str(data["artifact_id"]);
      const entry: Artifact = { media_type: str(data["media_type"]), size: num(data["size"]) };
      const old = Object.hasOwn(this.state.artifacts, id) ? this.state.artifacts[id] : undefined;
      if (old !== undefined && (old.media_type !== entry.media_type || old.size !== entry.size)) {
        throw this.fail(ev, `artifact ${id} added again with other details`, "/data");
      }
      this.unshare();
      setOwn(this.state.artifacts as unknown as JsonObject, id, entry as unknown as JsonObject);
    },

    snapshot_taken: (ev, data) => {
      const sid = str(data["snapshot_id"]);
      if (this.saved.has(sid)) throw this.fail(ev, `snapshot_id ${repr(sid)} was taken before`, "/data/snapshot_id");
      this.state.snapshots.push(sid);
      this.saved.set(sid, new Saved(this.state));
      this.shared = true;
    },

    restored: (ev, data) => {
      const sid = str(data["snapshot_id"]);
      const saved = this.saved.get(sid);
      if (saved === undefined || saved === null) throw this.fail(ev, `restored an unknown snapshot ${repr(sid)}`, "/data/snapshot_id");
      saved.restoreInto(this.state);
      this.shared = false; // restoreInto made fresh containers
      this.turnIds = new IdSet(this.state.turns.map((t) => t.turn_id));
      this.state.epoch += 1;
    },

    forked: (ev, data) => {
      const st = this.state;
      const from = str(data["from_event_id"]);
      const branch = str(data["branch_id"]);
      if (from !== st.last_event_id) {
        throw this.fail(ev, `forked from ${repr(from)}, but the previous event is ${repr(st.last_event_id)}`, "/data/from_event_id");
      }
      if (branch === st.branch_id) throw this.fail(ev, "a fork starts a new branch_id", "/data/branch_id");
      st.branch_id = branch;
    },

    turn_completed: (ev, data) => {
      this.inTurn(ev, data);
      const st = this.state;
      if (st.pending_tool_calls.length > 0) {
        throw this.fail(ev, `turn completed with tool calls pending: ${JSON.stringify(st.pending_tool_calls)}`, "/type");
      }
      this.turnIds.add(str(data["turn_id"]));
      st.turns.push({ turn_id: str(data["turn_id"]), status: "completed", stop_reason: str(data["stop_reason"]), error: null });
      st.status = "idle";
      st.current_turn = null;
    },

    turn_failed: (ev, data) => {
      this.inTurn(ev, data);
      const st = this.state;
      this.turnIds.add(str(data["turn_id"]));
      st.turns.push({ turn_id: str(data["turn_id"]), status: "failed", stop_reason: null, error: this.copy(data["error"] ?? null) });
      st.pending_tool_calls = [];
      st.status = "failed";
      st.current_turn = null;
    },
  };
}

/**
 * Reduce canonical envelopes (assumed schema-valid: the log reader checks that) to a canonical
 * state. Throws `log_invalid` for a broken reducer rule.
 */
export function reduceEnvelopes(events: Iterable<Envelope>, state?: State | null): State {
  const r = new Reducer(state);
  for (const ev of events) r.apply(ev);
  return r.state;
}
