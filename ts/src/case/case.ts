/**
 * The case directory (spec/case-format.md): its files, fingerprint and loading; the atomic
 * writer is in writer.ts.
 *
 *     case.json               {format: 2, name, input, expect {must, expect}, at,
 *                              external_effects, dialects, portable,
 *                              agent {name, model, system_sha256, tools}, fingerprint,
 *                              created_with {tool, version}}
 *     log.<dialect>.jsonl     the log up to and including `at`, in each listed dialect
 *     expected.<dialect>.json the state that log reduces to, in that dialect
 *     model.json              {format: 1, replies: [{request_sha256, message, stop_reason, usage}]}
 *     stubs.json              {format: 1, calls: [{tool, input, result: {content, is_error}}]}
 *     sandbox.json            {format: 1, reads: [{path, sha256, artifact}]}
 *     artifacts/<sha256 hex>  bytes the log and sandbox.json refer to
 *
 * Every file is canonical (spec/strict-json.md), so the same turn always gives the same bytes.
 * Reading a case is loader.ts (`openCase`).
 * A format-1 case.json (the same, with the dialects under `implementations`) is read as
 * format 2 (`upgradedMeta`); every write of a case writes format 2 (case-format.md 1.3).
 */

import { lstatSync, readdirSync } from "node:fs";
import { join } from "node:path";

import { canonicalDocument } from "../core/canonical.js";
import { CaseError } from "../core/errors.js";
import { quote } from "../core/texts.js";
import { isDeviceName, sha256Hex } from "../reference/sandbox.js";
import type { JsonObject, JsonValue } from "../core/strictjson.js";
import { MAX_CASE_BYTES, readRegular, recordingLimit } from "../core/files.js";

/** The format of case.json this version writes; `READ_FORMATS` are the ones it reads. */
export const CASE_FORMAT = 2;
export const READ_FORMATS: readonly number[] = [1, 2];
/** The format of model.json, stubs.json and sandbox.json (unchanged by case format 2). */
export const RECORDING_FORMAT = 1;
/** The dialects a case is saved in unless told otherwise (case.json `dialects`). */
export const DEFAULT_DIALECTS: readonly string[] = ["threads-py", "threads-ts"];
/** @deprecated the name of `DEFAULT_DIALECTS` when case.json (format 1) called them `implementations`. */
export const DEFAULT_IMPLEMENTATIONS = DEFAULT_DIALECTS;

/** A format-1 case.json as format 2: `implementations` renamed `dialects`, `format` 2 (case-format.md 1.3). */
export function upgradedMeta(meta: JsonObject): JsonObject {
  if (meta["format"] !== 1) return { ...meta };
  const out: JsonObject = {};
  for (const [k, v] of Object.entries(meta)) if (k !== "implementations") out[k] = v;
  out["format"] = CASE_FORMAT;
  if (Object.hasOwn(meta, "implementations")) out["dialects"] = meta["implementations"] as JsonValue;
  return out;
}
const NAME = /^[A-Za-z0-9._-]{1,64}$/;

/** Return `name` if it is a valid case name, else throw `invalid_request`. */
export function checkCaseName(name: unknown): string {
  if (typeof name !== "string" || !NAME.test(name)) {
    throw new CaseError("invalid_request", `case name ${quote(name)} must be 1-64 ASCII letters, digits, '.', '_' or '-'`);
  }
  if (/^\.+$/.test(name)) throw new CaseError("invalid_request", `case name ${quote(name)} is not a directory name`);
  if (name.startsWith(".")) {
    // hidden names are where a save keeps its temporary directories (.<name>.tmp-*, .<name>.old-*)
    throw new CaseError("invalid_request", `case name ${quote(name)} must not start with '.'`);
  }
  if (name.startsWith("-")) {
    // a folder named -rf reads as options to rm, ls and threads-cases run alike
    throw new CaseError("invalid_request", `case name ${quote(name)} must not start with '-'`);
  }
  if (isDeviceName(name)) throw new CaseError("invalid_request", `case name ${quote(name)} is a Windows device name`);
  return name;
}

/** `must`: matchers that each match some replayed event; `expect`: an ordered subsequence. */
export interface CaseExpectation {
  must: JsonObject[];
  expect: JsonObject[];
}

const encoder = new TextEncoder();

function compareBytes(a: Uint8Array, b: Uint8Array): number {
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) if (a[i] !== b[i]) return (a[i] as number) - (b[i] as number);
  return a.length - b.length;
}

/**
 * `sha256:<hex>` over every file of a case (`case.json` without its fingerprint key): the
 * sha256 of the lines `<sha256 hex>  <path>\n`, sorted by the path's UTF-8 bytes.
 */
export function fingerprint(files: ReadonlyMap<string, Uint8Array>): string {
  const lines = [...files].map(([path, data]) => ({ path: encoder.encode(path), hash: sha256Hex(data) }));
  lines.sort((x, y) => compareBytes(x.path, y.path) || (x.hash < y.hash ? -1 : x.hash > y.hash ? 1 : 0));
  const parts: Uint8Array[] = [];
  for (const { path, hash } of lines) parts.push(encoder.encode(hash + "  "), path, encoder.encode("\n"));
  return "sha256:" + sha256Hex(Buffer.concat(parts));
}

/** Add `case.json` (with its fingerprint) to `files`; returns the complete set. */
export function finishCaseFiles(meta: JsonObject, files: ReadonlyMap<string, Uint8Array>): Map<string, Uint8Array> {
  const bare: JsonObject = {};
  for (const [k, v] of Object.entries(upgradedMeta(meta))) if (k !== "fingerprint") bare[k] = v;
  const body = new Map(files);
  body.set("case.json", encoder.encode(canonicalDocument(bare)));
  const fp = fingerprint(body);
  body.set("case.json", encoder.encode(canonicalDocument({ ...bare, fingerprint: fp })));
  return body;
}

/**
 * Every regular file under a case directory (`case_invalid` for a symlink or special file).
 * `caseJson`, the bytes of its case.json the caller has just read, is used for that file when it
 * still is a regular file of that size within the limit (issue 33: the loader reads it once).
 */
export function readCaseFiles(path: string, caseJson?: Uint8Array): Map<string, Uint8Array> {
  const out = new Map<string, Uint8Array>();
  let budget = MAX_CASE_BYTES;
  const walk = (dir: string, rel: string): void => {
    for (const name of readdirSync(dir).sort()) {
      const full = join(dir, name);
      const r = rel ? `${rel}/${name}` : name;
      const st = lstatSync(full);
      if (st.isSymbolicLink()) throw new CaseError("case_invalid", "symlinks are not allowed inside a case", { file: full });
      if (st.isDirectory()) walk(full, r);
      else {
        const limit = recordingLimit(r, budget);
        const known = r === "case.json" && st.isFile() && caseJson?.length === st.size && st.size <= limit ? caseJson : undefined;
        const data = known ?? readRegular(full, { code: "case_invalid", limit, limitCode: "case_too_large", specialCode: "case_invalid", followSymlinks: false });
        budget -= data.length;
        out.set(r, data);
      }
    }
  };
  walk(path, "");
  return out;
}
