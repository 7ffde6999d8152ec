/**
 * Which files a case may be written with (spec/case-format.md 6.6), as
 * `threads_cases/case/layout.py` checks them: every path relative and inside the case
 * (segments of ASCII letters, digits, `.`, `_`, `-`, not starting with `.`, none a Windows
 * device name), every `artifacts/<hex>` holding the bytes whose sha256 is `<hex>`; and the
 * strict reading of a driver's `thread.artifacts` (spec/driver-protocol.md 2.6).
 */

import { CaseError, pointerJoin } from "../core/errors.js";
import { quote } from "../core/texts.js";
import { isDeviceName, sha256Hex } from "../reference/sandbox.js";
import { isObj } from "../core/strictjson.js";

const SEGMENT = /^[A-Za-z0-9_-][A-Za-z0-9._-]{0,254}$/u;
const HEX64 = /^[0-9a-f]{64}$/u;
const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/u;
export const PATH_HINT =
  "a case holds case.json, log.<dialect>.jsonl, expected.<dialect>.json, model.json, stubs.json, sandbox.json and artifacts/<sha256 hex> (spec/case-format.md 1.1)";

/** Code point order, as Python sorts strings. */
function byCodePoint(a: string, b: string): number {
  const x = [...a];
  const y = [...b];
  for (let i = 0; i < Math.min(x.length, y.length); i++) {
    const d = (x[i] as string).codePointAt(0)! - (y[i] as string).codePointAt(0)!;
    if (d !== 0) return d;
  }
  return x.length - y.length;
}

/** Refuse (`invalid_request`) the first file, by path, that is not inside the case, holds a
 * device name, or is an artifact whose bytes do not match its name. */
export function checkCasePaths(files: ReadonlyMap<string, Uint8Array>): void {
  for (const rel of [...files.keys()].sort(byCodePoint)) {
    const segments = rel.split("/");
    if (!segments.every((s) => SEGMENT.test(s))) {
      throw new CaseError(
        "invalid_request",
        `case file ${quote(rel)} is not a path inside the case (segments of ASCII letters, digits, '.', '_' or '-', not starting with '.', joined by '/')`,
        { hint: PATH_HINT },
      );
    }
    if (segments.some((s) => isDeviceName(s))) {
      throw new CaseError("invalid_request", `case file ${quote(rel)} holds a Windows device name`, { hint: PATH_HINT });
    }
    if (segments[0] === "artifacts") checkArtifact(rel, segments, files.get(rel) as Uint8Array);
  }
}

function checkArtifact(rel: string, segments: string[], data: Uint8Array): void {
  if (segments.length !== 2 || !HEX64.test(segments[1] as string)) {
    throw new CaseError("invalid_request", `case file ${quote(rel)}: an artifact is named by the 64 lower-case hex digits of its sha256`, {
      hint: PATH_HINT,
    });
  }
  const actual = sha256Hex(data);
  if (actual !== segments[1]) {
    throw new CaseError("invalid_request", `case file ${quote(rel)} holds bytes whose sha256 is ${actual}: a corrupt case`, {
      hint: "an artifact's file name is the sha256 of its bytes (spec/case-format.md 3.7)",
    });
  }
}

/** A driver request's `thread.artifacts` (`{sha256 hex: base64}`) as bytes by name; refused
 * as `decode_artifacts` refuses in Python, at `/thread/artifacts[/<name>]`. */
export function decodeArtifacts(value: unknown): Map<string, Uint8Array> {
  const out = new Map<string, Uint8Array>();
  if (value === undefined || value === null) return out;
  if (!isObj(value)) {
    throw new CaseError("invalid_request", "write_case: thread.artifacts must be {sha256 hex: base64}", { pointer: "/thread/artifacts" });
  }
  for (const key of Object.keys(value).sort(byCodePoint)) {
    const text = value[key];
    let why: string;
    if (!HEX64.test(key)) why = "is not a sha256 (64 lower-case hex digits)";
    else if (typeof text !== "string" || !BASE64.test(text)) why = "is not base64 (RFC 4648, standard alphabet, padded)";
    else {
      const data = new Uint8Array(Buffer.from(text, "base64"));
      const actual = sha256Hex(data);
      if (actual === key) {
        out.set(key, data);
        continue;
      }
      why = `holds bytes whose sha256 is ${actual}`;
    }
    throw new CaseError("invalid_request", `write_case: artifact ${quote(key)} ${why}`, { pointer: pointerJoin(["thread", "artifacts", key]) });
  }
  return out;
}
