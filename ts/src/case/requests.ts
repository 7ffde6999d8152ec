/**
 * Request records: the model requests of a recorded turn, kept in `model.json` as a delta per
 * reply (spec/case-format.md 3.4), as `threads_cases/case/requests.py`:
 * `{keep, messages, model, system, tools}` where the call's messages are the first `keep`
 * messages of the previous call's request followed by `messages`.
 */

import { canonicalLine } from "../core/canonical.js";
import { Reducer, type Envelope } from "../core/reducer.js";
import type { JsonObject, JsonValue } from "../core/strictjson.js";
import { buildRequest } from "../reference/request.js";

/** The whole request of every `model_requested` event of `turn`, rebuilt from the state of `prefix`. */
export function turnRequests(prefix: readonly Envelope[], turn: readonly Envelope[]): JsonObject[] {
  const reducer = new Reducer();
  for (const e of prefix) reducer.apply(e);
  const out: JsonObject[] = [];
  for (const e of turn) {
    if (e.type === "model_requested") out.push(structuredClone(buildRequest(reducer.state)));
    const last = reducer.state.last_seq;
    // the saved turn leaves out its x_ extension events (an imported session's compaction
    // records, for one); reducers skip them, so only seq moves on
    if (last !== null && (e.seq as number) > last + 1) reducer.state.last_seq = (e.seq as number) - 1;
    reducer.apply(e);
  }
  return out;
}

/** Whole requests -> the `request` records of `model.json`. */
export function deltaRecords(requests: readonly JsonObject[]): JsonObject[] {
  const out: JsonObject[] = [];
  let previous: readonly JsonValue[] = [];
  for (const req of requests) {
    const messages = req["messages"] as JsonValue[];
    let k = 0;
    while (k < previous.length && k < messages.length && canonicalLine(previous[k]!) === canonicalLine(messages[k]!)) k++;
    out.push({ keep: k, messages: messages.slice(k), model: req["model"]!, system: req["system"]!, tools: req["tools"]! });
    previous = messages;
  }
  return out;
}

/**
 * The whole recorded request of each reply of `model.json` (`null` from the first reply
 * without a `request` record on: older cases hold only the hash).
 */
export function expandRecords(replies: readonly JsonObject[]): (JsonObject | null)[] {
  const out: (JsonObject | null)[] = [];
  let previous: JsonValue[] | null = [];
  for (const reply of replies) {
    const rec = reply["request"] as JsonObject | undefined;
    if (rec === undefined || rec === null || previous === null) {
      previous = null;
      out.push(null);
      continue;
    }
    const messages: JsonValue[] = [...previous.slice(0, rec["keep"] as number), ...(rec["messages"] as JsonValue[])];
    out.push({ model: rec["model"]!, system: rec["system"]!, messages, tools: rec["tools"]! });
    previous = messages;
  }
  return out;
}
