/**
 * The parser of one JSON text held in a JS string (spec/strict-json.md), behind
 * {@link parse} in strictjson.ts: an iterative parser (an explicit stack, so hostile nesting
 * cannot overflow the call stack) that refuses duplicate keys, unsafe integers, lone
 * surrogates and nesting past {@link MAX_DEPTH} with a {@link Refusal} (offset and path).
 */

import type { JsonObject, JsonValue } from "./strictjson.js";

export const MAX_DEPTH = 256;
export const MAX_SAFE_INTEGER = Number.MAX_SAFE_INTEGER; // 2^53 - 1

/** Set a key on a parsed object; `__proto__` becomes an own data property, not a prototype. */
export function setOwn(obj: JsonObject, key: string, value: JsonValue): void {
  if (key === "__proto__") {
    Object.defineProperty(obj, key, { value, enumerable: true, writable: true, configurable: true });
  } else {
    obj[key] = value;
  }
}

/** Thrown inside the parser; turned into a CaseError by {@link parse}. */
export class Refusal {
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
export function parseText(text: string): JsonValue {
  return new TextParser(text).parse();
}

/**
 * The parser of one text: `i` is the offset read so far, `stack` the open containers. The
 * loop in {@link parse} is iterative; each read method handles one token.
 */
class TextParser {
  i = 0;
  readonly n: number;
  readonly stack: Frame[] = [];

  constructor(readonly text: string) {
    this.n = text.length;
  }

  parse(): JsonValue {
    const stack = this.stack;
    const text = this.text;
    let current = this.readValue();
    for (;;) {
      const top = stack[stack.length - 1];
      if (current === OPENED) {
        // a container was just opened: it may close at once
        if (top === undefined) throw new Error("unreachable");
        this.skipWs();
        const c = text.charCodeAt(this.i);
        if (top.kind === "array" ? c === 0x5d : c === 0x7d) {
          this.i++;
          stack.pop();
          current = top.value;
          continue;
        }
        if (top.kind === "object") this.readKey(top);
        current = this.readValue();
        continue;
      }
      if (top === undefined) break;
      if (top.kind === "array") top.value.push(current);
      else setOwn(top.value, top.key, current);
      this.skipWs();
      const c = text.charCodeAt(this.i);
      if (c === 0x2c) {
        this.i++;
        if (top.kind === "object") this.readKey(top);
        current = this.readValue();
      } else if (top.kind === "array" ? c === 0x5d : c === 0x7d) {
        this.i++;
        stack.pop();
        current = top.value;
      } else {
        this.unexpected(top.kind === "array" ? "',' or ']'" : "',' or '}'");
      }
    }
    this.skipWs();
    if (this.i < this.n) this.unexpected("the end of the text");
    return current;
  }

  path(extra?: string | number): Array<string | number> {
    const out: Array<string | number> = this.stack.map((f) => (f.kind === "array" ? f.value.length : f.key));
    if (extra !== undefined) out.push(extra);
    return out;
  }

  fail(message: string, at: number = this.i, where: Array<string | number> | null = null): never {
    throw new Refusal(message, at, where);
  }

  unexpected(expected: string): never {
    return this.fail(`not valid JSON: expected ${expected}, found ${describeChar(this.text, this.i)}`);
  }

  skipWs(): void {
    const text = this.text;
    const n = this.n;
    let i = this.i;
    while (i < n) {
      const c = text.charCodeAt(i);
      if (c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09) i++;
      else break;
    }
    this.i = i;
  }

  readString(): string {
    // text[i] is the opening quote; `i` is a local in this loop, kept in `this.i` around calls
    const text = this.text;
    const n = this.n;
    const open = this.i;
    let i = open + 1;
    let out = "";
    let start = i;
    for (;;) {
      if (i >= n) return this.fail("not valid JSON: unterminated string", open);
      const c = text.charCodeAt(i);
      if (c === 0x22) {
        out += text.slice(start, i);
        this.i = i + 1;
        return out;
      }
      if (c === 0x5c) {
        out += text.slice(start, i);
        this.i = i;
        out += this.readEscape();
        i = start = this.i;
        continue;
      }
      if (c < 0x20) this.fail(`not valid JSON: unescaped control character ${describeChar(text, i)} in a string`, i);
      if (c >= 0xd800 && c <= 0xdfff) {
        // Only reachable for text that did not come from UTF-8: a raw surrogate must be paired.
        const next = text.charCodeAt(i + 1);
        if (c > 0xdbff || !(next >= 0xdc00 && next <= 0xdfff)) this.fail("lone surrogate in a string", i);
        i += 2;
        continue;
      }
      i++;
    }
  }

  /** The character of the escape at `i` (a backslash); `i` moves past it. */
  readEscape(): string {
    const i = this.i;
    switch (this.text.charCodeAt(i + 1)) {
      case 0x22: this.i += 2; return '"';
      case 0x5c: this.i += 2; return "\\";
      case 0x2f: this.i += 2; return "/";
      case 0x62: this.i += 2; return "\b";
      case 0x66: this.i += 2; return "\f";
      case 0x6e: this.i += 2; return "\n";
      case 0x72: this.i += 2; return "\r";
      case 0x74: this.i += 2; return "\t";
      case 0x75: {
        const unit = this.readHex4(i + 2);
        if (unit >= 0xdc00 && unit <= 0xdfff) this.fail("lone surrogate in a string", i);
        if (unit < 0xd800 || unit > 0xdbff) {
          this.i += 6;
          return String.fromCharCode(unit);
        }
        const low = this.text.startsWith("\\u", i + 6) ? this.readHex4(i + 8) : -1;
        if (low < 0xdc00 || low > 0xdfff) this.fail("lone surrogate in a string", i);
        this.i += 12;
        return String.fromCharCode(unit, low);
      }
      default:
        return this.fail(`not valid JSON: invalid escape ${describeChar(this.text, i + 1)} in a string`);
    }
  }

  readHex4(at: number): number {
    const digits = this.text.slice(at, at + 4);
    if (!HEX4.test(digits)) this.fail("not valid JSON: \\u must be followed by four hex digits", at - 2);
    return parseInt(digits, 16);
  }

  readNumber(): number {
    NUMBER.lastIndex = this.i;
    const m = NUMBER.exec(this.text);
    // a sign without a digit (-Infinity) is located at the character after it (strict-json.md 2)
    if (m === null && this.text.charCodeAt(this.i) === 0x2d) this.fail("not valid JSON: no digit after sign", this.i + 1);
    if (m === null) return this.unexpected("a value");
    const token = m[0];
    const next = this.text.charCodeAt(this.i + token.length);
    if (/^-?0$/.test(token) && next >= 0x30 && next <= 0x39) {
      // located at the leading zero itself (strict-json.md 2)
      this.fail("not valid JSON: number with leading zero is not allowed", this.i + token.length - 1);
    }
    const value = Number(token);
    const isInteger = m[1] === undefined && m[2] === undefined;
    if (isInteger) {
      if (value > MAX_SAFE_INTEGER || value < -MAX_SAFE_INTEGER) {
        this.fail(`integer ${token} is outside +-(2^53-1)`, this.i, this.path());
      }
      this.i += token.length;
      return value === 0 ? 0 : value; // the integer token -0 is 0
    }
    if (!Number.isFinite(value)) this.fail(`number ${token} is out of the range of a double`, this.i); // line and column, as Python (strict-json.md 2)
    this.i += token.length;
    return value;
  }

  readLiteral(word: string, value: JsonValue): JsonValue {
    if (!this.text.startsWith(word, this.i)) return this.unexpected("a value");
    this.i += word.length;
    return value;
  }

  /** Read a value; a container is pushed on the stack and OPENED returned. */
  readValue(): JsonValue | typeof OPENED {
    this.skipWs();
    const c = this.text.charCodeAt(this.i);
    switch (c) {
      case 0x7b: // {
      case 0x5b: // [
        if (this.stack.length >= MAX_DEPTH) this.fail(`nesting deeper than ${MAX_DEPTH} levels`, this.i, this.path());
        this.stack.push(c === 0x7b ? { kind: "object", value: {}, key: "" } : { kind: "array", value: [] });
        this.i++;
        return OPENED;
      case 0x22:
        return this.readString();
      case 0x74:
        return this.readLiteral("true", true);
      case 0x66:
        return this.readLiteral("false", false);
      case 0x6e:
        return this.readLiteral("null", null);
      default:
        if (c === 0x2d || (c >= 0x30 && c <= 0x39)) return this.readNumber();
        return this.notJson();
    }
  }

  /** The refusal of a value that is not JSON (`NaN`, `Infinity` get their own message). */
  notJson(): never {
    const text = this.text;
    const i = this.i;
    if (text.startsWith("NaN", i) || text.startsWith("Infinity", i) || text.startsWith("-Infinity", i)) {
      this.fail(`${text.startsWith("NaN", i) ? "NaN" : "Infinity"} is not JSON`, i);
    }
    return this.unexpected("a value");
  }

  /** Read `"key" :` into the object frame on top of the stack. */
  readKey(frame: Frame & { kind: "object" }): void {
    this.skipWs();
    if (this.text.charCodeAt(this.i) !== 0x22) this.unexpected("a string key");
    const at = this.i;
    const key = this.readString();
    if (Object.hasOwn(frame.value, key)) {
      this.fail(`duplicate key ${JSON.stringify(key)}`, at, this.path(key).slice(0, -2).concat(key));
    }
    frame.key = key;
    this.skipWs();
    if (this.text.charCodeAt(this.i) !== 0x3a) this.unexpected("':' after a key");
    this.i++;
  }
}
