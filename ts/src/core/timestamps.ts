/**
 * Event timestamps: the `ts` of an envelope (spec/thread-log.md section 2.4), as
 * `threads_cases/core/timestamps.py`: `YYYY-MM-DDTHH:MM:SS.mmmZ`, a real date of the proleptic
 * Gregorian calendar, years 0001 to 9999, no leap second. Times are milliseconds since
 * 1970-01-01T00:00:00.000Z from {@link MIN_MS} to {@link MAX_MS}. Refusals are
 * `CaseError("log_invalid")` at `/ts`, with the same messages as Python.
 */

import { CaseError } from "./errors.js";
import { quote } from "./texts.js";

/** 0001-01-01T00:00:00.000Z */
export const MIN_MS = -62_135_596_800_000;
/** 9999-12-31T23:59:59.999Z */
export const MAX_MS = 253_402_300_799_999;
const DAY_MS = 86_400_000;
const TS = /^([0-9]{4})-([0-9]{2})-([0-9]{2})T([0-9]{2}):([0-9]{2}):([0-9]{2})\.([0-9]{3})Z$/;

const floorDiv = (a: number, b: number): number => Math.floor(a / b);

function daysInMonth(year: number, month: number): number {
  if (month === 2) return year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0) ? 29 : 28;
  return [4, 6, 9, 11].includes(month) ? 30 : 31;
}

function daysFromCivil(year: number, m: number, d: number): number {
  const y = m <= 2 ? year - 1 : year;
  const era = floorDiv(y, 400);
  const yoe = y - era * 400;
  const doy = floorDiv(153 * (m + (m > 2 ? -3 : 9)) + 2, 5) + d - 1;
  const doe = yoe * 365 + floorDiv(yoe, 4) - floorDiv(yoe, 100) + doy;
  return era * 146097 + doe - 719468;
}

function civilFromDays(days: number): [number, number, number] {
  const z = days + 719468;
  const era = floorDiv(z, 146097);
  const doe = z - era * 146097;
  const yoe = floorDiv(doe - floorDiv(doe, 1460) + floorDiv(doe, 36524) - floorDiv(doe, 146096), 365);
  const doy = doe - (365 * yoe + floorDiv(yoe, 4) - floorDiv(yoe, 100));
  const mp = floorDiv(5 * doy + 2, 153);
  const d = doy - floorDiv(153 * mp + 2, 5) + 1;
  const m = mp + (mp < 10 ? 3 : -9);
  return [yoe + era * 400 + (m <= 2 ? 1 : 0), m, d];
}

/** Why `ts` is not a valid event time, or null when it is one. */
export function timestampProblem(ts: string): string | null {
  const m = TS.exec(ts);
  if (m === null) return "is not of the form YYYY-MM-DDTHH:MM:SS.mmmZ";
  const g = m.slice(1) as string[];
  const [year, month, day, hour, minute, second] = g.slice(0, 6).map(Number) as number[];
  if (year! < 1) return "year 0000 is out of range (0001 to 9999)";
  if (month! < 1 || month! > 12) return `month ${g[1]} does not exist`;
  if (day! < 1 || day! > daysInMonth(year!, month!)) return `${g[0]}-${g[1]} has no day ${g[2]}`;
  if (hour! > 23) return `hour ${g[3]} is out of range (00 to 23)`;
  if (minute! > 59) return `minute ${g[4]} is out of range (00 to 59)`;
  if (second! > 59) return `second ${g[5]} is out of range (00 to 59)`;
  return null;
}

const YEAR = "(?:[1-9][0-9]{3}|0[1-9][0-9]{2}|00[1-9][0-9]|000[1-9])"; // 0001-9999
const LEAP_YEAR = "(?:[0-9]{2}(?:[02468][48]|[13579][26]|[2468]0)|(?:[02468][48]|[13579][26]|[2468]0)00)";
const MONTH_DAY =
  "(?:(?:0[13578]|1[02])-(?:0[1-9]|[12][0-9]|3[01])|(?:0[469]|11)-(?:0[1-9]|[12][0-9]|30)|02-(?:0[1-9]|1[0-9]|2[0-8]))";
/**
 * The whole `ts` rule (thread-log.md 2.4 and the form of section 2) as one regular expression,
 * as threads_cases/core/timestamps.py's CALENDAR_PATTERN: it matches exactly the `ts` for which
 * {@link timestampProblem} is null, so a valid `ts` is told by one match; a refusal's message
 * still comes from {@link timestampProblem}.
 */
export const CALENDAR = new RegExp(
  `^(?:${YEAR}-${MONTH_DAY}|${LEAP_YEAR}-02-29)T(?:[01][0-9]|2[0-3]):[0-5][0-9]:[0-5][0-9][.][0-9]{3}Z$`,
);

/** The milliseconds of a valid `ts`; throws `log_invalid` at `/ts`. */
export function checkTs(ts: string): number {
  if (CALENDAR.test(ts)) return parseTs(ts);
  const problem = timestampProblem(ts);
  if (problem !== null) {
    throw new CaseError("log_invalid", `ts ${quote(ts)} ${problem}`, {
      pointer: "/ts",
      hint: "ts is an RFC 3339 UTC time with a real date, e.g. 2026-11-29T20:05:43.123Z",
    });
  }
  return parseTs(ts);
}

/** `YYYY-MM-DDTHH:MM:SS.mmmZ` (already checked) -> milliseconds since the epoch. */
export function parseTs(ts: string): number {
  const n = (a: number, b: number): number => Number(ts.slice(a, b));
  const secs = daysFromCivil(n(0, 4), n(5, 7), n(8, 10)) * 86400 + n(11, 13) * 3600 + n(14, 16) * 60 + n(17, 19);
  return secs * 1000 + n(20, 23);
}

const pad = (v: number, width: number): string => String(v).padStart(width, "0");

/**
 * Milliseconds since the epoch -> `YYYY-MM-DDTHH:MM:SS.mmmZ`; throws `invalid_request` outside
 * {@link MIN_MS} .. {@link MAX_MS} (a clock that would leave year 9999).
 */
export function formatTs(ms: number): string {
  if (!(ms >= MIN_MS && ms <= MAX_MS)) {
    throw new CaseError(
      "invalid_request",
      `the clock would reach ${ms} ms, outside 0001-01-01T00:00:00.000Z .. 9999-12-31T23:59:59.999Z`,
      { hint: "event times stay within years 0001 to 9999" },
    );
  }
  const days = floorDiv(ms, DAY_MS);
  const rest = ms - days * DAY_MS;
  const [y, m, d] = civilFromDays(days);
  const secs = floorDiv(rest, 1000);
  const milli = rest - secs * 1000;
  return `${pad(y, 4)}-${pad(m, 2)}-${pad(d, 2)}T${pad(floorDiv(secs, 3600), 2)}:${pad(floorDiv(secs, 60) % 60, 2)}:${pad(secs % 60, 2)}.${pad(milli, 3)}Z`;
}

/** A fork point leaves at least this much clock for a replay (spec/case-format.md 5.2). */
export const REPLAY_ROOM_MS = 86_400_000;

/** Refuse a fork point later than `9999-12-30T23:59:59.999Z` with `invalid_request`. */
export function checkForkRoom(ts: string, at: string): void {
  if (parseTs(ts) > MAX_MS - REPLAY_ROOM_MS) {
    throw new CaseError(
      "invalid_request",
      `the fork point ${quote(at)} is at ${ts}, later than 9999-12-30T23:59:59.999Z: a replay's clock would pass year 9999`,
      { hint: "fork at an event recorded at least a day before the end of year 9999" },
    );
  }
}
