/** The calendar regular expression of `ts` is the ts rule (thread-log.md 2.4), as in Python's tests/test_event_check.py. */

import { strict as assert } from "node:assert";
import { test } from "node:test";

import { CALENDAR, timestampProblem } from "../src/core/timestamps.js";
import { CaseError, reduce } from "../src/index.js";

function samples(): string[] {
  const years = ["0000", "0001", "0004", "0100", "0400", "1900", "2000", "2023", "2024", "2100", "2400", "9996", "9999"];
  const out: string[] = [];
  for (const y of years) {
    for (let m = 0; m < 14; m++) {
      for (let d = 0; d < 33; d++) out.push(`${y}-${String(m).padStart(2, "0")}-${String(d).padStart(2, "0")}T00:00:00.000Z`);
    }
  }
  for (const t of ["00:00:00.000", "23:59:59.999", "24:00:00.000", "12:60:00.000", "12:00:60.000"]) out.push(`2024-02-29T${t}Z`);
  out.push("2024-02-29T00:00:00.000z", "2024-02-29T00:00:00.00Z", "2024-02-29T00:00:00.000Z\n", "12024-02-29T00:00:00.000Z");
  return out;
}

test("the calendar pattern matches exactly the ts the rule accepts", () => {
  for (const ts of samples()) assert.equal(CALENDAR.test(ts), timestampProblem(ts) === null, ts);
});

test("a double canonical JSON cannot write is refused, whatever its spelling or place", () => {
  const line = (n: string): string =>
    `{"event_id":"e0","thread_id":"t","seq":0,"type":"x_n","actor_kind":"system","epoch":0,"branch_id":"main",` +
    `"critical":false,"ts":"2026-01-01T00:00:00.000Z","data":{"a":"0e5 1234567890123456.0","n":[1, ${n}]}}\n`;
  for (const n of ["1e16", "1E+16", "-1.5e17", "12345678901234567.0", "9007199254740993.5", "0.00001e21"]) {
    assert.throws(() => reduce(new TextEncoder().encode(line(n))), (err: unknown) => {
      return err instanceof CaseError && err.code === "log_invalid" && err.pointer === "/data/n/1";
    }, n);
  }
  for (const n of ["1e21", "1.5", "9007199254740991", "1e15"]) reduce(new TextEncoder().encode(line(n)));
});
