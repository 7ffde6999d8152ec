/**
 * What `save` checks about its own work (spec/case-format.md 5.10), with the TypeScript runtime.
 *
 * {@link verifyCaseFiles} writes the built files to a private temporary directory, runs the case there as `run`
 * would (the prefix state against `expected.<dialect>.json`, the replay, `must`, `expect`, unused replies and
 * stubs), removes the directory, and throws `replay_failed` naming the first failing check and the nearest
 * replayed event when the first run would not pass. Request hashes are not checked: a case that drifts only
 * on them is accepted, as in Python.
 */

import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";

import { canonicalLine } from "../core/canonical.js";
import { getDialect } from "../core/dialects.js";
import { CaseError } from "../core/errors.js";
import { explain, findAll, matchInOrder, nearest } from "../core/matchers.js";
import { Reducer } from "../core/reducer.js";
import type { JsonObject } from "../core/strictjson.js";
import type { AgentSpec } from "../reference/agent.js";
import { replayCase } from "../reference/replay.js";
import { openCase } from "./loader.js";

function nearestText(matcher: unknown, events: readonly JsonObject[]): string {
  const hit = nearest(matcher, events);
  const ev = hit === null ? undefined : events[hit.index];
  return ev === undefined ? "" : `; nearest event: seq ${String(ev["seq"])} ${String(ev["type"])}`;
}

/** The first check the case at `path` fails on the TypeScript runtime, or null when it passes. */
export function firstFailure(path: string, dialects: readonly string[], agent?: AgentSpec): string | null {
  const dialectName = dialects.includes("threads-ts") ? "threads-ts" : (dialects[0] as string);
  const dialect = getDialect(dialectName);
  const c = openCase(path);
  const reducer = new Reducer();
  for (const ev of c.logs.get(dialectName) ?? []) reducer.apply(ev);
  const state = canonicalLine(dialect.encodeState(reducer.state as unknown as JsonObject));
  if (Buffer.compare(Buffer.from(state), Buffer.from(canonicalLine(c.read(`expected.${dialectName}.json`)))) !== 0) {
    return `check state (state_mismatch): the prefix does not reduce to expected.${dialectName}.json`;
  }
  const out = replayCase(c, agent === undefined ? { implementation: dialectName } : { implementation: dialectName, agent });
  const events = out.events as unknown as JsonObject[];
  if (out.stop !== null) {
    const last = events[events.length - 2];
    const near = last === undefined ? "" : `; nearest event: seq ${String(last["seq"])} ${String(last["type"])}`;
    return `check stop (${out.stop.code}): ${out.stop.code} at ${out.stop.stop_key}: ${out.stop.message}${near}`;
  }
  const expect = c.meta["expect"] as { must: unknown[]; expect: unknown[] };
  const hits = findAll(expect.must, events);
  const missed = hits.findIndex((h) => h === null);
  if (missed >= 0) {
    const m = expect.must[missed];
    return `check must[${missed}] (must_unmatched): ${explain(m, events, `must[${missed}]`)}${nearestText(m, events)}`;
  }
  const order = matchInOrder(expect.expect, events);
  if (!order.matched) {
    const m = expect.expect[order.count];
    return `check expect (expect_unmatched): expect[${order.count}] is not matched in order${nearestText(m, events)}`;
  }
  const replies = (c.read("model.json") as { replies: unknown[] }).replies;
  if (out.consumed.replies < replies.length) {
    return `check model (reply_unused): ${replies.length - out.consumed.replies} of ${replies.length} recorded replies were never used`;
  }
  const unused = out.consumed.stubs.map((u, i) => (u ? -1 : i)).filter((i) => i >= 0);
  if (unused.length > 0) return `check stubs (stub_unused): stubs never used: ${unused.map((i) => `#${i}`).join(", ")}`;
  return null;
}

/** The hint of `replay_failed` when the failure has a remedy other than `verify: false` (as Python's CAUSE_HINTS). */
const CAUSE_HINTS: Readonly<Record<string, string>> = {
  sandbox_content_missing:
    "save with --sandbox DIR (sandboxDir) holding the files as they were when the turn ran (the log knows some only by their sha256)",
  handler_missing: "save with agent naming the agent that holds the tool's handler (thread.saveCase uses the thread's own agent), or verify: false",
};

/** The hint for a `replay_failed` whose first failure is `failure` ("check ID (CODE): ..." or "... (CODE): ..."). */
export function replayFailedHint(failure: string): string {
  for (const [code, hint] of Object.entries(CAUSE_HINTS)) {
    if (failure.includes(`(${code})`)) return hint;
  }
  return "save with verify: false to keep a case that fails today on purpose";
}

/** Run the built `files` of case `name` once (with `agent`, whose handlers a custom sandbox tool needs); throws `replay_failed` when its first run would not pass. */
export function verifyCaseFiles(name: string, files: ReadonlyMap<string, Uint8Array>, dialects: readonly string[], agent?: AgentSpec): void {
  const root = mkdtempSync(join(tmpdir(), "threads-cases-verify-"));
  try {
    const dir = join(root, name);
    for (const [rel, data] of files) {
      mkdirSync(dirname(join(dir, rel)), { recursive: true });
      writeFileSync(join(dir, rel), data);
    }
    let failure: string | null;
    try {
      failure = firstFailure(dir, dialects, agent);
    } catch (err) {
      if (!(err instanceof CaseError)) throw err;
      failure = `the case cannot run (${err.code}): ${err.message}`;
    }
    if (failure !== null) {
      throw new CaseError("replay_failed", `the case would not pass its first run on threads-ts: ${failure}`, {
        hint: replayFailedHint(failure),
      });
    }
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
}
