/**
 * Models: what answers a turn's model requests (spec/replay.md, section 3).
 *
 * A model answers `respond(request, index)`; `request` is `{model, system, messages, tools}`
 * and `index` counts the turn's model calls from 0. {@link ScriptedModel} answers from a list
 * of recorded replies, in order, and is how a replay answers from `model.json`.
 */

import { CaseError } from "../core/errors.js";
import { type JsonObject, isObj } from "../core/strictjson.js";
import { requestSha256 } from "./request.js";

export { requestSha256 };

export interface Usage {
  input_tokens: number;
  output_tokens: number;
}

export interface Reply {
  message: JsonObject & { role: "assistant"; content: JsonObject[] };
  stop_reason: string;
  usage: Usage;
}

export interface Model {
  respond(request: JsonObject, index: number): Reply;
}

/** A CaseError that stops a turn, with the key a supply answer would go under. */
export class StopError extends CaseError {
  constructor(
    code: ConstructorParameters<typeof CaseError>[0],
    message: string,
    readonly stopKey: string,
    hint?: string,
  ) {
    super(code, message, { hint });
  }
}

/** More model calls than recorded replies: `model_exhausted`, stop_key `model:<n>`. */
export function modelExhausted(index: number): StopError {
  return new StopError(
    "model_exhausted",
    `the agent asked for model reply ${index} (counting from 0), which the recording does not hold`,
    `model:${index}`,
    `record the missing reply, or answer it with --supply '{"calls": {"model:${index}": <reply>}}'`,
  );
}

const isCount = (v: unknown): boolean => typeof v === "number" && Number.isInteger(v) && v >= 0;

/** Check a reply's shape; return `{message, stop_reason, usage}` (`invalid_request` naming `where`). */
export function normalizeReply(reply: unknown, where = "reply"): Reply {
  if (!isObj(reply)) throw new CaseError("invalid_request", `${where} must be an object`);
  const msg = reply["message"];
  if (
    !(
      isObj(msg) &&
      msg["role"] === "assistant" &&
      Array.isArray(msg["content"]) &&
      msg["content"].every((b) => isObj(b) && typeof b["type"] === "string")
    )
  ) {
    throw new CaseError("invalid_request", `${where}.message must be {role: assistant, content: [blocks]}`);
  }
  const stop = reply["stop_reason"];
  if (typeof stop !== "string" || stop === "") throw new CaseError("invalid_request", `${where}.stop_reason must be a non-empty string`);
  const usage = Object.hasOwn(reply, "usage") ? reply["usage"] : { input_tokens: 0, output_tokens: 0 };
  if (!(isObj(usage) && isCount(usage["input_tokens"]) && isCount(usage["output_tokens"]))) {
    throw new CaseError("invalid_request", `${where}.usage must hold input_tokens and output_tokens`);
  }
  for (const b of msg["content"] as JsonObject[]) {
    if (b["type"] === "tool_use" && !(typeof b["id"] === "string" && typeof b["name"] === "string" && isObj(b["input"]))) {
      throw new CaseError("invalid_request", `${where} has a tool_use block without id/name/input`);
    }
  }
  return { message: msg as Reply["message"], stop_reason: stop, usage: usage as unknown as Usage };
}

/** Answers the n-th call with the n-th reply, then from `supply`, then stops with model_exhausted. */
export class ScriptedModel implements Model {
  readonly replies: Reply[];
  readonly requests: string[] = [];
  used = 0;

  constructor(
    replies: readonly unknown[],
    private readonly supply: ReadonlyMap<number, unknown> = new Map(),
  ) {
    this.replies = replies.map((r, i) => normalizeReply(r, `replies[${i}]`));
  }

  respond(request: JsonObject, index: number): Reply {
    this.requests.push(requestSha256(request));
    const recorded = this.replies[index];
    if (recorded !== undefined) {
      this.used = Math.max(this.used, index + 1);
      return recorded;
    }
    if (this.supply.has(index)) return normalizeReply(this.supply.get(index), `supply model:${index}`);
    throw modelExhausted(index);
  }
}

/** A final reply holding one text block (stop_reason `end_turn`). */
export function textReply(text: string, usage: Partial<Usage> = {}): Reply {
  return {
    message: { role: "assistant", content: [{ type: "text", text }] },
    stop_reason: "end_turn",
    usage: { input_tokens: usage.input_tokens ?? 0, output_tokens: usage.output_tokens ?? 0 },
  };
}

/** A reply calling tools: each call is `[tool_use_id, name, input]`; stop_reason `tool_use`. */
export function toolReply(calls: ReadonlyArray<[string, string, JsonObject]>, options: Partial<Usage> & { text?: string } = {}): Reply {
  const content: JsonObject[] = [];
  if (options.text) content.push({ type: "text", text: options.text });
  for (const [id, name, input] of calls) content.push({ type: "tool_use", id, name, input });
  return {
    message: { role: "assistant", content },
    stop_reason: "tool_use",
    usage: { input_tokens: options.input_tokens ?? 0, output_tokens: options.output_tokens ?? 0 },
  };
}
