/**
 * A case's log reduced once and kept for the next request about the same case
 * (spec/driver-protocol.md 2.5, replay.md 2.1 step 1; issue 33), as
 * threads_cases/case/reduced_log.py.
 *
 * A driver answers a run's `reduce` of `<case>/log.<d>.jsonl` and then its `replay` of
 * `<case>`: {@link foldCaseLog} reads and reduces the log for the first, and the case loader
 * (`openCase(path, { known })`) takes the events and the reducer from it for the second when
 * the case's log is the same bytes, so the log is folded once. The reducer is only read or
 * branched (`Case.fork`), never applied to again.
 */

import { statSync } from "node:fs";
import { basename, dirname, join, resolve } from "node:path";

import { MAX_LOG_BYTES, readRegular } from "../core/files.js";
import { readLog } from "../core/log.js";
import { Reducer, type Envelope } from "../core/reducer.js";

/** `path` (the log file), the `data` it held, its canonical `events` and the `reducer` they were folded into. */
export interface ReducedLog {
  readonly path: string;
  readonly dialect: string;
  readonly data: Uint8Array;
  readonly events: readonly Envelope[];
  readonly reducer: Reducer;
}

/**
 * The log at `path` folded as the case loader folds it (step 7 of spec/case-format.md 8.1),
 * when `path` is `log.<dialect>.jsonl` beside a `case.json`, is a regular file and passes every
 * check; else undefined (the caller reduces it as any log, and reports its refusal as it always did).
 */
export function foldCaseLog(path: string, dialect: string): ReducedLog | undefined {
  if (basename(path) !== `log.${dialect}.jsonl`) return undefined;
  try {
    if (!statSync(join(dirname(path), "case.json")).isFile()) return undefined;
  } catch {
    return undefined;
  }
  const events: Envelope[] = [];
  const reducer = new Reducer(null, { copyData: false }); // the events are this fold's own
  let data: Uint8Array;
  try {
    data = readRegular(path, { code: "log_invalid", limit: MAX_LOG_BYTES });
    for (const ev of readLog(data, { dialect, name: path })) {
      reducer.apply(ev);
      events.push(ev);
    }
  } catch {
    return undefined; // refused: reduceLog says how, as it always did
  }
  return { path, dialect, data, events, reducer };
}

/** `known` when it is the fold of `where` in `dialect` holding `data`, else undefined. */
export function reuse(known: ReducedLog | undefined, where: string, dialect: string, data: Uint8Array): ReducedLog | undefined {
  if (known === undefined || known.dialect !== dialect || resolve(known.path) !== resolve(where)) return undefined;
  const a = Buffer.from(known.data.buffer, known.data.byteOffset, known.data.byteLength);
  return a.equals(data) ? known : undefined;
}
