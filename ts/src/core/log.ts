/**
 * Thread logs: reading, checking and writing JSON Lines event logs (spec/thread-log.md).
 *
 * A log is strict JSON Lines, one event envelope per line, in one dialect. Reading turns each
 * line into a canonical envelope (`threads-py` keys) and checks, in this order: the line rules
 * and strict JSON (spec/strict-json.md), the dialect's key spelling, the envelope schema
 * (`$defs/envelope.threads-py`), the data schema of the type (`$defs/data.<type>`, none for
 * `x_` types), one thread_id, seq 0, 1, 2, ... without gaps, and unique event_ids. Every
 * refusal is `CaseError("log_invalid")` with the file, the line and a JSON pointer.
 */

import { canonicalLine } from "./canonical.js";
import { CANONICAL, resolveDialect, type Dialect, type DialectLike } from "./dialects.js";
import { MAX_EVENT_DEPTH, depthMessage, maybeTooDeep, tooDeep } from "./depth.js";
import { CaseError, pointerJoin } from "./errors.js";
import { Reducer, type Envelope, type State } from "./reducer.js";
import { schemaProblems, validator } from "./schemas.js";
import { checkTs } from "./timestamps.js";
import { iterLines, parse, sourceName, type JsonObject, type JsonValue, type LineSource } from "./strictjson.js";

const EVENT_SCHEMA = "event.schema.json";

function isObject(value: JsonValue | undefined): value is JsonObject {
  return value !== null && typeof value === "object" && !Array.isArray(value);
}

/**
 * Checks envelopes one at a time: dialect spelling, schema, thread_id, seq. {@link check}
 * returns the canonical envelope or throws `log_invalid` without a file or line (the caller
 * adds them). Duplicate event_ids are left to the caller, which knows the lines.
 */
export class LogChecker {
  readonly dialect: Dialect;
  private threadId: string | null = null;
  nextSeq = 0;
  /** Whether the dialect spells any envelope key otherwise (else decoding is a copy). */
  private readonly renames: boolean;
  private readonly envelopeValid = validator(EVENT_SCHEMA, `envelope.${CANONICAL}`);
  /** type -> the validator of its data, looked up once */
  private readonly dataValid = new Map<string, ReturnType<typeof validator>>();

  constructor(dialect: DialectLike = CANONICAL) {
    this.dialect = resolveDialect(dialect);
    this.renames = Object.keys(this.dialect.envelope).length > 0;
  }

  /**
   * The canonical envelope of `raw` (checks in the module's order). `owned`: `raw` is the
   * reader's own value of a line, nobody else's, so a dialect that renames nothing uses it as it
   * is instead of a copy.
   */
  check(raw: JsonValue, owned = false): Envelope {
    if (!isObject(raw)) throw new CaseError("log_invalid", "a log line must be a JSON object", { pointer: "" });
    const ev = owned && !this.renames ? raw : this.dialect.decodeEvent(raw);
    const envelopeOk = this.envelopeValid(ev);
    const type = ev["type"];
    const dataOk = envelopeOk && typeof type === "string" && (type.startsWith("x_") || this.dataValidator(type)(ev["data"]));
    if (!dataOk) {
      let problems = schemaProblems(ev, EVENT_SCHEMA, `envelope.${CANONICAL}`);
      if (problems.length === 0) problems = schemaProblems(ev["data"], EVENT_SCHEMA, `data.${String(type)}`, "/data");
      const first = problems[0] ?? { pointer: "", message: "does not match the schema" };
      const more = problems.length > 1 ? ` (and ${problems.length - 1} more)` : "";
      throw new CaseError("log_invalid", `schema: ${first.message}${more}`, { pointer: first.pointer });
    }
    const envelope = ev as unknown as Envelope;
    checkTs(envelope.ts); // a real calendar time in years 0001-9999 (thread-log.md 2.4)
    if (this.threadId === null) {
      this.threadId = envelope.thread_id;
    } else if (envelope.thread_id !== this.threadId) {
      throw new CaseError("log_invalid", `thread_id '${envelope.thread_id}' differs from '${this.threadId}' of line 1`, {
        pointer: "/thread_id",
      });
    }
    if (envelope.seq !== this.nextSeq) {
      throw new CaseError("log_invalid", `seq gap: seq ${envelope.seq} where ${this.nextSeq} is expected`, { pointer: "/seq" });
    }
    this.nextSeq++;
    return envelope;
  }

  private dataValidator(type: string): ReturnType<typeof validator> {
    let fn = this.dataValid.get(type);
    if (fn === undefined) {
      fn = validator(EVENT_SCHEMA, `data.${type}`);
      this.dataValid.set(type, fn);
    }
    return fn;
  }
}

/**
 * Refuse an event nested deeper than 248 levels (thread-log.md 5.1a): `log_invalid` at the first
 * container past the limit (keys in code point order). `text` is its JSON.
 */
export function checkDepth(text: string | Uint8Array, raw: JsonValue): void {
  // a JSON text with more than MAX_EVENT_DEPTH opening brackets closes each of them too, so it
  // is longer than twice that: a shorter one is not even counted
  if (text.length <= 2 * MAX_EVENT_DEPTH || !maybeTooDeep(text)) return;
  const path = tooDeep(raw);
  if (path !== null) throw new CaseError("log_invalid", depthMessage(), { pointer: pointerJoin(path) });
}

/**
 * A number token that may be a double canonical JSON cannot write (magnitude above 2^53-1 and
 * below 1e21): one with an exponent, or 16 digits and more before its fraction. A number token
 * starts the text or follows `:`, `,` or `[` (and white space), so digits inside strings (hex
 * digests) are not taken for one.
 */
const MAYBE_WIDE_DOUBLE = /(?:^|[:,[])\s*-?(?:[0-9]+(?:\.[0-9]*)?[eE]|[0-9]{16,}\.)/;

/**
 * The value rules of a read line (thread-log.md 5.1a, 5.1b): its depth, then every number
 * writable by canonical JSON (a double such as `1e16` is `log_invalid` at its pointer, as in a
 * log given as values). `text` is the line's JSON.
 */
export function checkLineValue(text: Uint8Array, raw: JsonValue): void {
  checkDepth(text, raw);
  if (!MAYBE_WIDE_DOUBLE.test(Buffer.from(text.buffer, text.byteOffset, text.byteLength).toString("latin1"))) return;
  try {
    canonicalLine(raw);
  } catch (err) {
    if (!(err instanceof CaseError) || err.code !== "unsafe_value") throw err;
    throw new CaseError("log_invalid", err.message, { pointer: err.pointer });
  }
}

/** UTF-8 as the strict reader decodes it: invalid bytes throw, a BOM is kept (and then breaks the round trip). */
const fastDecoder = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true });

/**
 * A number token of 16 digits or more (an integer outside +-(2^53-1), or a double JSON.stringify
 * writes with that many integer digits: from 2^53 to 1e21). A number token follows `:`, `,` or
 * `[` in a text without white space.
 */
const WIDE_NUMBER = /[:,[]-?[0-9]{16}/;

/**
 * The compiled check's parse of a read line: its value when the line is JSON.stringify's own
 * writing of a JSON.parse of it, so the strict reader would read the same value without a
 * refusal (a repeated key, white space, an escape other than JSON.stringify's, a number not
 * spelled as it writes it all change the bytes), and keeps the number rule (no token of 16
 * digits: every other number JSON.stringify writes is one canonical JSON writes too) and holds
 * no lone surrogate (no `\ud` escape) and fewer brackets than the depth rule's limit; `undefined` sends the line the exact way (strict parse,
 * {@link checkLineValue}), which decides. Python's reader does the same with orjson's bytes.
 */
export function fastParse(body: Uint8Array): JsonObject | undefined {
  try {
    const text = fastDecoder.decode(body);
    const raw: unknown = JSON.parse(text);
    if (!isObject(raw as JsonValue) || JSON.stringify(raw) !== text) return undefined;
    if (WIDE_NUMBER.test(text) || text.includes("\\ud")) return undefined;
    // a line that may break the depth rule goes the exact way, which locates the container
    if (body.length > 2 * MAX_EVENT_DEPTH && maybeTooDeep(body)) return undefined;
    return raw as JsonObject;
  } catch {
    return undefined; // invalid UTF-8, not JSON, or too deep for JSON.parse: the exact way
  }
}

export interface ReadOptions {
  dialect?: DialectLike;
  /** Name for error locations when `source` is bytes (default `<bytes>`). */
  name?: string;
}

/**
 * Stream the canonical envelopes of a log (a path, read in chunks, or the bytes of one).
 * Throws `log_invalid` with file, line and pointer at the first problem, a repeated event_id
 * at the line of the repeat (spec/thread-log.md 5.5; the Python reader reports that one only
 * after the last line).
 */
export function* readLog(source: LineSource, options: ReadOptions = {}): Generator<Envelope> {
  const checker = new LogChecker(options.dialect);
  const name = sourceName(source, options.name);
  const seen = new Set<string>();
  for (const item of iterLines(source, { code: "log_invalid", name })) {
    if (item.error !== undefined) throw item.error;
    const fast = fastParse(item.body);
    const raw = fast ?? parse(item.body, { code: "log_invalid", file: name, line: item.line });
    let ev: Envelope;
    try {
      if (fast === undefined) checkLineValue(item.body, raw); // fastParse's own otherwise
      ev = checker.check(raw, true);
    } catch (err) {
      throw err instanceof CaseError ? err.at({ file: name, line: item.line }) : err;
    }
    if (seen.has(ev.event_id)) {
      throw new CaseError("log_invalid", `duplicate event_id '${ev.event_id}'`, {
        file: name,
        line: item.line,
        pointer: "/event_id",
      });
    }
    seen.add(ev.event_id);
    yield ev;
  }
}

/**
 * Check in-memory envelopes in `dialect` as {@link readLog} checks lines; locations say
 * `event N` (0-based) instead of a file and line. Each envelope must also be writable as
 * canonical JSON, so a value a file could not hold is refused too.
 */
export function* checkEvents(events: Iterable<JsonValue>, options: { dialect?: DialectLike } = {}): Generator<Envelope> {
  const checker = new LogChecker(options.dialect);
  const seen = new Set<string>();
  let index = 0;
  for (const raw of events) {
    const where = `event ${index}`;
    let ev: Envelope;
    try {
      checkDepth(canonicalLine(raw), raw);
      ev = checker.check(raw);
    } catch (err) {
      if (!(err instanceof CaseError)) throw err;
      const e = err.code === "unsafe_value" ? new CaseError("log_invalid", err.message, { pointer: err.pointer }) : err;
      throw e.at({ file: where });
    }
    if (seen.has(ev.event_id)) {
      throw new CaseError("log_invalid", `duplicate event_id '${ev.event_id}'`, { file: where, pointer: "/event_id" });
    }
    seen.add(ev.event_id);
    yield ev;
    index++;
  }
}

/** Read, check and reduce a log; returns the canonical state. Throws `log_invalid` with file and line. */
export function reduceLog(source: LineSource, options: ReadOptions = {}): State {
  const reducer = new Reducer(null, { copyData: false });
  const name = sourceName(source, options.name);
  let line = 0;
  for (const ev of readLog(source, options)) {
    line++;
    try {
      reducer.apply(ev);
    } catch (err) {
      throw err instanceof CaseError ? err.at({ file: name, line }) : err;
    }
  }
  return reducer.state;
}

/** Check and reduce in-memory envelopes in `dialect`; errors name `event N` (0-based). */
export function reduceEvents(events: Iterable<JsonValue>, options: { dialect?: DialectLike } = {}): State {
  const reducer = new Reducer();
  let index = 0;
  for (const ev of checkEvents(events, options)) {
    try {
      reducer.apply(ev);
    } catch (err) {
      throw err instanceof CaseError ? err.at({ file: `event ${index}` }) : err;
    }
    index++;
  }
  return reducer.state;
}

/**
 * Reduce a log to its canonical state (spec/reducer.md): `events` is a path, the bytes of a
 * JSON Lines log, or an iterable of envelope objects in `dialect`.
 */
export function reduce(events: LineSource | Iterable<JsonValue>, options: ReadOptions = {}): State {
  if (typeof events === "string" || events instanceof Uint8Array) return reduceLog(events, options);
  return reduceEvents(events, options);
}

/** The canonical text of a log in `dialect`: one JCS line per canonical envelope, each ending in `\n`. */
export function encodeLog(events: Iterable<Envelope | JsonObject>, options: { dialect?: DialectLike } = {}): string {
  const d = resolveDialect(options.dialect);
  let out = "";
  for (const ev of events) out += canonicalLine(d.encodeEvent(ev as unknown as JsonObject)) + "\n";
  return out;
}
