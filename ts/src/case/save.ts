/**
 * Saving a turn as a case (spec/case-format.md, section 3).
 *
 * The case is the log up to and including the fork point `at`, the next user input after it
 * and the turn that input started. {@link buildCaseFiles} is pure: it gives every file's
 * bytes (the same bytes in every implementation). {@link saveCase} checks the request, builds
 * the files and writes them atomically; a refusal comes back as `{ok: false, error}` with
 * one of the codes `invalid_request`, `event_not_found`, `no_turn_after_fork`,
 * `turn_incomplete`, `egress_policy_unsupported`, `case_exists`, `log_invalid`,
 * `unsafe_value` (and `io_error` when the disk fails).
 */

import { checkForkRoom } from "../core/timestamps.js";
import { deltaRecords, turnRequests } from "./requests.js";
import { createHash } from "node:crypto";
import { join } from "node:path";
import type { AgentSpec } from "../reference/agent.js";

import { canonicalDocument, canonicalLine } from "../core/canonical.js";
import { CASE_FORMAT, DEFAULT_DIALECTS, RECORDING_FORMAT, checkCaseName, finishCaseFiles, type CaseExpectation } from "./case.js";
import { outFolderProblem, writeCaseDir, type WriteOutcome } from "./writer.js";
import { getDialect } from "../core/dialects.js";
import { CaseError } from "../core/errors.js";
import { MAX_RECORDING_BYTES, RECORDING_LISTS, checkRecordingEntries } from "../core/files.js";
import { encodeLog } from "../core/log.js";
import { explain, findAll, validateMatcher } from "../core/matchers.js";
import { quote } from "../core/texts.js";
import { Reducer, type Envelope } from "../core/reducer.js";
import { drafted } from "./draft.js";
import { redactEvents } from "./redact.js";
import { supplySandboxBytes } from "./sandbox-files.js";
import { findingWhere, redactText, scanFiles } from "./secrets.js";
import type { ArtifactStore } from "../reference/runtime.js";
import type { SandboxProvider } from "../reference/sandbox.js";
import { parse, type JsonObject, type JsonValue, isObj } from "../core/strictjson.js";
import { version } from "../core/version.js";
import { verifyCaseFiles } from "./verify.js";
import { OPTIONS_HINT, checkArguments, checkSandbox, describe } from "./save-arguments.js";

const TERMINAL = ["turn_completed", "turn_failed"];

/** A non-empty list of distinct dialect names (case.json requires minItems 1 and uniqueItems). */
export function checkDialects(dialects: unknown): string[] {
  if (typeof dialects === "string" || !Array.isArray(dialects)) {
    throw new CaseError("invalid_request", "dialects must be a list of dialect names");
  }
  const names = [...(dialects as unknown[])];
  if (names.length === 0) throw new CaseError("invalid_request", "dialects must name at least one dialect");
  if (new Set(names).size !== names.length) throw new CaseError("invalid_request", `dialects ${quote(names)} repeat a name`);
  for (const name of names) {
    if (typeof name !== "string") throw new CaseError("invalid_request", `dialect ${quote(name)} is not a name`);
    getDialect(name);
  }
  return names as string[];
}

/** @deprecated the name of `checkDialects` in case format 1. */
export const checkImplementations = checkDialects;
const encoder = new TextEncoder();

export type ExternalEffects = "stub" | "forbid";

/** A saved case: where, whether it is portable, its fingerprint and what the write did. */
export interface SavedCase {
  path: string;
  portable: boolean;
  fingerprint: string;
  outcome: WriteOutcome;
}

/**
 * A refusal of {@link saveCase}: a reason `code`, a one-sentence `message` (never a secret
 * value) and a one-line `hint` saying what to do, the text Python's `SaveError.hint` gives
 * for the same refusal (spec/conformance/save-errors/).
 */
export interface SaveError {
  code: string;
  message: string;
  hint: string;
}

/** `warnings`: lines for the user, as Python's `SaveResult.warnings` (drafted matchers, an empty expectation). */
export type SaveResult = { ok: true; value: SavedCase; warnings: string[] } | { ok: false; error: SaveError };

/** `{must, expect}` with each matcher validated (pointers `/must/<i>`, `/expect/<i>`). */
export function checkExpectation(expect: unknown): CaseExpectation {
  if (expect === null || expect === undefined) return { must: [], expect: [] };
  if (typeof expect !== "object" || Array.isArray(expect)) {
    throw new CaseError("invalid_request", "expect must be a CaseExpectation(must=[...], expect=[...])");
  }
  const e = expect as Record<string, unknown>;
  const list = (key: string): unknown[] => {
    const v = Object.hasOwn(e, key) ? e[key] : [];
    if (!Array.isArray(v)) throw new CaseError("invalid_request", `expect.${key} must be a list of matchers`, { pointer: `/${key}` });
    return v;
  };
  return {
    must: list("must").map((m, i) => validateMatcher(m, `/must/${i}`) as unknown as JsonObject),
    expect: list("expect").map((m, i) => validateMatcher(m, `/expect/${i}`) as unknown as JsonObject),
  };
}

/** Index of `at` and the turn events after it (user_message .. terminal event). */
function splitTurn(events: readonly Envelope[], at: string): [number, Envelope[]] {
  const idx = events.findIndex((e) => e.event_id === at);
  if (idx === -1) throw new CaseError("event_not_found", `event ${quote(at)} is not in the log`);
  const rest = events.slice(idx + 1).filter((e) => !e.type.startsWith("x_"));
  const first = rest[0];
  if (first === undefined || first.type !== "user_message") {
    const what = first !== undefined ? `the next event is ${first.type}` : "the log ends there";
    throw new CaseError("no_turn_after_fork", `no user input follows ${quote(at)}: ${what}`);
  }
  const turn: Envelope[] = [first];
  let turnId: JsonValue | undefined;
  for (const e of rest.slice(1)) {
    if (turnId === undefined) {
      if (e.type !== "turn_started") {
        throw new CaseError("turn_incomplete", `the user input after ${quote(at)} starts no turn (next: ${e.type})`);
      }
      turnId = e.data["turn_id"];
    }
    turn.push(e);
    if (TERMINAL.includes(e.type) && Object.hasOwn(e.data, "turn_id") && e.data["turn_id"] === turnId) return [idx, turn];
  }
  throw new CaseError("turn_incomplete", `the turn after ${quote(at)} has no turn_completed or turn_failed`);
}

interface Recorded {
  replies: JsonObject[];
  calls: JsonObject[];
  reads: JsonObject[];
}

/** model.json replies, stubs.json calls and sandbox.json reads of a turn. */
function recorded(turn: readonly Envelope[], agent: JsonValue): Recorded {
  const out: Recorded = { replies: [], calls: [], reads: [] };
  let lastSha: string | null = null;
  const tools = ((agent as JsonObject | null)?.["tools"] ?? []) as JsonObject[];
  const external = new Set(tools.filter((t) => t["kind"] === "external").map((t) => t["name"] as string));
  const called = new Map<string, JsonObject>();
  const written = new Set<string>();
  const seenReads = new Set<string>();
  for (const e of turn) {
    const d = e.data;
    switch (e.type) {
      case "model_requested":
        lastSha = d["request_sha256"] as string;
        break;
      case "model_responded":
        out.replies.push({
          request_sha256: lastSha || "0".repeat(64),
          message: d["message"] as JsonValue,
          stop_reason: d["stop_reason"] as JsonValue,
          usage: d["usage"] as JsonValue,
        });
        break;
      case "tool_called":
        called.set(d["tool_use_id"] as string, d);
        break;
      case "tool_result": {
        const call = called.get(d["tool_use_id"] as string);
        if (call !== undefined && call["kind"] === "external" && external.has(call["name"] as string)) {
          out.calls.push({
            tool: call["name"] as JsonValue,
            input: call["input"] as JsonValue,
            result: { content: d["content"] as JsonValue, is_error: d["is_error"] as JsonValue },
          });
        }
        break;
      }
      case "sandbox_wrote":
        written.add(d["path"] as string);
        break;
      case "sandbox_read": {
        if (written.has(d["path"] as string)) break;
        const key = JSON.stringify([d["path"], d["sha256"]]);
        if (!seenReads.has(key)) {
          seenReads.add(key);
          out.reads.push({ path: d["path"] as JsonValue, sha256: d["sha256"] as JsonValue, artifact: d["artifact"] as JsonValue });
        }
        break;
      }
      default:
        break;
    }
  }
  return out;
}

function artifactIds(events: readonly Envelope[], reads: readonly JsonObject[]): string[] {
  const ids = new Set<string>();
  for (const r of reads) if (r["artifact"]) ids.add(r["artifact"] as string);
  for (const e of events) {
    const d = e.data;
    if (e.type === "artifact_added") ids.add(d["artifact_id"] as string);
    else if ((e.type === "sandbox_read" || e.type === "sandbox_wrote") && d["artifact"]) ids.add(d["artifact"] as string);
  }
  return [...ids].sort();
}

/** The sha256 of each file the replay starts with that the log may know by hash only (case-format.md 3.7.1), sorted. */
function hashOnlyShas(files: Record<string, unknown>, reads: readonly JsonObject[]): string[] {
  const shas = new Set<string>();
  for (const sha of Object.values(files)) if (typeof sha === "string" && sha) shas.add(sha);
  for (const r of reads) if (r["artifact"] === null) shas.add(r["sha256"] as string);
  return [...shas].sort();
}

const INTERRUPTION_POINTS = ["turn_started", "model_requested", "model_responded", "tool_called", "tool_result"];

/**
 * model.json's `interruption` for a turn that ended in `turn_failed` (case-format.md 3.4.1): the last event before
 * the end whose type is an interruption point, as its type and index among the turn's events of that type.
 */
export function interruptionOf(turn: readonly Envelope[]): JsonObject | null {
  const end = turn[turn.length - 1] as Envelope;
  if (end.type !== "turn_failed") return null;
  const last = [...turn.slice(0, -1)].reverse().find((e) => INTERRUPTION_POINTS.includes(e.type)) as Envelope;
  const index = turn.filter((e) => e.type === last.type).length - 1; // it is the last of its type
  const error = end.data["error"] as JsonObject;
  const message = typeof error["message"] === "string" ? error["message"] : "";
  return { after: last.type, index, error: { code: error["code"] as string, message } };
}

export interface BuildCaseOptions {
  /** Canonical envelopes, already checked. */
  events: readonly Envelope[];
  name: string;
  expect: CaseExpectation;
  at: string;
  externalEffects: ExternalEffects;
  portable: boolean;
  store: ArtifactStore;
  dialects?: readonly string[];
}

/**
 * Every file of a case as canonical bytes, and its case.json (spec/case-format.md). Pure.
 * Throws `CaseError` with the refusal codes of this module.
 */
export function buildCaseFiles(options: BuildCaseOptions): { files: Map<string, Uint8Array>; meta: JsonObject } {
  const { events, name, expect, at, externalEffects, portable, store } = options;
  const dialects = options.dialects ?? DEFAULT_DIALECTS;
  const [idx, turn] = splitTurn(events, at);
  checkForkRoom(events[idx]!.ts, at);
  const end = turn[turn.length - 1] as Envelope;
  const error = end.data["error"];
  if (end.type === "turn_failed" && isObj(error) && error["code"] === "unsafe_value") {
    // the runtime stopped the turn on a value a log cannot hold: the case could never replay it
    throw new CaseError(
      "unsafe_value",
      `the turn after ${quote(at)} stopped on a value that cannot be recorded: ${typeof error["message"] === "string" ? error["message"] : ""}`,
    );
  }
  const prefix = events.slice(0, idx + 1);
  const reducer = new Reducer();
  for (const e of prefix) reducer.apply(e);
  const state = reducer.state;
  if (state.pending_tool_calls.length > 0) {
    throw new CaseError("turn_incomplete", `tool calls are in flight at ${quote(at)}: ${quote(state.pending_tool_calls)}`);
  }
  const rec = recorded(turn, state.agent);
  // the turn's events with its extension events, so the reducer sees every seq
  const lastId = (turn[turn.length - 1] as Envelope).event_id;
  const lastIndex = events.findIndex((e) => e.event_id === lastId);
  const records = deltaRecords(turnRequests(prefix, events.slice(idx + 1, lastIndex + 1)));
  rec.replies.forEach((reply, i) => {
    if (records[i] !== undefined) reply["request"] = records[i]; // what a run compares a diverged request with
  });
  if (externalEffects === "forbid" && rec.calls.length > 0) {
    const names = [...new Set(rec.calls.map((c) => c["tool"] as string))].sort();
    throw new CaseError("invalid_request", `external_effects is 'forbid' but the turn called external tools: ${quote(names)}`);
  }
  findAll(expect.must, turn).forEach((hit, i) => {
    if (hit === null) throw new CaseError("invalid_request", `must[${i}] cannot pass: ${explain(expect.must[i], turn)}`);
  });
  const files = new Map<string, Uint8Array>();
  for (const dialect of dialects) {
    const d = getDialect(dialect);
    files.set(`log.${dialect}.jsonl`, encoder.encode(encodeLog(prefix, { dialect: d })));
    files.set(`expected.${dialect}.json`, encoder.encode(canonicalDocument(d.encodeState(state as unknown as JsonObject))));
  }
  const modelDoc: JsonObject = { format: RECORDING_FORMAT, replies: rec.replies };
  const interruption = interruptionOf(turn);
  if (interruption !== null) modelDoc["interruption"] = interruption;
  const recordings: [string, JsonObject][] = [
    ["model.json", modelDoc],
    ["stubs.json", { format: RECORDING_FORMAT, calls: rec.calls }],
    ["sandbox.json", { format: RECORDING_FORMAT, reads: rec.reads }],
  ];
  for (const [rel, doc] of recordings) {
    checkRecordingEntries(rel, doc); // case_too_large past 100,000 (8.4)
    files.set(rel, encoder.encode(canonicalDocument(doc)));
  }
  for (const id of artifactIds(prefix, rec.reads)) {
    const data = store.get(id);
    if (data === undefined) {
      throw new CaseError("invalid_request", `artifact ${id} referred to by the log is not available`, {
        hint: "pass the folder holding the artifacts with --artifacts DIR",
      });
    }
    files.set(`artifacts/${id.startsWith("sha256:") ? id.slice(7) : id}`, data);
  }
  for (const sha of hashOnlyShas(state.sandbox.files as Record<string, unknown>, rec.reads)) {
    const data = store.get("sha256:" + sha);
    if (data !== undefined) files.set(`artifacts/${sha}`, data); // else the file stays hash-only (case-format.md 3.7.1)
  }
  const agent = (state.agent ?? { name: "", model: "", system: "", tools: [] }) as JsonObject;
  const meta: JsonObject = {
    format: CASE_FORMAT,
    name,
    input: (turn[0] as Envelope).data["content"] as JsonValue,
    expect: { must: expect.must, expect: expect.expect },
    at,
    external_effects: externalEffects,
    dialects: [...dialects],
    portable,
    agent: {
      name: agent["name"] as JsonValue,
      model: agent["model"] as JsonValue,
      system_sha256: createHash("sha256").update(agent["system"] as string, "utf8").digest("hex"),
      // each tool's definition, never its code (spec/case-format.md 3.1)
      tools: (agent["tools"] as JsonObject[]).map((t) => ({
        name: t["name"] as JsonValue,
        kind: t["kind"] as JsonValue,
        effect: t["effect"] as JsonValue,
        sha256: createHash("sha256").update(canonicalLine(t), "utf8").digest("hex"),
      })),
    },
    created_with: { tool: "threads-cases", version: version() },
  };
  const all = finishCaseFiles(meta, files);
  return { files: all, meta: parse(all.get("case.json") as Uint8Array) as JsonObject };
}

export interface SaveCaseOptions {
  sandbox: SandboxProvider;
  store: ArtifactStore;
  expect?: unknown;
  at: string;
  dir: string;
  externalEffects?: string;
  overwrite?: boolean;
  dialects?: readonly string[];
  /** @deprecated the name of `dialects` in case format 1 (used when `dialects` is not given). */
  implementations?: readonly string[];
  /** `"refuse"` (default), `"redact"` or `"allow"` (spec/case-format.md, "Secrets"). */
  secrets?: string;
  /** Run the built case once before writing it (default true); `replay_failed` when it would not pass (5.10). */
  verify?: boolean;
  /** The agent that run replays: the one the thread was recorded with, whose handlers a custom sandbox tool needs (spec/replay.md 8). */
  agent?: AgentSpec;
  /**
   * As `save` without `--must` / `--expect` (spec/case-format.md 5.12): undefined (the default)
   * drafts matchers from the recorded turn when `expect` holds none, `true` adds the drafted ones
   * before the given ones, `false` saves `expect` as given, an empty one too (the explicit way to
   * save none). The result's `warnings` say which.
   */
  draft?: boolean;
  /**
   * A folder holding sandbox files the log knows by sha256 only (`"artifact": null`), as
   * `save --sandbox DIR` (Python: `sandbox_dir=`; spec/case-format.md 5.9). For each file the
   * replay starts with (the prefix state's files by path, then the turn's reads before a write
   * of the same path) whose bytes `store` lacks, `sandboxDir/<path>` is read when it is a
   * regular file inside the folder (symlinks followed); the bytes are added before secrets
   * are redacted. A file absent from it stays hash-only (3.7.1). Refusals, as `invalid_request`:
   * a folder that does not exist (`--sandbox folder DIR does not exist`), bytes whose sha256
   * is not the recorded one (`--sandbox DIR: PATH has sha256 GOT, but the log recorded SHA`).
   * See {@link supplySandboxBytes}.
   */
  sandboxDir?: string;
}

export const SECRETS_MODES = ["refuse", "redact", "allow"];
/** A case may hold at most 512 MiB (`case_too_large`). */
export const MAX_CASE_BYTES = 512 * 1024 * 1024;

export function checkSecretsMode(secrets: unknown): string {
  if (typeof secrets !== "string" || !SECRETS_MODES.includes(secrets)) {
    throw new CaseError("invalid_request", `secrets must be one of ${SECRETS_MODES.join(", ")}, not ${quote(secrets)}`);
  }
  return secrets;
}

/**
 * The last save checks, in order (spec/case-format.md 7): `case_too_large` past 512 MiB, then
 * `secret_detected` unless `secrets` is `"allow"` (after a redaction: all or nothing).
 */
export function checkCaseFiles(files: ReadonlyMap<string, Uint8Array>, secrets: string, maxBytes = MAX_CASE_BYTES): void {
  let total = 0;
  for (const b of files.values()) total += b.length;
  if (total > maxBytes) {
    throw new CaseError("case_too_large", `the case would hold ${total} bytes; at most ${MAX_CASE_BYTES} (512 MiB)`, {
      hint: "save a turn with smaller inputs, or fork later in the thread",
    });
  }
  for (const name of Object.keys(RECORDING_LISTS)) {
    const size = files.get(name)?.length ?? 0;
    if (size > MAX_RECORDING_BYTES) {
      throw new CaseError("case_too_large", `${name} would hold ${size} bytes; at most ${MAX_RECORDING_BYTES} (32 MiB)`, {
        hint: "save a turn with fewer or smaller model calls",
      });
    }
  }
  if (secrets === "allow") return;
  const found = scanFiles(files);
  if (found.length === 0) return;
  const where = found.slice(0, 5).map((f) => `${f.kind} at ${findingWhere(f)}`).join("; ");
  const more = found.length > 5 ? ` (and ${found.length - 5} more)` : "";
  const redacted = secrets === "redact";
  throw new CaseError("secret_detected", `${redacted ? "redaction would leave" : "the case would hold"} values that look like credentials: ${where}${more}`, {
    hint: redacted
      ? "a redaction is all or nothing: remove these values by hand (they may sit in --expect), or pass --allow-secrets"
      : "pass --redact to replace them with stable placeholders, or --allow-secrets to save them knowingly",
  });
}

function refusedArgument(message: string, hint: string): SaveResult {
  return { ok: false, error: { code: "invalid_request", message, hint } };
}

/**
 * Save the turn after `at` as `dir/name` (spec/case-format.md, section 5: the checks in the
 * order of 5.1, then the atomic write of section 6). Returns `{ok: true, value: {path,
 * portable, fingerprint, outcome}}` or `{ok: false, error: {code, message, hint}}` with the codes
 * this module lists (`replay_failed` when `verify` finds the case would not pass,
 * `secret_detected` and `case_too_large` from the last checks); never throws for a refusal.
 * With `sandboxDir`, hash-only sandbox files take their bytes from that folder (5.9).
 */
export function saveCase(events: readonly Envelope[], name: string, options: SaveCaseOptions): SaveResult {
  if (!isObj(options as unknown as JsonValue)) {
    // checked before any option is read: a JavaScript caller gets a refusal, never a TypeError
    return refusedArgument(`saveCase needs an options object, not ${describe(options)}`, OPTIONS_HINT);
  }
  const dialectList = options.dialects ?? options.implementations ?? DEFAULT_DIALECTS;
  const secrets = options.secrets ?? "refuse";
  const externalEffects = options.externalEffects ?? "stub";
  try {
    checkCaseName(name);
    // the folder (case-format.md 5.2 step 1); a dir that is not a string is refused below
    const dirProblem = typeof options.dir === "string" ? outFolderProblem(options.dir, "the folder to create the case in") : null;
    if (dirProblem) throw new CaseError("invalid_request", dirProblem[0], { hint: dirProblem[1] });
    if (externalEffects !== "stub" && externalEffects !== "forbid") {
      throw new CaseError("invalid_request", `external_effects must be 'stub' or 'forbid', not ${quote(externalEffects)}`);
    }
    if (typeof options.at !== "string" || options.at === "") throw new CaseError("invalid_request", "at must be an event_id");
    const expect = checkExpectation(options.expect);
    const dialects = checkDialects(dialectList);
    checkSandbox(options.sandbox);
    if (!options.sandbox.blocksEgress) {
      throw new CaseError(
        "egress_policy_unsupported",
        `the thread's sandbox (${options.sandbox.constructor.name}) cannot block network access, and a replay must never reach the outside world`,
      );
    }
    checkSecretsMode(secrets);
    checkArguments(events, options);
    let store = options.store;
    // the folder's bytes first, so a redaction covers them too (case-format.md 5.1)
    if (options.sandboxDir !== undefined) store = supplySandboxBytes(events, options.at, store, options.sandboxDir);
    if (secrets === "redact") ({ events, store } = redactEvents(events, store));
    const [drafts, warnings] = drafted(splitTurn(events, options.at)[1], expect, options.draft);
    const { files, meta } = buildCaseFiles({
      events,
      name,
      expect: drafts,
      at: options.at,
      externalEffects,
      portable: options.sandbox.portable,
      store,
      dialects,
    });
    checkCaseFiles(files, secrets);
    if (options.verify ?? true) verifyCaseFiles(name, files, dialects, options.agent);
    const outcome = writeCaseDir(options.dir, name, files, options.overwrite ?? false, "allow"); // checked above, in its mode
    const value = { path: join(options.dir, name), portable: meta["portable"] as boolean, fingerprint: meta["fingerprint"] as string, outcome };
    return { ok: true, value, warnings };
  } catch (err) {
    if (err instanceof CaseError) {
      // a message never shows a secret (spec/reason-codes.md 1.1)
      const message = secrets === "allow" ? err.message : redactText(err.message);
      return { ok: false, error: { code: err.code === "dialect_unknown" ? "invalid_request" : err.code, message, hint: err.hint } };
    }
    const e = err as NodeJS.ErrnoException;
    if (typeof e?.code === "string" && typeof e.syscall === "string") {
      const hint = "check that --dir is a folder you can write to";
      return { ok: false, error: { code: "io_error", message: `cannot write the case: ${e.message}`, hint } };
    }
    throw err;
  }
}
