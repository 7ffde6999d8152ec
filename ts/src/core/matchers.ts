/**
 * Event matchers (spec/matchers.md): the patterns a case uses to look for events.
 *
 * A matcher `{type, data?, seq?, actor_kind?, epoch?, branch_id?, critical?}` matches a
 * canonical envelope when `type` and every envelope key it names are equal to the event's
 * (section 4) and its `data` matches the event's data by the subset rule (section 5).
 * Numbers compare by value (`1` is `1.0`, `-0` is `0`), booleans are never numbers, strings
 * compare by code points, `null` matches only `null`.
 */

import { canonicalLine } from "./canonical.js";
import { dialectNames, getDialect } from "./dialects.js";
import { CaseError, pointerJoin } from "./errors.js";
import { codePointCompare, quote } from "./texts.js";
import { MAX_SAFE_INTEGER } from "./strictjson.js";

/** Envelope keys a matcher may name besides `type`, with the kind of value each takes. */
export const ENVELOPE_KEYS = {
  seq: "integer",
  actor_kind: "string",
  epoch: "integer",
  branch_id: "string",
  critical: "boolean",
} as const;

/** Every key a matcher may hold, in code point order. */
export const MATCHER_KEYS: readonly string[] = ["actor_kind", "branch_id", "critical", "data", "epoch", "seq", "type"];

const EXACT_KEYS = ["type", ...Object.keys(ENVELOPE_KEYS)] as const;

/** A matcher as read from a case (validated by {@link validateMatcher}). */
export type Matcher = Record<string, unknown> & { type: string };
/** A canonical event envelope, or anything object-like to compare against. */
export type EventLike = object;

type Kind = "null" | "boolean" | "number" | "string" | "array" | "object" | "other";

function isPlainObject(value: object): boolean {
  const proto = Object.getPrototypeOf(value) as unknown;
  return proto === Object.prototype || proto === null;
}

function kindOf(value: unknown): Kind {
  if (value === null) return "null";
  switch (typeof value) {
    case "boolean":
      return "boolean";
    case "number":
      return "number";
    case "string":
      return "string";
    case "object":
      if (Array.isArray(value)) return "array";
      return isPlainObject(value) ? "object" : "other";
    default:
      return "other";
  }
}

const has = (obj: unknown, key: string): boolean => Object.hasOwn(obj as object, key);
const get = (obj: unknown, key: string): unknown => (obj as Record<string, unknown>)[key];

function scalarEqual(kind: Kind, a: unknown, b: unknown): boolean {
  if (kind === "null") return true;
  if (kind === "other") return false; // not a JSON value: equal to nothing
  return a === b; // numbers by value (-0 === 0; NaN equals nothing), strings by code units = code points
}

// ------------------------------------------------------------------------------ values

/** Whether `actual` matches `expected` by the subset rule (section 5). Never throws. */
export function valueMatches(expected: unknown, actual: unknown): boolean {
  const kind = kindOf(expected);
  if (kind !== kindOf(actual)) return false;
  if (kind === "object") {
    for (const [key, value] of Object.entries(expected as object)) {
      if (!has(actual, key) || !valueMatches(value, get(actual, key))) return false;
    }
    return true;
  }
  if (kind === "array") {
    const e = expected as unknown[];
    const a = actual as unknown[];
    return e.length === a.length && e.every((item, i) => valueMatches(item, a[i]));
  }
  return scalarEqual(kind, expected, actual);
}

/** Full equality of two JSON values (section 6): the subset rule both ways. Never throws. */
export function valuesEqual(a: unknown, b: unknown): boolean {
  const kind = kindOf(a);
  if (kind !== kindOf(b)) return false;
  if (kind === "object") {
    const entries = Object.entries(a as object);
    if (entries.length !== Object.keys(b as object).length) return false;
    return entries.every(([key, value]) => has(b, key) && valuesEqual(value, get(b, key)));
  }
  if (kind === "array") {
    const x = a as unknown[];
    const y = b as unknown[];
    return x.length === y.length && x.every((item, i) => valuesEqual(item, y[i]));
  }
  return scalarEqual(kind, a, b);
}

// ------------------------------------------------------------------------------ validation

const MAX_RENDER = 80;

/** Compact canonical JSON for messages, cut to about 80 characters. */
export function render(value: unknown): string {
  let text: string;
  try {
    text = canonicalLine(value);
  } catch (err) {
    if (!(err instanceof CaseError)) throw err;
    text = quote(value);
  }
  return text.length > MAX_RENDER ? text.slice(0, MAX_RENDER - 3) + "..." : text;
}

function renderFull(value: unknown): string {
  try {
    return canonicalLine(value);
  } catch (err) {
    if (!(err instanceof CaseError)) throw err;
    return quote(value);
  }
}

function invalid(message: string, pointer: string): CaseError {
  return new CaseError("invalid_request", message, { pointer });
}

const below = (pointer: string, key: string | number): string => pointer + pointerJoin([key]);

function typeName(value: unknown): string {
  if (value === null) return "null";
  switch (typeof value) {
    case "boolean":
      return "bool";
    case "number":
      return Number.isInteger(value) ? "int" : "float";
    case "string":
      return "str";
    case "object":
      return Array.isArray(value) ? "list" : isPlainObject(value) ? "dict" : (value.constructor?.name ?? "object");
    default:
      return typeof value;
  }
}

/** Refuse what is not a JSON value that every implementation reads the same way. */
function checkJson(value: unknown, pointer: string): void {
  const kind = kindOf(value);
  if (kind === "object") {
    for (const [key, item] of Object.entries(value as object)) checkJson(item, below(pointer, key));
  } else if (kind === "array") {
    (value as unknown[]).forEach((item, index) => checkJson(item, below(pointer, index)));
  } else if (kind === "number") {
    // Integers beyond 2^53-1 cannot come from the strict reader, so a large integral number
    // here is a double (Python would see a float) and is accepted like one.
    if (!Number.isFinite(value)) throw invalid("a number is not finite", pointer);
  } else if (kind === "other") {
    throw invalid(`a ${typeName(value)} is not a JSON value`, pointer);
  }
}

function isCount(value: unknown): boolean {
  return typeof value === "number" && Number.isInteger(value) && value >= 0 && value <= MAX_SAFE_INTEGER;
}

// difflib.get_close_matches(word, possibilities, n=1, cutoff=0.6), as CPython computes it.
function matchingSize(a: string[], b: string[]): number {
  const b2j = new Map<string, number[]>();
  b.forEach((ch, j) => {
    const list = b2j.get(ch);
    if (list === undefined) b2j.set(ch, [j]);
    else list.push(j);
  });
  if (b.length >= 200) {
    const ntest = Math.floor(b.length / 100) + 1;
    for (const [ch, idxs] of [...b2j]) if (idxs.length > ntest) b2j.delete(ch);
  }
  const longest = (alo: number, ahi: number, blo: number, bhi: number): [number, number, number] => {
    let besti = alo;
    let bestj = blo;
    let bestsize = 0;
    let j2len = new Map<number, number>();
    for (let i = alo; i < ahi; i++) {
      const next = new Map<number, number>();
      for (const j of b2j.get(a[i] as string) ?? []) {
        if (j < blo) continue;
        if (j >= bhi) break;
        const k = (j2len.get(j - 1) ?? 0) + 1;
        next.set(j, k);
        if (k > bestsize) {
          besti = i - k + 1;
          bestj = j - k + 1;
          bestsize = k;
        }
      }
      j2len = next;
    }
    while (besti > alo && bestj > blo && a[besti - 1] === b[bestj - 1]) {
      besti--;
      bestj--;
      bestsize++;
    }
    while (besti + bestsize < ahi && bestj + bestsize < bhi && a[besti + bestsize] === b[bestj + bestsize]) bestsize++;
    return [besti, bestj, bestsize];
  };
  let total = 0;
  const queue: Array<[number, number, number, number]> = [[0, a.length, 0, b.length]];
  for (let q = queue.pop(); q !== undefined; q = queue.pop()) {
    const [alo, ahi, blo, bhi] = q;
    const [i, j, k] = longest(alo, ahi, blo, bhi);
    if (k === 0) continue;
    total += k;
    if (alo < i && blo < j) queue.push([alo, i, blo, j]);
    if (i + k < ahi && j + k < bhi) queue.push([i + k, ahi, j + k, bhi]);
  }
  return total;
}

function closeMatch(word: string, possibilities: readonly string[], cutoff = 0.6): string | null {
  const b = Array.from(word);
  let best: [number, string] | null = null;
  for (const x of possibilities) {
    const a = Array.from(x);
    const total = a.length + b.length;
    const ratio = total === 0 ? 1 : (2 * matchingSize(a, b)) / total;
    if (ratio < cutoff) continue;
    if (best === null || ratio > best[0] || (ratio === best[0] && codePointCompare(x, best[1]) > 0)) best = [ratio, x];
  }
  return best === null ? null : best[1];
}

function suggest(key: string): string {
  try {
    for (const name of dialectNames()) {
      for (const [canonical, spelled] of Object.entries(getDialect(name).envelope)) {
        if (key === spelled && MATCHER_KEYS.includes(canonical)) {
          return `; matchers use the threads-py spelling ${quote(canonical)} (${quote(key)} is how ${name} spells it)`;
        }
      }
    }
  } catch (err) {
    if (!(err instanceof CaseError)) throw err;
  }
  const close = closeMatch(key, MATCHER_KEYS);
  return close === null ? "" : `; did you mean ${quote(close)}?`;
}

/**
 * Return `matcher` if it is a valid matcher (section 2), else throw
 * `CaseError("invalid_request")` with a pointer below `pointer` (checks in the order of
 * section 2.4).
 */
export function validateMatcher(matcher: unknown, pointer = ""): Matcher {
  if (kindOf(matcher) !== "object") {
    const what = matcher === null ? "null" : Array.isArray(matcher) ? "an array" : `a ${typeName(matcher)}`;
    throw invalid(`a matcher must be a JSON object, not ${what}`, pointer);
  }
  const m = matcher as Record<string, unknown>;
  for (const key of Object.keys(m).sort(codePointCompare)) {
    if (!MATCHER_KEYS.includes(key)) {
      throw invalid(
        `unknown matcher key ${quote(key)}; allowed: ${MATCHER_KEYS.join(", ")}` + suggest(key),
        below(pointer, key),
      );
    }
  }
  if (!has(m, "type")) throw invalid('a matcher needs a "type" (the event type to look for)', pointer);
  for (const key of ["type", "actor_kind", "branch_id"]) {
    if (has(m, key) && !(typeof m[key] === "string" && m[key] !== "")) {
      throw invalid(`${key} must be a non-empty string, not ${render(m[key])}`, below(pointer, key));
    }
  }
  for (const key of ["seq", "epoch"]) {
    if (has(m, key) && !isCount(m[key])) {
      throw invalid(`${key} must be an integer from 0 to 2^53-1, not ${render(m[key])}`, below(pointer, key));
    }
  }
  if (has(m, "critical") && typeof m["critical"] !== "boolean") {
    throw invalid(`critical must be true or false, not ${render(m["critical"])}`, below(pointer, "critical"));
  }
  if (has(m, "data")) checkJson(m["data"], below(pointer, "data"));
  return m as Matcher;
}

// ------------------------------------------------------------------------------ matching

function matchesValid(matcher: Matcher, event: EventLike): boolean {
  for (const key of EXACT_KEYS) {
    if (has(matcher, key) && (!has(event, key) || !valuesEqual(matcher[key], get(event, key)))) return false;
  }
  return !has(matcher, "data") || (has(event, "data") && valueMatches(matcher["data"], get(event, "data")));
}

/** Whether a canonical envelope matches `matcher` (section 4); `invalid_request` for a bad matcher. */
export function matches(matcher: unknown, event: EventLike): boolean {
  return matchesValid(validateMatcher(matcher), event);
}

/** One place where an event (or a value) does not fit (section 7). */
export interface Difference {
  pointer: string;
  expected: unknown;
  actual: unknown;
  missing: boolean;
  extra: boolean;
}

/** `/data/is_error expected false, got true` (or `..., missing` / `not expected, got ...`). */
export function renderDifference(d: Difference): string {
  const where = d.pointer || "/";
  if (d.missing) return `${where} expected ${render(d.expected)}, missing`;
  if (d.extra) return `${where} not expected, got ${render(d.actual)}`;
  return `${where} expected ${render(d.expected)}, got ${render(d.actual)}`;
}

const diff = (pointer: string, expected: unknown, actual: unknown, missing = false, extra = false): Difference => ({
  pointer,
  expected,
  actual,
  missing,
  extra,
});

function walk(expected: unknown, actual: unknown, path: Array<string | number>, subset: boolean, out: Difference[]): void {
  const kind = kindOf(expected);
  if (kind !== kindOf(actual)) {
    out.push(diff(pointerJoin(path), expected, actual));
  } else if (kind === "object") {
    const keys = new Set(Object.keys(expected as object));
    if (!subset) for (const k of Object.keys(actual as object)) keys.add(k);
    for (const key of [...keys].sort(codePointCompare)) {
      path.push(key);
      if (!has(actual, key)) out.push(diff(pointerJoin(path), get(expected, key), null, true));
      else if (!has(expected, key)) out.push(diff(pointerJoin(path), null, get(actual, key), false, true));
      else walk(get(expected, key), get(actual, key), path, subset, out);
      path.pop();
    }
  } else if (kind === "array") {
    const e = expected as unknown[];
    const a = actual as unknown[];
    if (e.length !== a.length) {
      out.push(diff(pointerJoin(path), expected, actual));
      return;
    }
    e.forEach((item, index) => {
      path.push(index);
      walk(item, a[index], path, subset, out);
      path.pop();
    });
  } else if (!scalarEqual(kind, expected, actual)) {
    out.push(diff(pointerJoin(path), expected, actual));
  }
}

function differencesValid(matcher: Matcher, event: EventLike): Difference[] {
  const out: Difference[] = [];
  for (const key of Object.keys(matcher).filter((k) => MATCHER_KEYS.includes(k)).sort(codePointCompare)) {
    if (!has(event, key)) out.push(diff(pointerJoin([key]), matcher[key], null, true));
    else if (key === "data") walk(matcher[key], get(event, key), [key], true, out);
    else if (!valuesEqual(matcher[key], get(event, key))) out.push(diff(pointerJoin([key]), matcher[key], get(event, key)));
  }
  return out;
}

/** Every place where `event` does not fit `matcher`, in path order; empty exactly when it matches. */
export function differences(matcher: unknown, event: EventLike): Difference[] {
  return differencesValid(validateMatcher(matcher), event);
}

/** Every difference between two values under full equality; pointers start with `pointer`. */
export function diffValues(expected: unknown, actual: unknown, pointer = ""): Difference[] {
  const out: Difference[] = [];
  walk(expected, actual, [], false, out);
  return pointer ? out.map((d) => ({ ...d, pointer: pointer + d.pointer })) : out;
}

/** The index of the event that fits `matcher` best, with its differences (section 8); null for no events. */
export function nearest(matcher: unknown, events: readonly EventLike[]): { index: number; differences: Difference[] } | null {
  const m = validateMatcher(matcher);
  let best: [number, number, number] | null = null;
  let bestDiffs: Difference[] = [];
  for (let index = 0; index < events.length; index++) {
    const event = events[index] as EventLike;
    const otherType = valuesEqual(m.type, get(event, "type")) ? 0 : 1;
    if (best !== null && otherType > best[0]) continue;
    const diffs = differencesValid(m, event);
    const score: [number, number, number] = [otherType, diffs.length, index];
    if (best === null || score[0] < best[0] || (score[0] === best[0] && (score[1] < best[1] || (score[1] === best[1] && score[2] < best[2])))) {
      best = score;
      bestDiffs = diffs;
      if (score[0] === 0 && score[1] === 0) break;
    }
  }
  return best === null ? null : { index: best[2], differences: bestDiffs };
}

/** `seq N TYPE (EVENT_ID)`: how a matcher's sentence (and a divergence) names an event. */
export function nameEvent(index: number, event: EventLike): string {
  const seq = has(event, "seq") ? String(get(event, "seq")) : `#${index}`;
  const type = has(event, "type") ? String(get(event, "type")) : "?";
  const id = has(event, "event_id") ? String(get(event, "event_id")) : "?";
  return `seq ${seq} ${type} (${id})`;
}

/** One line on how `matcher` fares against `events` (section 8.2). */
export function explain(matcher: unknown, events: readonly EventLike[], label = "must"): string {
  const m = validateMatcher(matcher);
  const head = `${label} ${renderFull(m)}`;
  const found = nearest(m, events);
  if (found === null) return `${head} matched no event; the log has no events`;
  const name = nameEvent(found.index, events[found.index] as EventLike);
  if (found.differences.length === 0) return `${head} matches ${name}`;
  return `${head} matched no event; nearest is ${name}: ` + found.differences.map(renderDifference).join("; ");
}

/** "must" (section 9.1): for each matcher the index of the first event it matches, or null. */
export function findAll(matchers: readonly unknown[], events: readonly EventLike[]): Array<number | null> {
  const valid = matchers.map((m, i) => validateMatcher(m, pointerJoin([i])));
  return valid.map((m) => {
    const j = events.findIndex((ev) => matchesValid(m, ev));
    return j === -1 ? null : j;
  });
}

/** "expect" (section 9.2): whether the matchers match an ordered subsequence, and how many did. */
export function matchInOrder(matchers: readonly unknown[], events: readonly EventLike[]): { matched: boolean; count: number } {
  const valid = matchers.map((m, i) => validateMatcher(m, pointerJoin([i])));
  let position = 0;
  let count = 0;
  for (const m of valid) {
    while (position < events.length && !matchesValid(m, events[position] as EventLike)) position++;
    if (position === events.length) break;
    count++;
    position++;
  }
  return { matched: count === valid.length, count };
}
