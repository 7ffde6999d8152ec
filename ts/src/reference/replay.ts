/**
 * Replay: run one case's turn again (spec/replay.md, sections 2-3).
 *
 * {@link replayCase} restores a case's fork point from its log (in this implementation's
 * dialect) and replays its input with a scripted model (`model.json`), stubs (`stubs.json`)
 * and a {@link FakeSandbox} holding the fork point's files plus the recorded reads
 * (`sandbox.json`), with every network access blocked. It answers
 *
 *     {events: [canonical envelopes from the user_message on],
 *      stop: null | {code, stop_key, message},
 *      requests: [request_sha256, ...],
 *      consumed: {replies: n, stubs: [bool, ...]},
 *      provenance: {model: [...], tools: [...]}}
 *
 * `provenance` (spec/replay.md 11.11) names, per model reply in call order, `recorded` or
 * `supplied` (empty on a live turn: the harness answers those calls), and per `tool_result`
 * in order `recorded` (a stub), `supplied` (`--supply tool:<name>`) or `live` (run now).
 *
 * Event ids are `<case name>.<seq>` and the clock is the fork point's ts plus 1 ms per
 * event, so a replay is byte-stable and equal in every implementation.
 */

import { AgentSpec, ToolResult } from "./agent.js";
import { canonicalLine } from "../core/canonical.js";
import { Case, openCase } from "../case/loader.js";
import { getDialect } from "../core/dialects.js";
import { CaseError } from "../core/errors.js";
import { ScriptedModel, StopError, normalizeReply } from "./model.js";
import { HarnessModel, liveAgentJson, liveExternal, type LiveTurn } from "./live.js";
import { quote } from "../core/texts.js";
import { Reducer, type Envelope, type State } from "../core/reducer.js";
import { ArtifactStore, Clock, Interruption, Recorder, blockEgress, parseTs, runTurn, type TurnOutcome } from "./runtime.js";
import { FakeSandbox } from "./sandbox.js";
import { type JsonObject, type JsonValue, isObj } from "../core/strictjson.js";

export const MAX_SUPPLY_ENTRIES = 200;
export const MAX_SUPPLY_BYTES = 64 * 1024;

export interface ReplayStop {
  code: string;
  stop_key: string;
  message: string;
}

export interface ReplayResult {
  events: Envelope[];
  stop: ReplayStop | null;
  requests: string[];
  consumed: { replies: number; stubs: boolean[] };
  provenance: { model: string[]; tools: string[] };
  /** The agent the turn ran (as `thread_started` holds it), when {@link ReplayOptions.agent} was given. */
  agent?: JsonObject;
}

/** An external call no stub answers: `missing_stub`, stop_key `tool:<name>`. */
export function missingStub(name: string): StopError {
  return new StopError(
    "missing_stub",
    `the agent called external tool ${quote(name)} with an input no stub answers`,
    `tool:${name}`,
    `record the call, or answer it with --supply '{"calls": {"tool:${name}": ...}}'`,
  );
}


function toolResult(value: unknown, where: string): ToolResult {
  if (typeof value === "string") return new ToolResult(value);
  if (
    isObj(value) &&
    Object.keys(value).every((k) => k === "content" || k === "is_error") &&
    (typeof value["content"] === "string" || Array.isArray(value["content"])) &&
    typeof (value["is_error"] ?? false) === "boolean"
  ) {
    return new ToolResult(value["content"] as string | JsonObject[], value["is_error"] === true);
  }
  throw new CaseError("invalid_request", `${where} must be a string or {content, is_error}`);
}

/**
 * Check a supply document `{"calls": {"model:<n>": reply, "tool:<name>": result}}`: at most
 * 200 entries and 64 KiB of canonical JSON. Returns the `calls` mapping.
 */
export function checkSupply(supply: unknown, source = "--supply"): JsonObject {
  if (!isObj(supply) || Object.keys(supply).length !== 1 || !Object.hasOwn(supply, "calls") || !isObj(supply["calls"])) {
    throw new CaseError("invalid_request", `${source} must be {"calls": {...}}`, { file: source });
  }
  const calls = supply["calls"];
  const n = Object.keys(calls).length;
  if (n > MAX_SUPPLY_ENTRIES) throw new CaseError("invalid_request", `${source} holds ${n} entries; at most 200`, { file: source });
  if (Buffer.byteLength(canonicalLine(supply), "utf8") > MAX_SUPPLY_BYTES) {
    throw new CaseError("invalid_request", `${source} is over 64 KiB`, { file: source });
  }
  for (const [key, value] of Object.entries(calls)) {
    const colon = key.indexOf(":");
    const kind = colon === -1 ? key : key.slice(0, colon);
    const rest = colon === -1 ? "" : key.slice(colon + 1);
    if (kind === "model" && /^[0-9]+$/.test(rest)) normalizeReply(value, `${source} calls[${quote(key)}]`);
    else if (kind === "tool" && rest) toolResult(value, `${source} calls[${quote(key)}]`);
    else {
      throw new CaseError("invalid_request", `${source} key ${quote(key)} must be 'model:<n>' or 'tool:<name>'`, {
        file: source,
        pointer: `/calls/${key}`,
      });
    }
  }
  return { ...calls };
}

/**
 * External calls answered from stubs.json: matched by tool name and canonical input, each
 * stub used once, in recorded order when keys are equal (spec/replay.md, 3.3); then the
 * supply's `tool:<name>`; else `missing_stub`.
 */
export class StubBook {
  readonly used: boolean[];
  /** Where each answered call's result came from, in call order (recorded, supplied). */
  readonly answered: string[] = [];
  private readonly keys: Array<[string, string]>;

  constructor(
    private readonly calls: readonly JsonObject[],
    private readonly supply: JsonObject,
  ) {
    this.used = calls.map(() => false);
    this.keys = calls.map((c) => [c["tool"] as string, canonicalLine(c["input"])]);
  }

  answer(name: string, input: JsonObject): ToolResult {
    const key = canonicalLine(input);
    for (let i = 0; i < this.keys.length; i++) {
      const [tool, inp] = this.keys[i] as [string, string];
      if (!this.used[i] && tool === name && inp === key) {
        this.used[i] = true;
        const r = (this.calls[i] as JsonObject)["result"] as JsonObject;
        this.answered.push("recorded");
        return new ToolResult(r["content"] as string | JsonObject[], r["is_error"] as boolean);
      }
    }
    const supplied = Object.hasOwn(this.supply, `tool:${name}`) ? this.supply[`tool:${name}`] : null;
    if (supplied !== null && supplied !== undefined) {
      const result = toolResult(supplied, `supply tool:${name}`);
      this.answered.push("supplied");
      return result;
    }
    throw missingStub(name);
  }
}

/**
 * `{model, tools}` of a replay (as replay.py `answer_provenance`): `model` cut to the replies
 * the turn got; per `tool_result`, the next of `external` when the tool is one of the agent's
 * external tools, else `live`.
 */
export function answerProvenance(events: readonly Envelope[], agent: AgentSpec, model: string[], external: readonly string[]): { model: string[]; tools: string[] } {
  const answered = events.filter((e) => e.type === "model_responded").length;
  let next = 0;
  const tools: string[] = [];
  for (const e of events) {
    if (e.type !== "tool_result") continue;
    const tool = agent.tool((e.data as JsonObject)["name"] as string);
    const externalCall = tool !== undefined && tool.kind !== "sandbox";
    tools.push(externalCall ? (external[next++] ?? "live") : "live");
  }
  return { model: model.slice(0, answered), tools };
}

/** The fork point's files plus the recorded reads; files without bytes and a null artifact are hash-only (spec/replay.md 2.3). */
export function restoreSandbox(c: Case, state: State, reads: readonly JsonObject[]): FakeSandbox {
  const files = new Map<string, Uint8Array>();
  const hashOnly = new Map<string, string>();
  const wanted: Array<[string, string, unknown]> = Object.entries(state.sandbox.files).map(([p, sha]) => [p, sha as string, null]);
  for (const r of reads) wanted.push([r["path"] as string, r["sha256"] as string, r["artifact"]]);
  for (const [path, sha, artifact] of wanted) {
    const data = c.artifact(sha);
    if (data !== undefined) {
      files.set(path, data);
      hashOnly.delete(path);
    } else if (artifact === null) {
      hashOnly.set(path, sha); // known by hash only: reading it stops the replay (spec/replay.md 2.3)
      files.delete(path);
    } else {
      throw new CaseError("case_invalid", `artifacts/${sha} (for ${path}) is missing`, { file: `${c.path}/artifacts` });
    }
  }
  return new FakeSandbox(files, hashOnly);
}

export interface ReplayOptions {
  /** The dialect (and log file) to replay from; default `threads-ts`. */
  implementation?: string;
  /** The `calls` mapping of a supply document (`model:<n>`, `tool:<name>`). */
  supply?: JsonObject | null;
  /** Replace the recorded agent (its system prompt, tools and sandbox handlers). */
  agent?: AgentSpec;
  /** A live turn: model calls asked of the harness (spec/replay.md section 11). */
  live?: LiveTurn;
}

/**
 * The case's prefix in `dialect`, reduced: the state the turn starts from. `case_invalid` when the
 * case has no log in that dialect, or the prefix starts no thread (no agent) and no agent is given.
 */
function forkPoint(c: Case, dialect: string, hasAgent: boolean): { prefix: Envelope[]; reducer: Reducer } {
  const logged = c.logs.get(dialect);
  if (logged === undefined) {
    throw new CaseError("case_invalid", `the case holds no log in the dialect ${dialect}`, { file: c.logPath(dialect) });
  }
  const prefix = [...logged];
  // the loader's reduction of the log, branched: the replay changes only its own copies of what
  // it changes, so the case stays as it was (issue 33: each log reduced once)
  let reducer = c.fork(dialect);
  if (reducer === undefined) {
    // the case's events are shared (it is immutable): the reducer copies what it keeps
    reducer = new Reducer();
    for (const ev of prefix) reducer.apply(ev);
  }
  if ((reducer.state.agent === null || reducer.state.agent === undefined) && !hasAgent) {
    throw new CaseError("case_invalid", `log.${dialect}.jsonl has no thread_started event: the fork point has no agent to replay`, {
      file: c.logPath(dialect),
    });
  }
  return { prefix, reducer };
}

/**
 * Replay a case's turn (spec/replay.md section 3). Throws `CaseError` (`case_invalid`,
 * `log_invalid`, ...) when the case cannot be run, and `handler_missing` when the turn calls a
 * sandbox tool that has no handler (spec/replay.md 8.4); a turn the recording cannot answer
 * comes back as `stop`.
 */
export function replayCase(path: string | Case, options: ReplayOptions = {}): ReplayResult {
  const c = typeof path === "string" ? openCase(path) : path;
  const dialect = getDialect(options.implementation ?? "threads-ts");
  const { prefix, reducer } = forkPoint(c, dialect.name, options.agent !== undefined);
  const replies = (c.read("model.json") as JsonObject)["replies"] as unknown[];
  const calls = (c.read("stubs.json") as JsonObject)["calls"] as JsonObject[];
  const reads = (c.read("sandbox.json") as JsonObject)["reads"] as JsonObject[];
  const supply = options.supply ?? {};
  const sandbox = restoreSandbox(c, reducer.state, reads);
  const supplied = new Map<number, unknown>();
  for (const [k, v] of Object.entries(supply)) {
    if (k.startsWith("model:") && /^[0-9]+$/.test(k.slice(6))) supplied.set(Number(k.slice(6)), v);
  }
  const live = options.live;
  const model = live === undefined ? new ScriptedModel(replies, supplied) : new HarnessModel(live);
  const stubs = new StubBook(calls, supply);
  const agent = options.agent ?? AgentSpec.fromJson(reducer.state.agent as JsonObject);
  if (options.agent !== undefined) reducer.state.agent = options.agent.toJson(); // the model is asked with the user's agent
  let external = (tool: string, input: JsonObject): ToolResult => stubs.answer(tool, input);
  if (live !== undefined) {
    reducer.state.agent = liveAgentJson(live, reducer.state.agent as JsonObject);
    external = liveExternal(external, agent, live.allowWrite);
  }
  const turnAgent = reducer.state.agent as JsonObject; // what each model request of the turn is built with
  const last = prefix[prefix.length - 1];
  const startMs = last === undefined ? 0 : parseTs(last.ts) + 1;
  const name = c.name;
  const rec = new Recorder([...prefix], reducer, reducer.state.thread_id ?? name, (seq) => `${name}.${seq}`, new Clock(startMs, 1));
  const store = new ArtifactStore();
  // THREADS_CASES_ISOLATION=none (`run --isolation none`): no guard (spec/replay.md 9.1)
  const egress = process.env["THREADS_CASES_ISOLATION"] === "none" ? { attempts: [], restore: () => undefined } : blockEgress();
  let outcome;
  try {
    outcome = runTurn(rec, agent, sandbox, store, model, c.meta["input"] as JsonValue, {
      external,
      egress: egress.attempts,
      // a recorded interruption belongs to the recorded replies, not to a live turn
      interruption: live === undefined ? Interruption.fromJson((c.read("model.json") as JsonObject)["interruption"]) : null,
      refuseMissingHandlers: true,
    });
  } finally {
    egress.restore();
  }
  const provenance = answerProvenance(outcome.events, agent, modelProvenance(live !== undefined, model.requests, replies.length), stubs.answered);
  // the user's agent: the harness compares it with the recorded one
  return replayResult(outcome, model, stubs, provenance, options.agent === undefined ? undefined : turnAgent);
}

function replayResult(
  outcome: TurnOutcome,
  model: { requests: readonly string[]; used: number },
  stubs: StubBook,
  provenance: ReplayResult["provenance"],
  agent: JsonObject | undefined,
): ReplayResult {
  const out: ReplayResult = {
    events: outcome.events,
    stop: outcome.stop,
    requests: [...model.requests],
    consumed: { replies: model.used, stubs: [...stubs.used] },
    provenance,
  };
  if (agent !== undefined) out.agent = agent;
  return out;
}

/** Per model call asked: `recorded` when model.json holds its reply, else `supplied` (spec/replay.md 5.1); none on a live turn. */
function modelProvenance(live: boolean, requests: readonly string[], recorded: number): string[] {
  return live ? [] : requests.map((_, i) => (i < recorded ? "recorded" : "supplied"));
}
