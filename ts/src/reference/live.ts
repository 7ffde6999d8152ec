/**
 * A live turn on the TypeScript runtime: model calls answered by the harness (spec/replay.md
 * section 11, "Live rung"; spec/driver-protocol.md 2.5.1). Mirrors
 * threads_cases/reference/live.py.
 *
 * Every model call is asked of the harness: `ask(index, request, request_sha256)` returns
 * `{reply}` or `{stop: {code, stop_key, message}}`. The agent's `model` and `system` may be
 * replaced before the turn. An external call no stub (or supply) answers stops with
 * `write_not_allowed` when the tool's effect is `write` and its name is not in `allow_write`,
 * else with `missing_stub` (this runtime runs no external handler). Stubs are matched by
 * tool name and canonical input, never by the tool-use id.
 */

import { CaseError, type ReasonCode } from "../core/errors.js";
import { type JsonObject, isObj } from "../core/strictjson.js";
import { quote } from "../core/texts.js";
import type { AgentSpec, ToolResult } from "./agent.js";
import { normalizeReply, StopError, type Model, type Reply } from "./model.js";
import { requestSha256 } from "./request.js";

export type AskModel = (index: number, request: JsonObject, sha256: string) => JsonObject;

export interface LiveTurn {
  ask: AskModel;
  model?: string | undefined;
  system?: string | undefined;
  allowWrite: ReadonlySet<string>;
}


/** From the `live` object of a `replay` request (its schema is checked). */
export function liveTurnFromRequest(doc: JsonObject, ask: AskModel): LiveTurn {
  const model = doc["model"];
  const system = doc["system"];
  const allow = doc["allow_write"];
  return {
    ask,
    model: typeof model === "string" ? model : undefined,
    system: typeof system === "string" ? system : undefined,
    allowWrite: new Set(Array.isArray(allow) ? allow.filter((a): a is string => typeof a === "string") : []),
  };
}

/** The prefix state's agent with `model` and `system` replaced. */
export function liveAgentJson(live: LiveTurn, agent: JsonObject): JsonObject {
  const out: JsonObject = { ...agent };
  if (live.model !== undefined) out["model"] = live.model;
  if (live.system !== undefined) out["system"] = live.system;
  return out;
}

/** A model whose every call is asked of the harness; `used` stays 0. */
export class HarnessModel implements Model {
  readonly requests: string[] = [];
  used = 0;

  constructor(private readonly live: LiveTurn) {}

  respond(request: JsonObject, index: number): Reply {
    const sha = requestSha256(request);
    this.requests.push(sha);
    const answer = this.live.ask(index, request, sha);
    const stop = answer["stop"];
    if (isObj(stop)) {
      const code = typeof stop["code"] === "string" ? stop["code"] : "live_call_failed";
      const message = typeof stop["message"] === "string" ? stop["message"] : "";
      const key = typeof stop["stop_key"] === "string" ? stop["stop_key"] : `model:${index}`;
      throw new StopError(code as ReasonCode, message, key);
    }
    return normalizeReply(answer["reply"], `the harness's answer model:${index}`);
  }
}

/** `write_not_allowed`, stop key `tool:<name>` (the same text as the Python runtime). */
export function writeNotAllowed(name: string): StopError {
  return new StopError(
    "write_not_allowed",
    `the live turn called external tool ${quote(name)}, whose effect is write, with an input no stub answers`,
    `tool:${name}`,
    `record the call as a stub, or allow it with --allow-write tool:${name}`,
  );
}

/** External calls of a live turn: `stubs` first, then the write refusal (module comment). */
export function liveExternal(
  stubs: (name: string, input: JsonObject) => ToolResult,
  agent: AgentSpec,
  allowWrite: ReadonlySet<string>,
): (name: string, input: JsonObject) => ToolResult {
  return (name, input) => {
    try {
      return stubs(name, input);
    } catch (err) {
      if (!(err instanceof CaseError) || err.code !== "missing_stub") throw err;
      const tool = agent.tool(name);
      if (tool !== undefined && tool.effect === "write" && !allowWrite.has(name)) throw writeNotAllowed(name);
      throw err;
    }
  };
}
