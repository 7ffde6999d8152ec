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
import { MAX_DEPTH, MAX_SAFE_INTEGER, Refusal, parseText, setOwn } from "./jsontext.js";

export type JsonValue = null | boolean | number | string | JsonValue[] | JsonObject;
export interface JsonObject {
  [key: string]: JsonValue;
}

/** Whether `v` is a JSON object (not null, not an array). */
export const isObj = (v: unknown): v is JsonObject => v !== null && typeof v === "object" && !Array.isArray(v);

export { MAX_DEPTH, MAX_SAFE_INTEGER, setOwn };
export const MAX_LINE_BYTES = 64 * 1024 * 1024;

export interface ParseOptions {
  /** Reason code of every refusal (default `json_invalid`). */
  code?: ReasonCode;
  /** File name for error locations. */
  file?: string;
  /** Line of the text in its file (a JSON Lines line); without it, errors give the line in the text. */
  line?: number;
}

const decoder = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true });

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
  // the column counts Unicode code points, not UTF-16 units (strict-json.md 2): a surrogate pair is one
  let column = 1;
  for (let k = lineStart; k < offset; k++) {
    const c = text.charCodeAt(k);
    if (!(c >= 0xdc00 && c <= 0xdfff && k > lineStart && isHigh(text.charCodeAt(k - 1)))) column++;
  }
  return [line, column];
}

function isHigh(c: number): boolean {
  return c >= 0xd800 && c <= 0xdbff;
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
    // A refusal of a value (a repeated key, an unsafe number) is located by its pointer and
    // its line in the text, a syntax error by its line; a JSON Lines line given is kept.
    throw new CaseError(code, message, {
      file: options.file,
      line: options.line ?? line,
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
