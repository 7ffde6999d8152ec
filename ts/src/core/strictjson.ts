/**
 * Strict JSON reading (spec/strict-json.md).
 *
 * `parse` accepts exactly the JSON that every implementation reads the same way and refuses,
 * with a {@link CaseError} carrying the caller's reason code (`log_invalid` for logs,
 * `json_invalid` for other files), a line and a JSON pointer where one applies:
 *
 * - invalid UTF-8, a byte order mark, lone surrogates (escaped or raw);
 * - `NaN`, `Infinity` and anything else that is not RFC 8259 JSON;
 * - an integer token outside +-(2^53-1); a number token that overflows a double;
 * - duplicate object keys;
 * - nesting deeper than {@link MAX_DEPTH} containers.
 *
 * `JSON.parse` cannot see duplicate keys, big integers or escaped lone surrogates, so this is a
 * hand-written parser. It is iterative (an explicit stack), so hostile nesting cannot overflow
 * the call stack. JSON Lines reading adds the line rules: no blank lines, no CR line ends, no
 * BOM on line 1, no line over {@link MAX_LINE_BYTES}.
 */

import { closeSync, readSync } from "node:fs";

import { CaseError, pointerJoin, type ReasonCode } from "./errors.js";
import { MAX_CASE_BYTES, MAX_LOG_BYTES, openRegular, readRegular } from "./files.js";

export type JsonValue = null | boolean | number | string | JsonValue[] | JsonObject;
export interface JsonObject {
  [key: string]: JsonValue;
}

export const MAX_DEPTH = 256;
export const MAX_LINE_BYTES = 64 * 1024 * 1024;
export const MAX_SAFE_INTEGER = Number.MAX_SAFE_INTEGER; // 2^53 - 1

export interface ParseOptions {
  /** Reason code of every refusal (default `json_invalid`). */
  code?: ReasonCode;
  /** File name for error locations. */
  file?: string;
  /** Line of the text in its file (a JSON Lines line); without it, errors give the line in the text. */
  line?: number;
}

const decoder = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true });

/** Set a key on a parsed object; `__proto__` becomes an own data property, not a prototype. */
export function setOwn(obj: JsonObject, key: string, value: JsonValue): void {
  if (key === "__proto__") {
    Object.defineProperty(obj, key, { value, enumerable: true, writable: true, configurable: true });
  } else {
    obj[key] = value;
  }
}

/** Thrown inside the parser; turned into a CaseError by {@link parse}. */
class Refusal {
  constructor(
    readonly message: string,
    readonly offset: number,
    readonly path: ReadonlyArray<string | number> | null,
  ) {}
}

type Frame =
  | { readonly kind: "array"; readonly value: JsonValue[] }
  | { readonly kind: "object"; readonly value: JsonObject; key: string };

const OPENED: unique symbol = Symbol("opened");
const NUMBER = /-?(?:0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?/y;
const HEX4 = /^[0-9a-fA-F]{4}$/;

function describeChar(text: string, i: number): string {
  if (i >= text.length) return "end of text";
  const cp = text.codePointAt(i) ?? 0;
  if (cp < 0x20 || cp === 0x7f || cp === 0xfeff) return `U+${cp.toString(16).toUpperCase().padStart(4, "0")}`;
  return JSON.stringify(String.fromCodePoint(cp));
}

/** Parse one JSON text held in a JS string. Throws {@link Refusal}. */
function parseText(text: string): JsonValue {
  const n = text.length;
  const stack: Frame[] = [];
  let i = 0;

  const path = (extra?: string | number): Array<string | number> => {
    const out: Array<string | number> = stack.map((f) => (f.kind === "array" ? f.value.length : f.key));
    if (extra !== undefined) out.push(extra);
    return out;
  };
  const fail = (message: string, at: number = i, where: Array<string | number> | null = null): never => {
    throw new Refusal(message, at, where);
  };
  const unexpected = (expected: string): never =>
    fail(`not valid JSON: expected ${expected}, found ${describeChar(text, i)}`);

  const skipWs = (): void => {
    while (i < n) {
      const c = text.charCodeAt(i);
      if (c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09) i++;
      else break;
    }
  };

  const readString = (): string => {
    // text[i] is the opening quote
    const open = i;
    i++;
    let out = "";
    let start = i;
    for (;;) {
      if (i >= n) return fail("not valid JSON: unterminated string", open);
      const c = text.charCodeAt(i);
      if (c === 0x22) {
        out += text.slice(start, i);
        i++;
        return out;
      }
      if (c === 0x5c) {
        out += text.slice(start, i);
        const e = text.charCodeAt(i + 1);
        switch (e) {
          case 0x22: out += '"'; i += 2; break;
          case 0x5c: out += "\\"; i += 2; break;
          case 0x2f: out += "/"; i += 2; break;
          case 0x62: out += "\b"; i += 2; break;
          case 0x66: out += "\f"; i += 2; break;
          case 0x6e: out += "\n"; i += 2; break;
          case 0x72: out += "\r"; i += 2; break;
          case 0x74: out += "\t"; i += 2; break;
          case 0x75: {
            const unit = readHex4(i + 2);
            if (unit >= 0xdc00 && unit <= 0xdfff) fail("lone surrogate in a string", i, path());
            if (unit >= 0xd800 && unit <= 0xdbff) {
              const low = text.startsWith("\\u", i + 6) ? readHex4(i + 8) : -1;
              if (low < 0xdc00 || low > 0xdfff) fail("lone surrogate in a string", i, path());
              out += String.fromCharCode(unit, low);
              i += 12;
            } else {
              out += String.fromCharCode(unit);
              i += 6;
            }
            break;
          }
          default:
            fail(`not valid JSON: invalid escape ${describeChar(text, i + 1)} in a string`);
        }
        start = i;
        continue;
      }
      if (c < 0x20) fail(`not valid JSON: unescaped control character ${describeChar(text, i)} in a string`);
      if (c >= 0xd800 && c <= 0xdfff) {
        // Only reachable for text that did not come from UTF-8: a raw surrogate must be paired.
        const next = text.charCodeAt(i + 1);
        if (c > 0xdbff || !(next >= 0xdc00 && next <= 0xdfff)) fail("lone surrogate in a string", i, path());
        i += 2;
        continue;
      }
      i++;
    }
  };

  const readHex4 = (at: number): number => {
    const digits = text.slice(at, at + 4);
    if (!HEX4.test(digits)) fail("not valid JSON: \\u must be followed by four hex digits", at - 2);
    return parseInt(digits, 16);
  };

  const readNumber = (): number => {
    NUMBER.lastIndex = i;
    const m = NUMBER.exec(text);
    if (m === null) return unexpected("a value");
    const token = m[0];
    const value = Number(token);
    const isInteger = m[1] === undefined && m[2] === undefined;
    if (isInteger) {
      if (value > MAX_SAFE_INTEGER || value < -MAX_SAFE_INTEGER) {
        fail(`integer ${token} is outside +-(2^53-1)`, i, path());
      }
      i += token.length;
      return value === 0 ? 0 : value; // the integer token -0 is 0
    }
    if (!Number.isFinite(value)) fail(`number ${token} is out of the range of a double`, i, path());
    i += token.length;
    return value;
  };

  const readLiteral = (word: string, value: JsonValue): JsonValue => {
    if (!text.startsWith(word, i)) return unexpected("a value");
    i += word.length;
    return value;
  };

  /** Read a value; a container is pushed on the stack and OPENED returned. */
  const readValue = (): JsonValue | typeof OPENED => {
    skipWs();
    const c = text.charCodeAt(i);
    switch (c) {
      case 0x7b: // {
      case 0x5b: // [
        if (stack.length >= MAX_DEPTH) fail(`nesting deeper than ${MAX_DEPTH} levels`, i, path());
        stack.push(c === 0x7b ? { kind: "object", value: {}, key: "" } : { kind: "array", value: [] });
        i++;
        return OPENED;
      case 0x22:
        return readString();
      case 0x74:
        return readLiteral("true", true);
      case 0x66:
        return readLiteral("false", false);
      case 0x6e:
        return readLiteral("null", null);
      default:
        if (c === 0x2d || (c >= 0x30 && c <= 0x39)) return readNumber();
        if (text.startsWith("NaN", i) || text.startsWith("Infinity", i) || text.startsWith("-Infinity", i)) {
          fail(`${text.startsWith("NaN", i) ? "NaN" : "Infinity"} is not JSON`, i, path());
        }
        return unexpected("a value");
    }
  };

  /** Read `"key" :` into the object frame on top of the stack. */
  const readKey = (frame: Frame & { kind: "object" }): void => {
    skipWs();
    if (text.charCodeAt(i) !== 0x22) unexpected("a string key");
    const at = i;
    const key = readString();
    if (Object.hasOwn(frame.value, key)) {
      fail(`duplicate key ${JSON.stringify(key)}`, at, path(key).slice(0, -2).concat(key));
    }
    frame.key = key;
    skipWs();
    if (text.charCodeAt(i) !== 0x3a) unexpected("':' after a key");
    i++;
  };

  let current = readValue();
  for (;;) {
    const top = stack[stack.length - 1];
    if (current === OPENED) {
      // a container was just opened: it may close at once
      if (top === undefined) throw new Error("unreachable");
      skipWs();
      const c = text.charCodeAt(i);
      if (top.kind === "array" ? c === 0x5d : c === 0x7d) {
        i++;
        stack.pop();
        current = top.value;
        continue;
      }
      if (top.kind === "object") readKey(top);
      current = readValue();
      continue;
    }
    if (top === undefined) break;
    if (top.kind === "array") top.value.push(current);
    else setOwn(top.value, top.key, current);
    skipWs();
    const c = text.charCodeAt(i);
    if (c === 0x2c) {
      i++;
      if (top.kind === "object") readKey(top);
      current = readValue();
    } else if (top.kind === "array" ? c === 0x5d : c === 0x7d) {
      i++;
      stack.pop();
      current = top.value;
    } else {
      unexpected(top.kind === "array" ? "',' or ']'" : "',' or '}'");
    }
  }
  skipWs();
  if (i < n) unexpected("the end of the text");
  return current;
}

function hasBom(data: Uint8Array): boolean {
  return data.length >= 3 && data[0] === 0xef && data[1] === 0xbb && data[2] === 0xbf;
}

function lineAndColumn(text: string, offset: number): [number, number] {
  let line = 1;
  let lineStart = 0;
  for (let k = text.indexOf("\n"); k !== -1 && k < offset; k = text.indexOf("\n", k + 1)) {
    line++;
    lineStart = k + 1;
  }
  return [line, offset - lineStart + 1];
}

/**
 * Parse one strict JSON text from UTF-8 bytes. Returns the value; throws
 * `CaseError(options.code ?? "json_invalid")` with file, line and pointer for every refusal.
 */
export function parse(data: Uint8Array, options: ParseOptions = {}): JsonValue {
  const code = options.code ?? "json_invalid";
  const where = { file: options.file, line: options.line };
  if (hasBom(data)) throw new CaseError(code, "byte order mark at the start of the text", where);
  let text: string;
  try {
    text = decoder.decode(data);
  } catch {
    throw new CaseError(code, "invalid UTF-8", where);
  }
  try {
    return parseText(text);
  } catch (err) {
    if (!(err instanceof Refusal)) throw err;
    const [line, column] = lineAndColumn(text, err.offset);
    const pointer = err.path === null ? undefined : pointerJoin(err.path);
    const message = err.path === null ? `${err.message} (column ${column})` : err.message;
    // A refusal of a value (a repeated key, an unsafe number) is located by its pointer, a
    // syntax error by its line in the text; a JSON Lines line given by the caller is kept.
    throw new CaseError(code, message, {
      file: options.file,
      line: options.line ?? (pointer === undefined ? line : undefined),
      pointer,
    });
  }
}

/** Parse strict JSON from a string (encoded to UTF-8 first, so the same rules apply). */
export function parseString(text: string, options: ParseOptions = {}): JsonValue {
  return parse(new TextEncoder().encode(text), options);
}

/** Read a whole `.json` file strictly; a missing file or an empty one refuses with `code`. */
export function readJsonFile(
  path: string,
  options: { code?: ReasonCode; limit?: number; limitCode?: ReasonCode; specialCode?: ReasonCode; followSymlinks?: boolean } = {},
): JsonValue {
  const code = options.code ?? "json_invalid";
  const data = readRegular(path, {
    code,
    limit: options.limit ?? MAX_CASE_BYTES,
    limitCode: options.limitCode ?? "case_too_large",
    specialCode: options.specialCode ?? "invalid_request",
    followSymlinks: options.followSymlinks ?? true,
  });
  if (isBlank(data, 0, data.length)) throw new CaseError(code, "empty file", { file: path, line: 1 });
  return parse(data, { code, file: path });
}

// ------------------------------------------------------------------------------ JSON Lines

/** One line of a JSON Lines source: its body, or the line rule it breaks. */
export type LineItem =
  | { readonly line: number; readonly body: Uint8Array; readonly error?: undefined }
  | { readonly line: number; readonly body?: undefined; readonly error: CaseError };

export type LineSource = string | Uint8Array;

export interface LineOptions {
  code?: ReasonCode;
  /** Name used in error locations (default: the path, or `<bytes>`). */
  name?: string;
  /** Bytes read at a time from a file (default 1 MiB). */
  chunkSize?: number;
  /** Longest line body in bytes (default {@link MAX_LINE_BYTES}). */
  maxLineBytes?: number;
}

function isBlank(data: Uint8Array, start: number, end: number): boolean {
  for (let k = start; k < end; k++) {
    const b = data[k];
    // bytes.strip() whitespace: space, \t, \n, \v, \f, \r
    if (b !== 0x20 && b !== 0x09 && b !== 0x0a && b !== 0x0b && b !== 0x0c && b !== 0x0d) return false;
  }
  return true;
}

function* fileChunks(path: string, chunkSize: number, code: ReasonCode): Generator<Uint8Array> {
  const fd = openRegular(path, { code, limit: MAX_LOG_BYTES });
  try {
    for (;;) {
      const buf = new Uint8Array(chunkSize);
      const got = readSync(fd, buf, 0, chunkSize, null);
      if (got === 0) return;
      yield got === chunkSize ? buf : buf.subarray(0, got);
    }
  } finally {
    closeSync(fd);
  }
}

export function sourceName(source: LineSource, name?: string): string {
  return name ?? (typeof source === "string" ? source : "<bytes>");
}

/**
 * Yield each line of a JSON Lines source (a path, read in chunks, or bytes) with its 1-based
 * number: the body without the `\n`, or a CaseError for a line that breaks a line rule (a line
 * over 64 MiB, a CR line end, a BOM on line 1, a blank line), so that a validator can go on.
 */
export function* iterLines(source: LineSource, options: LineOptions = {}): Generator<LineItem> {
  const code = options.code ?? "log_invalid";
  const name = sourceName(source, options.name);
  const max = options.maxLineBytes ?? MAX_LINE_BYTES;
  const chunks: Iterable<Uint8Array> =
    typeof source === "string" ? fileChunks(source, options.chunkSize ?? 1 << 20, code) : [source];

  let lineno = 0;
  let parts: Uint8Array[] = [];
  let partsLength = 0;
  let tooLong = false;

  const finish = (): LineItem => {
    lineno++;
    if (tooLong) return { line: lineno, error: new CaseError(code, "line longer than 64 MiB", { file: name, line: lineno }) };
    const body = parts.length === 1 ? (parts[0] as Uint8Array) : concat(parts, partsLength);
    const at = { file: name, line: lineno };
    if (body.length > 0 && body[body.length - 1] === 0x0d) {
      return { line: lineno, error: new CaseError(code, "CR line end; lines end with \\n only", at) };
    }
    if (lineno === 1 && hasBom(body)) {
      return { line: lineno, error: new CaseError(code, "byte order mark at the start of the file", at) };
    }
    if (isBlank(body, 0, body.length)) return { line: lineno, error: new CaseError(code, "blank line", at) };
    return { line: lineno, body };
  };

  const add = (piece: Uint8Array): void => {
    if (tooLong || piece.length === 0) return;
    if (partsLength + piece.length > max) {
      tooLong = true;
      parts = [];
      partsLength = 0;
      return;
    }
    parts.push(piece);
    partsLength += piece.length;
  };

  let open = false; // bytes of an unfinished line were seen
  for (const chunk of chunks) {
    let start = 0;
    for (;;) {
      const nl = chunk.indexOf(0x0a, start);
      if (nl === -1) {
        if (start < chunk.length) {
          add(chunk.subarray(start));
          open = true;
        }
        break;
      }
      add(chunk.subarray(start, nl));
      yield finish();
      parts = [];
      partsLength = 0;
      tooLong = false;
      open = false;
      start = nl + 1;
    }
  }
  if (open) yield finish();
}

function concat(parts: Uint8Array[], length: number): Uint8Array {
  const out = new Uint8Array(length);
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  return out;
}

/**
 * Yield `[line, value]` for each line of a strict JSON Lines source. Throws `CaseError(code)`
 * with the file and line at the first line-rule break or parse refusal.
 */
export function* iterJsonl(source: LineSource, options: LineOptions = {}): Generator<[number, JsonValue]> {
  const code = options.code ?? "log_invalid";
  const name = sourceName(source, options.name);
  for (const item of iterLines(source, { ...options, code })) {
    if (item.error !== undefined) throw item.error;
    yield [item.line, parse(item.body, { code, file: name, line: item.line })];
  }
}
