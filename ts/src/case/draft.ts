/**
 * Matchers drafted from a recorded turn, as `threads-cases draft` and Python's `save_case`
 * draft them (threads_cases/case/turns.py `draft_turn`, spec/importers.md section 5,
 * spec/case-format.md 5.12): a must for each successful `tool_result` (`{"type":
 * "tool_result", "data": {"name", "is_error": false}}`, repeats dropped) and one for the
 * terminal event (`{"type": "turn_completed", "data": {"stop_reason"}}` or `{"type":
 * "turn_failed", "data": {"error": {"code"}}}`), and as expect the turn's `tool_called` events
 * in order (`{"type": "tool_called", "data": {"name"}}`).
 */

import { canonicalLine } from "../core/canonical.js";
import type { Envelope } from "../core/reducer.js";
import type { JsonObject } from "../core/strictjson.js";

export interface Drafted {
  must: JsonObject[];
  expect: JsonObject[];
}

/** The note of a save that drafted its matchers (the command line's, with the API's way out). */
export function draftedNote(must: number, expect: number): string {
  return `drafted ${must} must and ${expect} expect matcher(s) from the recorded turn (see them in case.json; draft: false to skip)`;
}

/** The warning of a save whose case checks nothing about its turn (`draft: false`, or nothing to draft). */
export const EMPTY_EXPECTATION_WARNING =
  "warning: the case checks nothing about the turn's outcome (no must or expect matchers); every run of it will warn no_expectations";

/** The proposed matchers of one turn's events (user_message .. terminal event, no `x_`). */
export function draftTurn(events: readonly Envelope[]): Drafted {
  const must: JsonObject[] = [];
  const expect: JsonObject[] = [];
  const seen = new Set<string>();
  for (const ev of events) {
    const d = ev.data;
    if (ev.type === "tool_result" && d["is_error"] === false) {
      const m: JsonObject = { type: "tool_result", data: { name: d["name"]!, is_error: false } };
      const key = canonicalLine(m);
      if (!seen.has(key)) {
        seen.add(key);
        must.push(m);
      }
    } else if (ev.type === "tool_called") {
      expect.push({ type: "tool_called", data: { name: d["name"]! } });
    } else if (ev.type === "turn_completed") {
      must.push({ type: "turn_completed", data: { stop_reason: d["stop_reason"]! } });
    } else if (ev.type === "turn_failed") {
      // the replay ends an interrupted turn with the same code (replay.md 3.8)
      const code = (d["error"] as JsonObject)["code"]!;
      must.push({ type: "turn_failed", data: { error: { code } } });
    }
  }
  return { must, expect };
}

/**
 * The expectation to save and the lines saying how it came about (spec/case-format.md 5.12):
 * `draft` undefined drafts from `turn` when `given` holds no matcher, `true` adds the drafted
 * ones before the given ones, `false` saves `given` as it is (an empty one with a warning).
 */
export function drafted(turn: readonly Envelope[], given: Drafted, draft: boolean | undefined): [Drafted, string[]] {
  const empty = given.must.length === 0 && given.expect.length === 0;
  if (draft === true || (draft === undefined && empty)) {
    const proposed = draftTurn(turn);
    if (proposed.must.length > 0 || proposed.expect.length > 0) {
      const out = { must: [...proposed.must, ...given.must], expect: [...proposed.expect, ...given.expect] };
      return [out, [draftedNote(out.must.length, out.expect.length)]];
    }
  }
  return [given, empty ? [EMPTY_EXPECTATION_WARNING] : []];
}
