/**
 * Canonical JSON writing (RFC 8785, JCS; spec/strict-json.md).
 *
 * {@link canonicalLine} gives the JCS text of a value (one JSON Lines line, without the newline);
 * {@link canonicalDocument} the same value indented by two spaces with `": "` after keys and a
 * final newline, the form of every `.json` file the project writes. Keys are sorted by UTF-16
 * code units, numbers use ECMAScript Number-to-String and strings only the escapes JSON needs:
 * exactly what `JSON.stringify` does for a string or a finite number, and RFC 8785 was designed
 * so. Values that would not survive another language throw `CaseError("unsafe_value")`.
 */

import { CaseError, pointerJoin } from "./errors.js";
import { MAX_DEPTH, MAX_SAFE_INTEGER } from "./strictjson.js";

const LONE_SURROGATE = /\p{Surrogate}/u; // with the u flag only unpaired surrogates match

function unsafe(message: string, path: ReadonlyArray<string | number>): CaseError {
  return new CaseError("unsafe_value", message, { pointer: pointerJoin(path) });
}

function isPlainObject(value: object): value is Record<string, unknown> {
  const proto = Object.getPrototypeOf(value) as unknown;
  return proto === Object.prototype || proto === null;
}

function scalar(value: unknown, path: Array<string | number>): string | null {
  switch (typeof value) {
    case "string":
      if (LONE_SURROGATE.test(value)) throw unsafe("string holds a lone surrogate", path);
      return JSON.stringify(value);
    case "number":
      // neutral messages without the value (they can end up in a turn_failed event)
      if (!Number.isFinite(value)) throw unsafe("a number is not finite", path);
      if (Number.isInteger(value) && Math.abs(value) > MAX_SAFE_INTEGER && Math.abs(value) < 1e21) {
        // Its canonical form would be an integer token that the strict reader refuses
        // (spec/strict-json.md 4.1); from 1e21 on, JCS writes an exponent.
        throw unsafe("a number would be written as integer digits outside +-(2^53-1)", path);
      }
      return String(value); // ECMAScript Number-to-String is the JCS number form; -0 gives "0"
    case "bigint":
      if (value > BigInt(MAX_SAFE_INTEGER) || value < -BigInt(MAX_SAFE_INTEGER)) {
        throw unsafe("an integer is outside +-(2^53-1)", path);
      }
      return value.toString();
    case "boolean":
      return value ? "true" : "false";
    case "object":
      if (value === null) return "null";
      if (Array.isArray(value) || isPlainObject(value)) return null;
      throw unsafe(`a ${value.constructor?.name ?? "object"} is not a JSON value`, path);
    default:
      throw unsafe(`a ${typeof value} is not a JSON value`, path);
  }
}

function sortedKeys(obj: Record<string, unknown>): string[] {
  // The default sort compares UTF-16 code units: the order RFC 8785 asks for.
  return Object.keys(obj).sort();
}

/** Where {@link write} puts its pieces: an array, or a sink that passes them on. */
interface Sink {
  push(text: string): unknown;
}

function write(value: unknown, indent: string | null, depth: number, path: Array<string | number>, out: Sink): void {
  const text = scalar(value, path);
  if (text !== null) {
    out.push(text);
    return;
  }
  if (depth >= MAX_DEPTH) {
    // the pointer names at most the first 16 steps (spec/strict-json.md 4.1)
    const shown = pointerJoin(path.slice(0, 16)) + (path.length > 16 ? "/..." : "");
    throw new CaseError("unsafe_value", `nesting deeper than ${MAX_DEPTH} levels`, { pointer: shown });
  }
  const inner = indent === null ? null : indent + "  ";
  const open = inner === null ? "" : "\n" + inner;
  const sep = inner === null ? "," : ",\n" + inner;
  const close = inner === null ? "" : "\n" + indent;
  if (Array.isArray(value)) {
    if (value.length === 0) {
      out.push("[]");
      return;
    }
    out.push("[" + open);
    value.forEach((item: unknown, index) => {
      if (index > 0) out.push(sep);
      path.push(index);
      write(item, inner, depth + 1, path, out);
      path.pop();
    });
    out.push(close + "]");
    return;
  }
  const obj = value as Record<string, unknown>;
  const keys = sortedKeys(obj);
  if (keys.length === 0) {
    out.push("{}");
    return;
  }
  out.push("{" + open);
  keys.forEach((key, index) => {
    if (index > 0) out.push(sep);
    path.push(key);
    if (LONE_SURROGATE.test(key)) throw unsafe("object key holds a lone surrogate", path);
    out.push(JSON.stringify(key) + (inner === null ? ":" : ": "));
    write(obj[key], inner, depth + 1, path, out);
    path.pop();
  });
  out.push(close + "}");
}

/**
 * A {@link Sink} that joins its pieces into chunks of 4,096 pieces as it goes, so a large
 * document is held as a few long strings (about its own size) and not as one small string per
 * value, which took 7 to 13 times the output's size (spec/strict-json.md; issue 20).
 */
class Chunks implements Sink {
  private readonly pieces: string[] = [];
  private readonly chunks: string[] = [];

  push(text: string): void {
    this.pieces.push(text);
    if (this.pieces.length >= 4096) {
      this.chunks.push(this.pieces.join(""));
      this.pieces.length = 0;
    }
  }

  text(): string {
    if (this.chunks.length === 0) return this.pieces.join("");
    this.chunks.push(this.pieces.join(""));
    this.pieces.length = 0;
    return this.chunks.join("");
  }
}

/**
 * The RFC 8785 (JCS) text of `value`, without a newline. Throws `CaseError("unsafe_value")`
 * with a JSON pointer for non-finite numbers, lone surrogates, bigints outside +-(2^53-1),
 * non-JSON values (undefined, functions, class instances) and nesting deeper than 256.
 */
export function canonicalLine(value: unknown): string {
  const out = new Chunks();
  write(value, null, 0, [], out);
  return out.text();
}

/** Past this many characters {@link emitCanonicalLine} writes a line in pieces. */
const WHOLE_LINE_MAX = 8 * 1024 * 1024;

/**
 * Give the RFC 8785 text of `value` (as {@link canonicalLine}, without a newline) to `emit`:
 * in one piece up to 8 Mi characters, else in pieces of about `chunk` characters, so a
 * 268 MB answer is never one string (nor its copies) in memory. The value is checked whole
 * before anything is emitted: an unsafe value throws `CaseError("unsafe_value")` and emits
 * nothing.
 */
export function emitCanonicalLine(value: unknown, emit: (text: string) => void, chunk: number = 1 << 20): void {
  let pieces: string[] = [];
  let size = 0;
  const probe: Sink = {
    push(text: string): void {
      if (size > WHOLE_LINE_MAX) return; // too big for one piece: this pass only checks
      pieces.push(text);
      size += text.length;
      if (size > WHOLE_LINE_MAX) pieces = [];
    },
  };
  write(value, null, 0, [], probe);
  if (size <= WHOLE_LINE_MAX) {
    emit(pieces.join(""));
    return;
  }
  let buffered: string[] = [];
  let n = 0;
  const flushing: Sink = {
    push(text: string): void {
      buffered.push(text);
      n += text.length;
      if (n >= chunk) {
        emit(buffered.join(""));
        buffered = [];
        n = 0;
      }
    },
  };
  write(value, null, 0, [], flushing);
  if (buffered.length > 0) emit(buffered.join(""));
}

/**
 * The canonical text of a `.json` file: JCS key order, numbers and strings, indented by two
 * spaces, `": "` after keys, `,` and a newline between members, `{}`/`[]` for empty
 * containers, and a final newline.
 */
export function canonicalDocument(value: unknown): string {
  const out = new Chunks();
  write(value, "", 0, [], out);
  out.push("\n");
  return out.text();
}

/** The canonical text of a JSON Lines file: one canonical line per value, each ending in `\n`. */
export function canonicalJsonl(values: Iterable<unknown>): string {
  let out = "";
  for (const v of values) out += canonicalLine(v) + "\n";
  return out;
}
