/**
 * Values inside driver requests that the request schemas cannot check
 * (spec/driver-protocol.md 3.2b): base64 text, the one source of a `reduce`, and values that
 * canonical JSON cannot write back, as threads_cases/protocol/request_values.py checks them.
 *
 * Every refusal is `CaseError("invalid_request")` whose pointer is a JSON pointer into the
 * request (RFC 6901), as the schema refusals of 3.2a are; `""` names the request itself.
 */

import { canonicalLine } from "../core/canonical.js";
import { CaseError } from "../core/errors.js";
import type { JsonObject, JsonValue } from "../core/strictjson.js";

/** RFC 4648 section 4 (the standard alphabet), padded with `=` to a multiple of 4, nothing else. */
const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;

/** The sources of a `reduce` request, in the order the spec lists them (2.2). */
export const REDUCE_SOURCES = ["path", "log", "log_text", "log_base64"] as const;

/**
 * The bytes of `text`, strict base64 (3.2b): the standard alphabet, padded, and the unused bits
 * of the last character zero (`text` is what encoding the bytes gives). Throws
 * `invalid_request` at `pointer` otherwise.
 */
export function decodeBase64(text: JsonValue | undefined, pointer: string): Uint8Array {
  if (typeof text === "string" && BASE64.test(text)) {
    const data = Buffer.from(text, "base64");
    if (data.toString("base64") === text) return new Uint8Array(data);
  }
  throw new CaseError(
    "invalid_request",
    "not base64: the bytes must be written with the standard alphabet (A-Z a-z 0-9 + /), padded with = to a multiple of 4 characters, with zero unused bits",
    { pointer },
  );
}

/** The one source key of a `reduce` request (2.2); `invalid_request` at `""` for none or several. */
export function oneReduceSource(message: JsonObject): (typeof REDUCE_SOURCES)[number] {
  const given = REDUCE_SOURCES.filter((k) => Object.hasOwn(message, k));
  if (given.length !== 1 || given[0] === undefined) {
    throw new CaseError(
      "invalid_request",
      "reduce needs exactly one of path, log, log_text or log_base64" + (given.length ? `; it has ${given.join(", ")}` : ""),
      { pointer: "" },
    );
  }
  return given[0];
}

/**
 * `value` when canonical JSON can write it (strict-json.md 4.1), else `invalid_request` at
 * `pointer` followed by the place inside it (the double `1e16`, for example).
 */
export function writable<T>(value: T, pointer: string): T {
  try {
    canonicalLine(value);
  } catch (err) {
    if (!(err instanceof CaseError) || err.code !== "unsafe_value") throw err;
    throw new CaseError("invalid_request", err.message, { pointer: pointer + (err.pointer ?? "") });
  }
  return value;
}

/** `err` with its pointer (into a part of the request) made a pointer into the request. */
export function under(pointer: string, err: unknown): unknown {
  if (!(err instanceof CaseError)) return err;
  return new CaseError(err.code, err.message, { pointer: pointer + (err.pointer ?? "") });
}
