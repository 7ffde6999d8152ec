/**
 * The driver requests of the runtime library's own APIs (spec/driver-protocol.md 2.8-2.12,
 * capability `"library"`), as Python's `threads_cases/protocol/library_requests.py` answers
 * them: `secrets`, `open_case`, `draft`, `thread_program` and `save_case`. Each takes a request
 * already checked against its schema and gives the body of its `ok` answer; a refusal throws
 * `CaseError` with the refusal's code and hint.
 */

import { drafted } from "../case/draft.js";
import { decodeArtifacts } from "../case/layout.js";
import { openCase } from "../case/loader.js";
import { saveCase } from "../case/save.js";
import { findInValue, kindsIn, redactBytes, redactText, redactValue, scanBytes } from "../case/secrets.js";
import { CaseError, type ReasonCode } from "../core/errors.js";
import { encodeLog } from "../core/log.js";
import type { Envelope } from "../core/reducer.js";
import type { JsonObject, JsonValue } from "../core/strictjson.js";
import { AgentSpec } from "../reference/agent.js";
import { ScriptedModel } from "../reference/model.js";
import { ArtifactStore, Clock } from "../reference/runtime.js";
import { FakeSandbox, sha256Hex } from "../reference/sandbox.js";
import { Thread } from "../reference/thread.js";
import { decodeBase64 } from "./request-values.js";

/** The commands of this module, in the order of driver-protocol.md section 2. */
export const LIBRARY_COMMANDS = ["secrets", "open_case", "draft", "thread_program", "save_case"];

const LOADER_CODES = new Set(["case_invalid", "format_unsupported", "dialect_unknown", "log_invalid"]);

function secretsRequest(message: JsonObject): JsonObject {
  if (Object.hasOwn(message, "text")) {
    const text = message["text"] as string;
    return { findings: kindsIn(text), redacted: redactText(text) };
  }
  if (Object.hasOwn(message, "value")) {
    const value = message["value"] as JsonValue;
    return { findings: findInValue(value).map(([kind, pointer]) => ({ kind, pointer })), redacted: redactValue(value) };
  }
  const data = decodeBase64(message["bytes_base64"], "/bytes_base64");
  const findings = scanBytes(data).map(([view, kind]) => ({ kind, view }));
  return { findings, redacted_base64: Buffer.from(redactBytes(data)).toString("base64") };
}

function openCaseRequest(message: JsonObject): JsonObject {
  try {
    return { name: openCase(message["path"] as string).name, problem: null };
  } catch (err) {
    if (!(err instanceof CaseError) || !LOADER_CODES.has(err.code)) throw err;
    const problem = { code: err.code, message: err.message, hint: err.hint, file: err.file ?? null, line: err.line ?? null, pointer: err.pointer ?? null };
    return { name: null, problem };
  }
}

function draftRequest(message: JsonObject): JsonObject {
  const given = message["given"] as JsonObject;
  const draft = message["draft"];
  const [saved, warnings] = drafted(
    message["events"] as unknown as Envelope[],
    { must: (given["must"] ?? []) as JsonObject[], expect: (given["expect"] ?? []) as JsonObject[] },
    draft === null || draft === undefined ? undefined : (draft as boolean),
  );
  return { saved: { must: saved.must, expect: saved.expect }, warnings };
}

function threadProgramRequest(message: JsonObject): JsonObject {
  const threads = [
    Thread.create({
      agent: AgentSpec.fromJson(message["agent"] as JsonObject),
      sandbox: new FakeSandbox(message["files"] as Record<string, string>),
      threadId: message["thread_id"] as string,
      clock: new Clock(message["clock_start_ms"] as number),
    }),
  ];
  const snapshots: string[] = [];
  (message["ops"] as JsonObject[]).forEach((op, i) => {
    const thread = threads[op["thread"] as number];
    if (thread === undefined) throw new CaseError("invalid_request", "no such thread", { pointer: `/ops/${i}/thread` });
    if (op["op"] === "turn") thread.runTurn(op["text"] as string, new ScriptedModel(op["replies"] as JsonObject[]));
    else if (op["op"] === "fork") threads.push(thread.fork(op["at"] as string, { branchId: op["branch_id"] as string }));
    else if (op["op"] === "snapshot") snapshots.push(thread.snapshot());
    else thread.restore(op["snapshot_id"] as string);
  });
  const out = threads.map((t) => ({ event_ids: t.events.map((e) => e.event_id), log_sha256: sha256Hex(encodeLog(t.events)) }));
  return { threads: out, snapshot_ids: snapshots };
}

function saveCaseRequest(message: JsonObject): JsonObject {
  const thread = message["thread"] as JsonObject;
  const r = saveCase(thread["log"] as unknown as Envelope[], message["name"] as string, {
    sandbox: new FakeSandbox({}),
    store: new ArtifactStore(decodeArtifacts(thread["artifacts"])),
    at: message["at"] as string,
    dir: message["dir"] as string,
    verify: false,
    expect: message["expect"],
    ...(typeof message["draft"] === "boolean" ? { draft: message["draft"] } : {}),
    ...(message["external_effects"] !== undefined ? { externalEffects: message["external_effects"] as string } : {}),
    ...(message["dialects"] !== undefined ? { dialects: message["dialects"] as string[] } : {}),
    ...(message["secrets"] !== undefined ? { secrets: message["secrets"] as string } : {}),
  });
  if (!r.ok) throw new CaseError(r.error.code as ReasonCode, r.error.message, { hint: r.error.hint });
  return { path: r.value.path, warnings: r.warnings };
}

export const LIBRARY_HANDLERS: Record<string, (message: JsonObject) => JsonObject> = {
  secrets: secretsRequest,
  open_case: openCaseRequest,
  draft: draftRequest,
  thread_program: threadProgramRequest,
  save_case: saveCaseRequest,
};
