/**
 * The arguments of saveCase a JavaScript caller can get wrong (TypeScript's types rule them out
 * for a typed caller): each is refused with invalid_request (or log_invalid for a malformed
 * event, at /<index>/...) and a hint written for the API, never a TypeError (ts/README.md).
 */

import { CaseError } from "../core/errors.js";
import { isObj } from "../core/strictjson.js";
import { quote } from "../core/texts.js";
import type { SaveCaseOptions } from "./save.js";

export const OPTIONS_HINT = "call saveCase(events, name, { sandbox, store, at, dir }), for example with thread.sandbox and thread.artifacts";
const LOG_HINT = "pass the log as an array of canonical events, such as thread.events or [...readLog(path)]";

/** How a bad argument shows in a message: its type, and its value when it is short. */
export function describe(value: unknown): string {
  if (value === null) return "null";
  if (Array.isArray(value)) return "an array";
  if (typeof value === "string") return `the string ${quote(value.length > 40 ? value.slice(0, 40) + "..." : value)}`;
  if (typeof value === "object") return "an object";
  return typeof value === "undefined" ? "undefined" : `${typeof value} ${String(value)}`;
}

/**
 * The first envelope field a save reads that `event` lacks, as `[pointer, message]`, or null.
 * Only the envelope's shape: the schema is not checked here, as Python's save_case does not
 * check it (a log read from a file was checked when it was read).
 */
function envelopeProblem(event: unknown): [string, string] | null {
  if (!isObj(event)) return ["", `an event must be an object, not ${describe(event)}`];
  const e = event as Record<string, unknown>;
  for (const key of ["event_id", "type", "ts"]) {
    if (typeof e[key] !== "string") return [`/${key}`, `${key} must be a string, not ${describe(e[key])}`];
  }
  if (!isObj(e["data"])) return ["/data", `data must be an object, not ${describe(e["data"])}`];
  return null;
}

/**
 * The arguments a JavaScript caller can get wrong that the refusals of 5.1 do not name (Python's
 * types rule them out): `events` an array of envelopes (`log_invalid` at `/<index>/...`
 * otherwise), `store` an artifact store, `dir` and `sandboxDir` strings.
 */
export function checkArguments(events: unknown, options: SaveCaseOptions): void {
  if (!Array.isArray(events)) {
    throw new CaseError("invalid_request", `the log must be an array of events, not ${describe(events)}`, { hint: LOG_HINT });
  }
  (events as unknown[]).forEach((event, index) => {
    const problem = envelopeProblem(event);
    if (problem !== null) {
      const pointer = `/${index}${problem[0]}`;
      throw new CaseError("log_invalid", `event ${pointer}: ${problem[1]}`, { pointer, hint: LOG_HINT });
    }
  });
  const store = options.store as unknown;
  if (!isObj(store) || typeof (store as { get?: unknown }).get !== "function") {
    throw new CaseError("invalid_request", `store must be an ArtifactStore, not ${describe(store)}`, {
      hint: "pass the thread's artifacts, such as store: thread.artifacts",
    });
  }
  if (typeof options.dir !== "string" || options.dir === "") {
    throw new CaseError("invalid_request", `dir must be the folder to save the case in, not ${describe(options.dir)}`, {
      hint: "pass dir: the path of a folder you can write to, as a string",
    });
  }
  if (options.draft !== undefined && typeof options.draft !== "boolean") {
    throw new CaseError("invalid_request", `draft must be true, false or undefined, not ${describe(options.draft)}`, {
      hint: "pass draft: false to save no matchers, draft: true to add drafted ones, or leave it out",
    });
  }
  if (options.sandboxDir !== undefined && (typeof options.sandboxDir !== "string" || options.sandboxDir === "")) {
    throw new CaseError("invalid_request", `sandboxDir must be a folder path, not ${describe(options.sandboxDir)}`, {
      hint: "pass sandboxDir: the path of the folder holding the sandbox files, or leave it out",
    });
  }
}

/** The sandbox option: the sandbox the thread was recorded with (it says whether it blocks egress). */
export function checkSandbox(sandbox: unknown): void {
  if (!isObj(sandbox) || typeof (sandbox as { blocksEgress?: unknown }).blocksEgress !== "boolean") {
    throw new CaseError("invalid_request", `sandbox must be the thread's sandbox, not ${describe(sandbox)}`, {
      hint: "pass the sandbox the thread was recorded with, such as sandbox: thread.sandbox",
    });
  }
}
