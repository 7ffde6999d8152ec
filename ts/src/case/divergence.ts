/**
 * The first divergence between a recorded turn and its replay (spec/reports.md section 7), as
 * `threads_cases/harness/check/divergence.py`: the first model request whose hash differs, with the
 * JSON pointer inside the request where the recorded and the replayed request first differ and
 * both values. The rules are language-neutral (reports.md 7.4) and pinned, byte for byte, by the
 * data-only tests of spec/conformance/divergence/:
 *
 *     {kind: "request", call, event_index, event_type, pointer, line, summary,
 *      recorded?, replayed?}          (recorded / replayed left out when absent)
 *
 * Object keys are walked in UTF-16 code-unit order (the order of canonical JSON), two values
 * that are not both objects or both arrays differ when their canonical JSON texts do, and the
 * summary shortens each value to 60 code points (never splitting a surrogate pair).
 */

import { canonicalLine } from "../core/canonical.js";
import { nameEvent } from "../core/matchers.js";
import type { Envelope } from "../core/reducer.js";
import { type JsonObject, type JsonValue, isObj } from "../core/strictjson.js";
import { turnRequests } from "./requests.js";

/** Marks a value absent on one side. */
export const ABSENT: unique symbol = Symbol("absent");
export type Side = JsonValue | typeof ABSENT;
export const SHORT = 60;


/** One RFC 6901 reference token. */
export function escapeToken(key: string): string {
  return key.replaceAll("~", "~0").replaceAll("/", "~1");
}

/**
 * The first place where two JSON values differ, in document order: `[pointer, recorded,
 * replayed]` with `ABSENT` for a missing key or item, or `null` when they are equal.
 */
export function firstDifference(recorded: JsonValue, replayed: JsonValue, pointer = ""): [string, Side, Side] | null {
  if (isObj(recorded) && isObj(replayed)) {
    // the default sort compares UTF-16 code units, the order of canonical JSON (RFC 8785)
    const keys = [...new Set([...Object.keys(recorded), ...Object.keys(replayed)])].sort();
    for (const key of keys) {
      const p = `${pointer}/${escapeToken(key)}`;
      if (!Object.hasOwn(recorded, key)) return [p, ABSENT, replayed[key]!];
      if (!Object.hasOwn(replayed, key)) return [p, recorded[key]!, ABSENT];
      const hit = firstDifference(recorded[key]!, replayed[key]!, p);
      if (hit !== null) return hit;
    }
    return null;
  }
  if (Array.isArray(recorded) && Array.isArray(replayed)) {
    const n = Math.min(recorded.length, replayed.length);
    for (let i = 0; i < n; i++) {
      const hit = firstDifference(recorded[i]!, replayed[i]!, `${pointer}/${i}`);
      if (hit !== null) return hit;
    }
    if (recorded.length !== replayed.length) {
      return [`${pointer}/${n}`, n < recorded.length ? recorded[n]! : ABSENT, n < replayed.length ? replayed[n]! : ABSENT];
    }
    return null;
  }
  return canonicalLine(recorded) !== canonicalLine(replayed) ? [pointer, recorded, replayed] : null;
}

/** A value as one line of at most `width` code points (compact JSON, cut and `...`). */
export function shorten(value: Side, width = SHORT): string {
  if (value === ABSENT) return "(absent)";
  const points = Array.from(canonicalLine(value));
  return points.length <= width ? points.join("") : points.slice(0, width - 3).join("") + "...";
}

function lineOf(a: Side, b: Side): number | null {
  if (typeof a !== "string" || typeof b !== "string" || (!a.includes("\n") && !b.includes("\n"))) return null;
  const x = a.split("\n");
  const y = b.split("\n");
  for (let i = 0; i < Math.min(x.length, y.length); i++) if (x[i] !== y[i]) return i + 1;
  return Math.min(x.length, y.length) + 1;
}

/** Where a replay first departed from its recording. */
export class Divergence {
  constructor(
    readonly kind: string,
    readonly pointer: string,
    readonly recorded: Side,
    readonly replayed: Side,
    readonly call: number | null = null,
    readonly eventIndex: number | null = null,
    readonly eventType: string | null = null,
    readonly note = "",
    /** The event as the log's files number it: seq and event id, and its name `seq S TYPE (ID)`. */
    readonly seq: number | null = null,
    readonly eventId: string | null = null,
    readonly event = "",
  ) {}

  get line(): number | null {
    return lineOf(this.recorded, this.replayed);
  }

  /** `KIND (model call N, model.json /replies/N) on seq S TYPE (ID) at POINTER` (reports.md 7.4). */
  where(): string {
    let head = this.kind;
    if (this.call !== null) head += ` (model call ${this.call}${this.kind === "request" ? `, model.json /replies/${this.call}` : ""})`;
    if (this.event) head += ` on ${this.event}`;
    else if (this.eventType) head += ` on ${this.eventType}`;
    const line = this.line;
    return `${head} at ${this.pointer || "/"}${line !== null ? ` line ${line}` : ""}`;
  }

  /** One line: `request (model call 1, model.json /replies/1) on seq 9 model_requested (main.9) at /system line 3: recorded "..." != replayed "..."`. */
  summary(width = SHORT): string {
    let a = this.recorded;
    let b = this.replayed;
    const line = this.line;
    if (line !== null) {
      // show the differing line, not the start of the text
      const x = (a as string).split("\n");
      const y = (b as string).split("\n");
      a = line <= x.length ? x[line - 1]! : ABSENT;
      b = line <= y.length ? y[line - 1]! : ABSENT;
    }
    const text = `${this.where()}: recorded ${shorten(a, width)} != replayed ${shorten(b, width)}`;
    return this.note ? `${text} (${this.note})` : text;
  }

  toJson(): JsonObject {
    const out: JsonObject = {
      kind: this.kind,
      call: this.call,
      event_index: this.eventIndex,
      event_type: this.eventType,
      seq: this.seq,
      event_id: this.eventId,
      pointer: this.pointer,
      line: this.line,
      summary: this.summary(),
    };
    if (this.recorded !== ABSENT) out["recorded"] = this.recorded;
    if (this.replayed !== ABSENT) out["replayed"] = this.replayed;
    return out;
  }
}

/**
 * The first model call whose replayed request hash differs from the recorded one, with the first
 * differing pointer inside the two requests. `recorded` / `replayed` hold the whole requests
 * (`null` where unknown), `events` the replayed turn (canonical).
 */
export function requestDivergence(
  recorded: readonly (JsonObject | null)[],
  recordedSha: readonly string[],
  replayed: readonly (JsonObject | null)[],
  replayedSha: readonly string[],
  events: readonly Envelope[],
): Divergence | null {
  const calls: number[] = [];
  events.forEach((e, i) => {
    if (e.type === "model_requested") calls.push(i);
  });
  const n = Math.min(recordedSha.length, replayedSha.length);
  for (let k = 0; k < n; k++) {
    const want = recordedSha[k]!;
    const got = replayedSha[k]!;
    if (want === got) continue;
    const idx = k < calls.length ? calls[k]! : null;
    const ev = idx === null ? undefined : events[idx];
    const name = ev === undefined || idx === null ? "" : nameEvent(idx, ev);
    const a = k < recorded.length ? recorded[k]! : null;
    const b = k < replayed.length ? replayed[k]! : null;
    const at = (pointer: string, x: Side, y: Side, note = ""): Divergence =>
      new Divergence("request", pointer, x, y, k, idx, "model_requested", note, ev?.seq ?? null, ev?.event_id ?? null, name);
    if (a === null || b === null) return at("/request_sha256", want, got, a === null ? "the case holds no request record to compare" : "");
    const hit = firstDifference(a, b);
    if (hit === null) return at("/request_sha256", want, got, "the requests are equal; the recorded request_sha256 is not their hash");
    return at(hit[0], hit[1], hit[2]);
  }
  return null;
}

/** The request of each model call of a replay, rebuilt from the prefix and the replayed events (empty when they do not reduce). */
export function replayedRequests(prefix: readonly Envelope[], events: readonly Envelope[]): JsonObject[] {
  try {
    return turnRequests(prefix, events);
  } catch {
    return [];
  }
}
