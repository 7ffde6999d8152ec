/**
 * The model request a state asks for, and its `request_sha256`, kept incrementally
 * (mirrors threads_cases/reference/request.py; spec/replay.md, "Cost").
 *
 * The RFC 8785 bytes of a request are `{"messages":[m1,...,mk],"model":..,"system":..,"tools":[..]}`.
 * The reducer only appends messages or extends the last one, and `restored` replaces the list,
 * so every message before the last is final while the list object stays the same: a
 * {@link RequestHasher} feeds each once into a running sha256 and, per call, encodes only the
 * last message and the tail.
 */

import { createHash, type Hash } from "node:crypto";

import { canonicalLine } from "../core/canonical.js";
import type { JsonObject, JsonValue } from "../core/strictjson.js";
import type { State } from "../core/reducer.js";

const NO_AGENT: JsonObject = { model: "", system: "", tools: [] };

/** Hashes already known for request objects built by {@link RequestHasher.request}. */
const KNOWN = new WeakMap<object, string>();

function tools(agent: JsonObject): JsonValue {
  return (agent["tools"] as JsonObject[]).map((t) => ({
    name: t["name"] as JsonValue,
    description: t["description"] as JsonValue,
    input_schema: t["input_schema"] as JsonValue,
  }));
}

/** The model request a state asks for: `{model, system, messages, tools}` (spec/thread-log.md 3.4). */
export function buildRequest(state: State): JsonObject {
  const agent = (state.agent ?? NO_AGENT) as JsonObject;
  return {
    model: agent["model"] as JsonValue,
    system: agent["system"] as JsonValue,
    messages: state.messages as unknown as JsonValue,
    tools: tools(agent),
  };
}

/** Hex sha256 of the RFC 8785 form of `{model, system, messages, tools}`. */
export function requestSha256(request: JsonValue): string {
  if (request !== null && typeof request === "object") {
    const known = KNOWN.get(request);
    if (known !== undefined) return known;
  }
  return createHash("sha256").update(canonicalLine(request), "utf8").digest("hex");
}

/**
 * `requestSha256(buildRequest(state))` in time proportional to what changed since the previous
 * call on the same thread. A replaced or shorter `messages` list, or a changed agent, starts again.
 */
export class RequestHasher {
  private sealed = 0;
  private lastSealed: unknown = undefined;
  private h: Hash = createHash("sha256").update('{"messages":[', "utf8");
  private agent: unknown = undefined;
  private tail = "";

  /** An independent hasher in the same position (a fork's, at the end of the log). */
  copy(): RequestHasher {
    const other = new RequestHasher();
    other.sealed = this.sealed;
    other.lastSealed = this.lastSealed;
    other.h = this.h.copy();
    other.agent = this.agent;
    other.tail = this.tail;
    return other;
  }

  private reset(): void {
    this.sealed = 0;
    this.lastSealed = undefined;
    this.h = createHash("sha256").update('{"messages":[', "utf8");
  }

  private tailFor(agent: JsonObject): string {
    if (agent !== this.agent) {
      this.agent = agent;
      this.tail = `],"model":${canonicalLine(agent["model"])},"system":${canonicalLine(agent["system"])},"tools":${canonicalLine(tools(agent))}}`;
    }
    return this.tail;
  }

  /** The hex `request_sha256` of the request `state` asks for. */
  sha256(state: State): string {
    const messages = state.messages as unknown[];
    // Sealed messages are never changed in place (only the last slot is replaced), so the same
    // object at the last sealed slot means the same sealed prefix, also in a copy of the list
    // (a fork's reducer copies a shared list on its first change).
    if (messages.length < this.sealed || (this.sealed > 0 && messages[this.sealed - 1] !== this.lastSealed)) this.reset();
    while (this.sealed < messages.length - 1) {
      const msg = messages[this.sealed];
      if (this.sealed > 0) this.h.update(",", "utf8");
      this.h.update(canonicalLine(msg), "utf8");
      this.sealed += 1;
      this.lastSealed = msg;
    }
    const h = this.h.copy();
    if (messages.length > this.sealed) {
      if (this.sealed > 0) h.update(",", "utf8");
      h.update(canonicalLine(messages[messages.length - 1]), "utf8");
    }
    h.update(this.tailFor((state.agent ?? NO_AGENT) as JsonObject), "utf8");
    return h.digest("hex");
  }

  /** {@link buildRequest} of `state`, with its hash known to {@link requestSha256}. */
  request(state: State): { request: JsonObject; sha256: string } {
    const request = buildRequest(state);
    const sha256 = this.sha256(state);
    KNOWN.set(request, sha256);
    return { request, sha256 };
  }
}
