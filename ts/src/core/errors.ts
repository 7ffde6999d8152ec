/**
 * The one error type of threads-cases: a stable reason code plus a location
 * (spec/reason-codes.md). Mirrors the Python `CaseError`.
 */

export type ReasonCode =
  | "log_invalid"
  | "json_invalid"
  | "unsafe_value"
  | "invalid_request"
  | "dialect_unknown"
  | "io_error"
  // cases, replay, drivers (spec/case-format.md, spec/replay.md, spec/driver-protocol.md)
  | "case_invalid"
  | "case_too_large"
  | "format_unsupported"
  | "event_not_found"
  | "no_turn_after_fork"
  | "turn_incomplete"
  | "egress_policy_unsupported"
  | "secret_detected"
  | "case_too_large"
  | "case_exists"
  | "model_exhausted"
  | "missing_stub"
  | "egress_blocked"
  | "step_limit"
  | "sandbox_content_missing"
  | "replay_failed"
  | "protocol_error"
  // the user's own agent (spec/replay.md section 8)
  | "agent_unavailable"
  | "handler_missing"
  | "handler_failed"
  // live runs (spec/replay.md section 11): stops the harness answers, and its refusal
  | "live_budget_exceeded"
  | "live_call_failed"
  | "write_not_allowed"
  | "live_unavailable"
  // warnings of the Python importers (spec/importers.md section 4); listed for completeness
  | "import_repaired"
  | "import_skipped"
  // the Python harness's baseline file (spec/replay.md section 12); listed for completeness
  | "baseline_invalid"
  // a warning of the Python `validate` (cases that share a name); listed for completeness
  | "case_name_shared"
  | "internal_error";

export const REASON_HINTS: Readonly<Partial<Record<ReasonCode, string>>> = {
  log_invalid: "the log must follow spec/thread-log.md; run `threads-cases validate LOG`",
  json_invalid: "the file must be strict JSON as described in spec/strict-json.md",
  unsafe_value:
    "use values that survive every language: finite numbers, integers within +-(2^53-1), string keys",
  invalid_request: "check the command's arguments with --help",
  dialect_unknown: "use one of the dialects under spec/dialects/",
  io_error: "check that the path exists and is readable",
  // the same text as Python's REASON_HINTS (threads_cases/core/errors.py): a refusal of
  // saveCase carries the hint save_case gives (spec/conformance/save-errors/)
  event_not_found: "list the turns and their event ids with `threads-cases turns LOG`, or pick a turn with --turn N",
  no_turn_after_fork: "the fork point is the event just before a user_message; `threads-cases turns LOG` lists them",
  turn_incomplete: "save a turn that has finished (turn_completed or turn_failed), with no tool call in flight at the fork point",
  egress_policy_unsupported: "record the thread with a sandbox that blocks the network, such as FakeSandbox",
  case_exists: "pass --overwrite (overwrite=True) to replace it, or choose another --name",
  secret_detected: "pass --redact to replace them with stable placeholders, or --allow-secrets to save them knowingly",
  case_too_large: "save a turn with smaller inputs, or fork later in the thread",
  sandbox_content_missing: "save the case again with --sandbox DIR holding the files as they were when the turn ran",
  case_invalid: "run `threads-cases validate CASE` to see every problem of the case",
  format_unsupported: "upgrade threads-cases, or re-save the case",
  import_repaired: "the line was read as its writer reads it; check the value if it matters (spec/importers.md section 4)",
  import_skipped: "the line could not be read; pass --strict to refuse the file instead",
  baseline_invalid: "see schemas/baseline.schema.json (spec/replay.md section 12); `threads-cases baseline update` writes a valid file",
  agent_unavailable:
    "check the agent reference (--agent, or agent in threads-cases.toml or under [tool.threads-cases] of pyproject.toml) and --app-dir: threads-py takes module:attribute, threads-ts ./file.mjs#export (spec/replay.md 8)",
  handler_failed: 'the handler itself threw, not the model\'s input: fix the handler; for bad arguments it returns new ToolResult("why", true) (spec/replay.md 8.1)',
  handler_missing:
    'replay your own agent, which holds the handler: --agent module:attribute (threads-py) or --agent ./agent.mjs#export (threads-ts), or agent in threads-cases.toml or under [tool.threads-cases] of pyproject.toml; with an agent in one language only, run that implementation alone: impl = ["threads-py"] in the settings, or --impl (spec/replay.md 8)',

};

/** Exit status per reason code; anything not listed exits 1. */
export const EXIT_STATUS: Readonly<Partial<Record<ReasonCode, number>>> = {
  invalid_request: 2,
  dialect_unknown: 2,
};

export interface Location {
  file?: string | undefined;
  line?: number | undefined;
  pointer?: string | undefined;
}

export interface CaseErrorOptions extends Location {
  hint?: string | undefined;
}

/** A refusal or failure with a stable reason `code`, a one-sentence message and a location. */
export class CaseError extends Error {
  readonly code: ReasonCode;
  file: string | undefined;
  line: number | undefined;
  pointer: string | undefined;
  readonly hint: string;

  constructor(code: ReasonCode, message: string, options: CaseErrorOptions = {}) {
    super(message);
    this.name = "CaseError";
    this.code = code;
    this.file = options.file;
    this.line = options.line;
    this.pointer = options.pointer;
    this.hint = options.hint ?? REASON_HINTS[code] ?? "";
  }

  get exitStatus(): number {
    return EXIT_STATUS[this.code] ?? 1;
  }

  /** Fill in missing location parts (parts already set win); returns `this`. */
  at(location: Location): this {
    this.file ??= location.file;
    this.line ??= location.line;
    this.pointer ??= location.pointer;
    return this;
  }

  /** `file:line: pointer: message`, as the Python CLI renders a problem. */
  where(): string {
    const parts: string[] = [];
    if (this.file !== undefined) {
      parts.push(this.line === undefined ? this.file : `${this.file}:${this.line}`);
    } else if (this.line !== undefined) {
      parts.push(`line ${this.line}`);
    }
    if (this.pointer !== undefined) parts.push(this.pointer || "/");
    return parts.join(": ");
  }

  render(): string {
    const where = this.where();
    return `error[${this.code}]: ${where ? `${where}: ${this.message}` : this.message}`;
  }

  toJSON(): { code: string; message: string; file: string | null; line: number | null; pointer: string | null } {
    return {
      code: this.code,
      message: this.message,
      file: this.file ?? null,
      line: this.line ?? null,
      pointer: this.pointer ?? null,
    };
  }
}

/** RFC 6901 JSON pointer for a path of keys and indexes (`[]` gives `""`). */
export function pointerJoin(parts: ReadonlyArray<string | number>): string {
  let out = "";
  for (const p of parts) out += "/" + String(p).replace(/~/g, "~0").replace(/\//g, "~1");
  return out;
}
