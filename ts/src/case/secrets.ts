/**
 * Credentials in cases: detection and stable redaction (spec/case-format.md, "Secrets").
 *
 * The rules are data, `spec/secrets/rules.json`, the file the Python implementation loads:
 * text rules `{kind, pattern, group}`, field rules `{kind, key_pattern, min_length}` and pair
 * rules `{when, kind, pattern}`. Patterns use the common subset of Python `re` and ECMAScript
 * regular expressions and are compiled here with the `u` flag, so both find the same spans.
 * A secret becomes `[REDACTED:<first 16 hex of sha256(secret UTF-8)>]`.
 */

import { createHash } from "node:crypto";
import { readFileSync } from "node:fs";
import { join } from "node:path";

import { CaseError, pointerJoin } from "../core/errors.js";
import { specDir } from "../core/resources.js";
import { type JsonObject, type JsonValue, isObj } from "../core/strictjson.js";
import { base64Runs, jsonUnescaped, sourceSpan, urlDecoded } from "./secret-forms.js";

interface Rule {
  kind: string;
  regex: RegExp;
  group: number;
  when?: string;
  /** lower-case strings of which every match holds one (none: the rule always runs) */
  keywords: string[];
}

interface Rules {
  text: Rule[];
  pairs: Rule[];
  fields: { kind: string; key: RegExp; minLength: number; value: RegExp | null }[];
  placeholder: RegExp;
  prefix: string;
  digits: number;
  suffix: string;
  /** decoded forms (10.2): the shortest base64 run decoded, how deep decoding nests */
  base64MinLength: number;
  maxDepth: number;
}

let cached: Rules | null = null;

/** The rules of `spec/secrets/rules.json` (read once). */
export function rules(): Rules {
  if (cached !== null) return cached;
  const doc = JSON.parse(readFileSync(join(specDir(), "secrets", "rules.json"), "utf8")) as {
    text_rules: { kind: string; pattern: string; group: number; keywords: string[] }[];
    pair_rules: { when: string; kind: string; pattern: string }[];
    field_rules: { kind: string; key_pattern: string; min_length: number; value_pattern?: string }[];
    placeholder: { prefix: string; hex_digits: number; suffix: string };
    placeholder_pattern: string;
    decoding: { base64_min_length: number; max_depth: number };
  };
  cached = {
    text: doc.text_rules.map((r) => ({
      kind: r.kind,
      regex: new RegExp(r.pattern, "gud"),
      group: r.group,
      keywords: r.keywords,
    })),
    pairs: doc.pair_rules.map((r) => ({
      kind: r.kind,
      regex: new RegExp(r.pattern, "gud"),
      group: 0,
      when: r.when,
      keywords: [],
    })),
    fields: doc.field_rules.map((r) => ({
      kind: r.kind,
      key: new RegExp(`^(?:${r.key_pattern})$`, "u"),
      minLength: r.min_length,
      value: r.value_pattern === undefined ? null : new RegExp(`^(?:${r.value_pattern})$`, "u"),
    })),
    placeholder: new RegExp(`^(?:${doc.placeholder_pattern})$`, "u"),
    prefix: doc.placeholder.prefix,
    digits: doc.placeholder.hex_digits,
    suffix: doc.placeholder.suffix,
    base64MinLength: doc.decoding.base64_min_length,
    maxDepth: doc.decoding.max_depth,
  };
  return cached;
}

/** Every kind the rules can report, sorted. */
export function kinds(): string[] {
  const r = rules();
  return [...new Set([...r.text.map((x) => x.kind), ...r.fields.map((x) => x.kind)])].sort();
}

/** `[REDACTED:<16 hex>]`: the secret's value alone decides it. */
export function placeholder(secret: string): string {
  const r = rules();
  return r.prefix + createHash("sha256").update(secret, "utf8").digest("hex").slice(0, r.digits) + r.suffix;
}

export function isPlaceholder(text: string): boolean {
  return rules().placeholder.test(text);
}

type Span = [number, number, string];

function apply(rule: Rule, text: string, taken: Span[]): void {
  rule.regex.lastIndex = 0;
  for (const m of text.matchAll(rule.regex)) {
    const range = m.indices?.[rule.group];
    if (range === undefined) continue;
    const [a, b] = range;
    if (a === b || taken.some(([x, y]) => a < y && x < b)) continue;
    if (isPlaceholder(text.slice(a, b))) continue;
    taken.push([a, b, rule.kind]);
  }
}

/**
 * `[start, end, kind]` of every secret in `text` (UTF-16 offsets), in order of position
 * (spec/case-format.md 10.2): those of the text as written, then those of its decoded forms
 * (JSON string escapes, URL percent-encoding, base64 runs) mapped back to the characters that
 * encode them, nested up to `max_depth` decodings; overlapping spans are joined into one.
 */
export function spans(text: string): Span[] {
  return merged(layered(text, rules(), 0));
}

function layered(text: string, r: Rules, depth: number): Span[] {
  const found = plainSpans(text);
  if (depth >= r.maxDepth) return found;
  for (const decoded of [jsonUnescaped(text), urlDecoded(text)]) {
    if (decoded === null) continue;
    for (const [a, b, kind] of layered(decoded.text, r, depth + 1)) found.push([...sourceSpan(decoded, a, b), kind]);
  }
  for (const [a, b, inner] of base64Runs(text, r.base64MinLength)) {
    const hits = merged(layered(inner, r, depth + 1));
    if (hits.length > 0) found.push([a, b, (hits[0] as Span)[2]]); // the run is the secret, whole
  }
  return found;
}

/** Spans by position, overlapping ones joined (the kind of the first, of the longest at a tie). */
function merged(found: Span[]): Span[] {
  const out: Span[] = [];
  for (const [a, b, kind] of [...found].sort((x, y) => x[0] - y[0] || y[1] - x[1])) {
    const last = out[out.length - 1];
    if (last !== undefined && a < last[1]) {
      if (b > last[1]) last[1] = b;
      continue;
    }
    out.push([a, b, kind]);
  }
  return out;
}

/** `[start, end, kind]` of every secret of `text` as written, in order of position. */
export function plainSpans(text: string): Span[] {
  const r = rules();
  const taken: Span[] = [];
  // a rule runs only on a text holding one of its keywords (lower-cased): a substring search
  // is one fast pass, where a pattern starting with a lookbehind is tried at every position
  const lowered = text.toLowerCase();
  for (const rule of r.text) {
    if (rule.keywords.some((k) => lowered.includes(k))) apply(rule, text, taken);
  }
  const found = new Set(taken.map((t) => t[2]));
  for (const rule of r.pairs) if (found.has(rule.when as string)) apply(rule, text, taken);
  return taken.sort((x, y) => x[0] - y[0]);
}

export function kindsIn(text: string): string[] {
  return spans(text).map((s) => s[2]);
}

export function redactText(text: string): string {
  const found = spans(text);
  if (found.length === 0) return text;
  let out = "";
  let pos = 0;
  for (const [a, b] of found) {
    out += text.slice(pos, a) + placeholder(text.slice(a, b));
    pos = b;
  }
  return out + text.slice(pos);
}

const codePoints = (s: string): number => {
  let n = 0;
  for (const _ of s) n++;
  return n;
};

/** The kind of a field rule that makes `value` (under `key`) a secret, or null. */
export function fieldKind(key: string, value: unknown): string | null {
  if (typeof value !== "string" || isPlaceholder(value)) return null;
  const length = codePoints(value);
  for (const f of rules().fields) {
    if (length >= f.minLength && f.key.test(key) && (f.value === null || f.value.test(value))) return f.kind;
  }
  return null;
}


/** `[kind, pointer]` of every secret of a JSON value; keys in JCS order, redacted in pointers. */
export function findInValue(value: unknown, path: (string | number)[] = []): [string, string][] {
  const out: [string, string][] = [];
  if (typeof value === "string") {
    for (const k of kindsIn(value)) out.push([k, pointerJoin(path)]);
  } else if (Array.isArray(value)) {
    value.forEach((item, i) => {
      path.push(i);
      out.push(...findInValue(item, path));
      path.pop();
    });
  } else if (isObj(value)) {
    for (const key of Object.keys(value).sort()) {
      const item = value[key];
      // a key holding a secret is written whole as its placeholder (10.4): its rest may be
      // the part of a credential no rule matched
      const inKey = kindsIn(key);
      path.push(inKey.length > 0 ? placeholder(key) : key);
      for (const k of inKey) out.push([k, pointerJoin(path)]);
      const field = fieldKind(key, item);
      if (field !== null) out.push([field, pointerJoin(path)]);
      else out.push(...findInValue(item, path));
      path.pop();
    }
  }
  return out;
}

/** A copy of a JSON value with every secret replaced (keys too); colliding keys are refused. */
export function redactValue(value: JsonValue): JsonValue {
  if (typeof value === "string") return redactText(value);
  if (Array.isArray(value)) return value.map(redactValue);
  if (isObj(value)) {
    const out: JsonObject = {};
    for (const [key, item] of Object.entries(value)) {
      const newKey = redactText(key);
      if (Object.hasOwn(out, newKey)) {
        throw new CaseError("secret_detected", "two object keys become the same placeholder when redacted", {
          hint: "remove the credential from the key by hand, or pass --allow-secrets",
        });
      }
      const redacted = fieldKind(key, item) !== null ? placeholder(item as string) : redactValue(item as JsonValue);
      Object.defineProperty(out, newKey, { value: redacted, enumerable: true, writable: true, configurable: true });
    }
    return out;
  }
  return value;
}

// ------------------------------------------------------------------------------ bytes

const utf8 = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true });

function isUtf8(data: Uint8Array): boolean {
  try {
    utf8.decode(data);
    return true;
  } catch {
    return false;
  }
}

function views(data: Uint8Array): string[] {
  const out = [isUtf8(data) ? "utf-8" : "latin-1"];
  if (data.length >= 2 && data.includes(0)) out.push("utf-16le", "utf-16be");
  return out;
}

function viewText(data: Uint8Array, view: string): string {
  if (view === "utf-8") return utf8.decode(data);
  const units: number[] = [];
  if (view === "latin-1") {
    for (const b of data) units.push(b);
  } else {
    const little = view === "utf-16le";
    for (let i = 0; i + 1 < data.length; i += 2) {
      const u = little ? (data[i] as number) | ((data[i + 1] as number) << 8) : ((data[i] as number) << 8) | (data[i + 1] as number);
      units.push(u >= 0xd800 && u <= 0xdfff ? 0xfffd : u);
    }
  }
  let text = "";
  for (let i = 0; i < units.length; i += 8192) text += String.fromCharCode(...units.slice(i, i + 8192));
  return text;
}

function encodeView(text: string, view: string): Uint8Array {
  if (view === "utf-8") return new TextEncoder().encode(text);
  if (view === "latin-1") return Uint8Array.from(text, (c) => c.charCodeAt(0));
  const out = new Uint8Array(text.length * 2);
  for (let i = 0; i < text.length; i++) {
    const u = text.charCodeAt(i);
    const [first, second] = view === "utf-16le" ? [u & 0xff, u >> 8] : [u >> 8, u & 0xff];
    out[2 * i] = first;
    out[2 * i + 1] = second;
  }
  return out;
}

/** `[view, kind]` of every secret of an artifact's bytes (spec/case-format.md, "Secrets"). */
export function scanBytes(data: Uint8Array): [string, string][] {
  return views(data).flatMap((v) => kindsIn(viewText(data, v)).map((k): [string, string] => [v, k]));
}

/** The bytes with every secret of every view replaced, view after view. */
export function redactBytes(input: Uint8Array): Uint8Array {
  let data = input;
  for (const view of views(data)) {
    const text = viewText(data, view);
    const found = spans(text);
    if (found.length === 0) continue;
    if (view === "utf-8" || view === "latin-1") {
      data = encodeView(redactText(text), view);
      continue;
    }
    const parts: Uint8Array[] = [];
    let pos = 0;
    for (const [a, b] of found) {
      parts.push(data.subarray(pos, 2 * a), encodeView(placeholder(text.slice(a, b)), view));
      pos = 2 * b;
    }
    parts.push(data.subarray(pos));
    data = Buffer.concat(parts);
  }
  return data === input ? input : new Uint8Array(data);
}

/** A credential-like value: where it is and its kind, never the value. */
export interface Finding {
  kind: string;
  file: string | null;
  pointer?: string;
  line?: number;
  view?: string;
}

export function findingWhere(f: Finding): string {
  const parts = [(f.file ?? "<value>") + (f.line !== undefined ? `:${f.line}` : "")];
  if (f.pointer !== undefined) parts.push(f.pointer || "/");
  if (f.view !== undefined) parts.push(`as ${f.view}`);
  return parts.join(": ");
}

function lines(data: Uint8Array): Uint8Array[] {
  // Python's bytes.splitlines(): \n, \r and \r\n end a line
  const out: Uint8Array[] = [];
  let start = 0;
  for (let i = 0; i < data.length; i++) {
    const c = data[i];
    if (c === 0x0a || c === 0x0d) {
      out.push(data.subarray(start, i));
      if (c === 0x0d && data[i + 1] === 0x0a) i++;
      start = i + 1;
    }
  }
  if (start < data.length) out.push(data.subarray(start));
  return out;
}

function parseJson(data: Uint8Array): { ok: true; value: unknown } | { ok: false } {
  try {
    return { ok: true, value: JSON.parse(utf8.decode(data)) };
  } catch {
    return { ok: false };
  }
}

/** Findings in a case's files, by file name (spec/case-format.md, "Secrets"). */
export function scanFiles(files: ReadonlyMap<string, Uint8Array>): Finding[] {
  const out: Finding[] = [];
  for (const name of [...files.keys()].sort()) {
    const data = files.get(name) as Uint8Array;
    const bytesOf = (b: Uint8Array, line?: number): void => {
      for (const [view, kind] of scanBytes(b)) out.push({ kind, file: name, ...(line !== undefined ? { line } : {}), view });
    };
    if (name.endsWith(".jsonl")) {
      lines(data).forEach((line, i) => {
        const parsed = parseJson(line);
        if (!parsed.ok) return bytesOf(line, i + 1);
        for (const [kind, pointer] of findInValue(parsed.value)) out.push({ kind, file: name, pointer, line: i + 1 });
      });
    } else if (name.endsWith(".json")) {
      const parsed = parseJson(data);
      if (!parsed.ok) bytesOf(data);
      else for (const [kind, pointer] of findInValue(parsed.value)) out.push({ kind, file: name, pointer });
    } else {
      bytesOf(data);
    }
  }
  return out;
}
