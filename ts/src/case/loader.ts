/**
 * The one case loader (spec/case-format.md section 8), as threads_cases/case/loader.py.
 *
 * {@link openCase} reads a case directory once and checks it once; everything in TypeScript
 * that reads a case (the driver's `replay`, `save`'s own verification) goes through it. It
 * returns a validated, immutable {@link Case}:
 *
 *     Case(path, files {relative posix path: bytes}, meta (case.json),
 *          documents {"model.json" | "stubs.json" | "sandbox.json" | "expected.<d>.json": value},
 *          logs {dialect: [canonical envelope, ...]}, fingerprintOk)
 *
 * What it checks, in this order, throwing the first problem that stops the case from running
 * (with its file and a line or JSON pointer; the same code, file, line and pointer as Python,
 * pinned by spec/conformance/case-errors/):
 *
 * 1. the directory: `case.json` is a regular file; only directories and regular files inside
 *    (`case_invalid` for a symlink or special file, `case_too_large` past the case limit);
 * 2. `case.json`: strict JSON, `format` 2 or 1 (`format_unsupported`; a format-1 case.json is
 *    read as format 2, its `implementations` as `dialects`, with problems pointing into the
 *    file as written), `case.schema.json`, the case name (section 1), a known dialect for each
 *    of `dialects` (`dialect_unknown`);
 * 3. the file set: no file the case does not name (`case_invalid` "unknown file ..."), then
 *    `log.<d>.jsonl` and `expected.<d>.json` for each listed dialect, `model.json`,
 *    `stubs.json`, `sandbox.json` (`case_invalid` "... is missing");
 * 4. `artifacts/<hex>`: the bytes hash to their name;
 * 5. the recordings: strict JSON and their schemas; every sandbox path; the artifacts
 *    `sandbox.json` refers to are there;
 * 6. `expected.<d>.json`: strict JSON;
 * 7. each log, with the log reader and the reducer rules of its dialect (`log_invalid` with the
 *    line), ending at `at`, with every artifact it refers to in `artifacts/`.
 *
 * One problem never stops a case: a stale fingerprint (`fingerprintOk` is false).
 */

import { createHash } from "node:crypto";
import { lstatSync, readFileSync, statSync, type Stats } from "node:fs";
import { join } from "node:path";

import { canonicalDocument } from "../core/canonical.js";
import { CaseError } from "../core/errors.js";
import { dialectNames } from "../core/dialects.js";
import { checkRecordingEntries } from "../core/files.js";
import { readLog } from "../core/log.js";
import { Reducer, type Envelope } from "../core/reducer.js";
import { schemaProblems } from "../core/schemas.js";
import { parse, type JsonObject, type JsonValue, isObj } from "../core/strictjson.js";
import { quote } from "../core/texts.js";
import { checkPath } from "../reference/sandbox.js";
import { READ_FORMATS, checkCaseName, fingerprint, readCaseFiles, upgradedMeta } from "./case.js";

export const RECORDING_FILES: readonly string[] = ["model.json", "stubs.json", "sandbox.json"];
const HEX64 = /^[0-9a-f]{64}$/;
const NAME_FORM = /^[A-Za-z0-9._-]{1,64}$/;


/** A case read and checked by {@link openCase}. Immutable: never mutate what it holds. */
export class Case {
  constructor(
    readonly path: string,
    readonly meta: Readonly<JsonObject>,
    readonly files: ReadonlyMap<string, Uint8Array> = new Map(),
    readonly documents: ReadonlyMap<string, JsonValue> = new Map(),
    readonly logs: ReadonlyMap<string, readonly Envelope[]> = new Map(),
    readonly fingerprintOk: boolean = true,
    /** The reducer each log was folded into while it was checked (read it through {@link fork}). */
    private readonly reduced: ReadonlyMap<string, Reducer> = new Map(),
  ) {
    Object.freeze(this);
  }

  /**
   * A reducer in the state of the `dialect` log that goes its own way from the fork point
   * ({@link Reducer.branch}: the two share nothing they change), so a replay reduces nothing
   * again (issue 33); undefined for a case built without it.
   */
  fork(dialect: string): Reducer | undefined {
    return this.reduced.get(dialect)?.branch();
  }

  get name(): string {
    return String(this.meta["name"]);
  }

  /** The dialects the case holds a log and an expected state in (case.json `dialects`). */
  get dialects(): string[] {
    return (this.meta["dialects"] as string[]).slice();
  }

  /** @deprecated the name of `dialects` in case format 1. */
  get implementations(): string[] {
    return this.dialects;
  }

  logPath(impl: string): string {
    return join(this.path, `log.${impl}.jsonl`);
  }

  expectedPath(impl: string): string {
    return join(this.path, `expected.${impl}.json`);
  }

  /** The parsed value of a JSON file of the case, as it was read and checked when opened. */
  read(name: string): JsonValue {
    if (name === "case.json") return this.meta as JsonObject;
    const doc = this.documents.get(name);
    if (doc === undefined) throw new CaseError("case_invalid", `${name} is missing`, { file: join(this.path, name) });
    return doc;
  }

  /** The bytes of `artifacts/<hex>` (`sha256:` prefix allowed), or undefined; only 64 hex digits name one. */
  artifact(id: string): Uint8Array | undefined {
    const hex = typeof id === "string" && id.startsWith("sha256:") ? id.slice(7) : id;
    if (typeof hex !== "string" || !HEX64.test(hex)) return undefined;
    return this.files.get(`artifacts/${hex}`);
  }
}

/** The hint under a case.json that is there but not a regular file (as in Python). */
export const CASE_JSON_NOT_A_FILE_HINT =
  "case.json must be a regular file holding the case's metadata (spec/case-format.md): replace it with one";

/**
 * What case.json is when it is not a regular file: `folder`, `symlink` (a loop or not: no symlink is
 * allowed inside a case), `FIFO`, `socket` or `device`; null for a regular file.
 */
/** Whether anything is at `path` (a broken symlink too). */
function exists(path: string): boolean {
  try {
    lstatSync(path);
    return true;
  } catch {
    return false;
  }
}

function caseJsonKind(st: Stats): string | null {
  if (st.isFile()) return null;
  if (st.isDirectory()) return "folder";
  if (st.isSymbolicLink()) return "symlink";
  if (st.isFIFO()) return "FIFO";
  if (st.isSocket()) return "socket";
  return "device";
}

/**
 * Read and check a case directory once (module comment); returns a {@link Case}. Throws
 * `CaseError` for the first problem that stops it from running: `case_invalid`,
 * `case_too_large`, `format_unsupported`, `dialect_unknown` or `log_invalid`.
 */
export function openCase(path: string): Case {
  let kind: string | null = "missing";
  try {
    kind = caseJsonKind(lstatSync(join(path, "case.json")));
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === "ENAMETOOLONG") {
      throw new CaseError("invalid_request", "a path component is longer than 255 bytes", { file: path.slice(0, 200) });
    }
  }
  if (kind === "missing" && !exists(path)) {
    // the command line's words for a path that does not exist (case-format.md 8.1 item 0)
    throw new CaseError("invalid_request", "no such file or folder", { file: path, hint: "expected a case directory (a folder holding case.json)" });
  }
  if (kind === "missing") throw new CaseError("case_invalid", "not a case directory: case.json is missing", { file: path });
  if (kind !== null) {
    throw new CaseError("case_invalid", `case.json is a ${kind}, not a file`, { file: path, hint: CASE_JSON_NOT_A_FILE_HINT });
  }
  if (isUpstreamCase(path)) {
    // one line, not a schema problem per key it lacks (case-format.md 8.1)
    throw new CaseError("case_invalid", UPSTREAM_CASE_MESSAGE, { file: join(path, "case.json"), hint: UPSTREAM_CASE_HINT });
  }
  const files = readCaseFiles(path);
  const { meta, raw, old } = checkMeta(path, files);
  const dialects = checkDialects(path, meta, old);
  checkFileSet(path, files, dialects);
  checkArtifacts(path, files);
  const documents = new Map<string, JsonValue>();
  checkRecordings(path, files, documents);
  for (const d of dialects) {
    const name = `expected.${d}.json`;
    documents.set(name, parseJson(files.get(name) as Uint8Array, join(path, name)));
  }
  const logs = new Map<string, readonly Envelope[]>();
  const reduced = new Map<string, Reducer>();
  for (const d of dialects) {
    const [events, reducer] = checkLog(path, files, meta, d);
    logs.set(d, Object.freeze(events));
    reduced.set(d, reducer);
  }
  const fingerprintOk = fingerprint(withoutFingerprint(files, raw)) === meta["fingerprint"];
  return new Case(path, Object.freeze(meta), files, documents, logs, fingerprintOk, reduced);
}

/** Keys whose presence together (without `format`) mark an upstream threads conformance case. */
const UPSTREAM_CASE_KEYS = ["kind", "family", "clock"];
const UPSTREAM_CASE_MESSAGE =
  "this is a conformance case of the upstream threads runtime (its case.json has kind, family and clock), not a threads-cases case";
const UPSTREAM_CASE_HINT =
  "run it with the threads runtime's own conformance suite; threads-cases runs the cases `threads-cases save` writes (spec/case-format.md 8.1)";

/** Whether `path/case.json` (a regular file of at most 1 MiB, strict JSON) is an object with kind, family and clock and no format. */
function isUpstreamCase(path: string): boolean {
  let value: JsonValue;
  try {
    const file = join(path, "case.json");
    if (statSync(file).size > 1 << 20) return false;
    value = parse(new Uint8Array(readFileSync(file)), { code: "case_invalid", file });
  } catch {
    return false; // reported by the usual checks
  }
  return isObj(value) && !Object.hasOwn(value, "format") && UPSTREAM_CASE_KEYS.every((k) => Object.hasOwn(value as JsonObject, k));
}

function withoutFingerprint(files: ReadonlyMap<string, Uint8Array>, meta: JsonObject): Map<string, Uint8Array> {
  // the fingerprint covers case.json without its fingerprint key, written canonically (case-format.md)
  const bare: JsonObject = {};
  for (const [k, v] of Object.entries(meta)) if (k !== "fingerprint") bare[k] = v;
  const out = new Map(files);
  out.set("case.json", new TextEncoder().encode(canonicalDocument(bare)));
  return out;
}

function isBlank(data: Uint8Array): boolean {
  return data.every((b) => b === 0x20 || b === 0x09 || b === 0x0a || b === 0x0d);
}

function parseJson(data: Uint8Array, file: string): JsonValue {
  if (isBlank(data)) throw new CaseError("case_invalid", "empty file", { file, line: 1 });
  return parse(data, { code: "case_invalid", file });
}

/** case.json as format 2 (`meta`), as written (`raw`, for the fingerprint), and whether it is format 1. */
function checkMeta(path: string, files: ReadonlyMap<string, Uint8Array>): { meta: JsonObject; raw: JsonObject; old: boolean } {
  const file = join(path, "case.json");
  const value = parseJson(files.get("case.json") as Uint8Array, file);
  const fmt = isObj(value) ? value["format"] : undefined;
  if (isObj(value) && Object.hasOwn(value, "format") && !(typeof fmt === "number" && READ_FORMATS.includes(fmt))) {
    throw new CaseError("format_unsupported", `case format ${quote(fmt)} is not supported (this version reads ${READ_FORMATS.join(" and ")})`, {
      file,
      pointer: "/format",
      hint: "upgrade threads-cases, or re-save the case",
    });
  }
  const old = fmt === 1;
  if (old && Object.hasOwn(value as JsonObject, "dialects")) {
    throw new CaseError("case_invalid", "a format-1 case.json lists its dialects under implementations", { file, pointer: "/dialects" });
  }
  const upgraded = isObj(value) ? upgradedMeta(value) : value;
  const first = schemaProblems(upgraded, "case.schema.json")[0];
  if (first !== undefined) {
    // a format-1 file: point into the file as written
    const pointer = old && /^\/dialects(\/|$)/.test(first.pointer) ? "/implementations" + first.pointer.slice(9) : first.pointer;
    const message = old ? first.message.replaceAll("dialects", "implementations") : first.message;
    throw new CaseError("case_invalid", `schema: ${message}`, { file, pointer });
  }
  const meta = upgraded as JsonObject;
  if (typeof meta["name"] === "string" && NAME_FORM.test(meta["name"])) {
    try {
      checkCaseName(meta["name"]); // the schema allows "..", "CON", ...
    } catch (err) {
      if (err instanceof CaseError) throw new CaseError("case_invalid", err.message, { file, pointer: "/name" });
      throw err;
    }
  }
  return { meta, raw: value as JsonObject, old };
}

function checkDialects(path: string, meta: JsonObject, old: boolean): string[] {
  const known = new Set(dialectNames());
  const listed = Array.isArray(meta["dialects"]) ? meta["dialects"] : [];
  listed.forEach((d, i) => {
    if (typeof d === "string" && !known.has(d)) {
      throw new CaseError("dialect_unknown", `unknown dialect ${quote(d)}; known: ${[...known].sort().join(", ")}`, {
        file: join(path, "case.json"),
        pointer: `/${old ? "implementations" : "dialects"}/${i}`,
      });
    }
  });
  return listed.filter((d): d is string => typeof d === "string");
}

function checkFileSet(path: string, files: ReadonlyMap<string, Uint8Array>, dialects: readonly string[]): void {
  const required = new Set(RECORDING_FILES);
  for (const d of dialects) {
    required.add(`log.${d}.jsonl`);
    required.add(`expected.${d}.json`);
  }
  for (const rel of [...files.keys()].sort()) {
    if (required.has(rel) || rel === "case.json") continue;
    if (rel.startsWith("artifacts/") && /^[0-9a-f]{64}$/.test(rel.slice(10))) continue;
    const log = /^(?:log\.[a-z0-9][a-z0-9-]{0,63}\.jsonl|expected\.[a-z0-9][a-z0-9-]{0,63}\.json)$/.test(rel);
    throw new CaseError("case_invalid", `unknown file ${rel}${log ? " (its dialect is not in case.json dialects)" : ""}`, {
      file: join(path, rel),
      hint: "a case holds only the files of its format: move the file out, or delete it",
    });
  }
  for (const rel of [...required].sort()) {
    if (!files.has(rel)) throw new CaseError("case_invalid", `${rel} is missing`, { file: join(path, rel) });
  }
}

function checkArtifacts(path: string, files: ReadonlyMap<string, Uint8Array>): void {
  for (const rel of [...files.keys()].sort()) {
    const hex = rel.startsWith("artifacts/") ? rel.slice(10) : null;
    if (hex !== null && HEX64.test(hex) && createHash("sha256").update(files.get(rel) as Uint8Array).digest("hex") !== hex) {
      throw new CaseError("case_invalid", "artifact bytes do not match their sha256 name", { file: join(path, rel) });
    }
  }
}

function needArtifact(files: ReadonlyMap<string, Uint8Array>, artifact: string, file: string, pointer: string, line?: number): void {
  const hex = artifact.startsWith("sha256:") ? artifact.slice(7) : artifact;
  if (!files.has(`artifacts/${hex}`)) throw new CaseError("case_invalid", `artifact ${artifact} is not in artifacts/`, { file, pointer, line });
}

function checkRecordings(path: string, files: ReadonlyMap<string, Uint8Array>, documents: Map<string, JsonValue>): void {
  for (const rel of RECORDING_FILES) {
    const file = join(path, rel);
    const doc = parseJson(files.get(rel) as Uint8Array, file);
    checkRecordingEntries(rel, doc, file); // case_too_large past 100,000 entries (8.4)
    const first = schemaProblems(doc, rel.replace(".json", ".schema.json"))[0];
    if (first !== undefined) throw new CaseError("case_invalid", `schema: ${first.message}`, { file, pointer: first.pointer });
    documents.set(rel, doc);
    if (rel !== "sandbox.json") continue;
    ((doc as JsonObject)["reads"] as JsonObject[]).forEach((read, i) => {
      if (typeof read["artifact"] === "string") needArtifact(files, read["artifact"], file, `/reads/${i}/artifact`);
      try {
        checkPath(read["path"]);
      } catch (err) {
        if (err instanceof CaseError) throw new CaseError("case_invalid", err.message, { file, pointer: `/reads/${i}/path` });
        throw err;
      }
    });
  }
}

/** The canonical events of the `d` log, checked, and the reducer they were folded into (its state: the log's). */
function checkLog(path: string, files: ReadonlyMap<string, Uint8Array>, meta: JsonObject, d: string): [Envelope[], Reducer] {
  const file = join(path, `log.${d}.jsonl`);
  const events: Envelope[] = [];
  const reducer = new Reducer(null, { copyData: false });
  for (const ev of readLog(files.get(`log.${d}.jsonl`) as Uint8Array, { dialect: d, name: file })) {
    try {
      reducer.apply(ev);
    } catch (err) {
      throw err instanceof CaseError ? err.at({ file, line: events.length + 1 }) : err;
    }
    events.push(ev);
  }
  const at = meta["at"] as string;
  const index = events.findIndex((e) => e.event_id === at);
  if (index === -1) throw new CaseError("case_invalid", `the fork point ${quote(at)} (case.json "at") is not in the log`, { file });
  if (index !== events.length - 1) {
    throw new CaseError("case_invalid", `the fork point ${quote(at)} is event ${index}, not the last event of the log`, { file, line: index + 1 });
  }
  for (const [seq, pointer, artifact] of artifactRefs(events)) needArtifact(files, artifact, file, pointer, seq + 1);
  return [events, reducer];
}

/** `[seq, pointer, artifact id]` for every artifact a canonical log refers to. */
export function artifactRefs(events: readonly Envelope[]): Array<[number, string, string]> {
  const out: Array<[number, string, string]> = [];
  for (const ev of events) {
    const data = ev.data as JsonObject;
    if (ev.type === "artifact_added") out.push([ev.seq, "/data/artifact_id", data["artifact_id"] as string]);
    if ((ev.type === "sandbox_read" || ev.type === "sandbox_wrote") && typeof data["artifact"] === "string") {
      out.push([ev.seq, "/data/artifact", data["artifact"]]);
    }
  }
  return out;
}
