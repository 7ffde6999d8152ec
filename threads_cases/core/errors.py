"""The one error type of threads-cases, carrying a stable reason code and a location.

Every refusal and failure the library raises is a :class:`CaseError`. Reason codes are
listed in ``spec/reason-codes.md``; the CLI renders an error as::

    error[log_invalid]: path/to/log.jsonl:12: /data/tool_use_id: tool_result with no call
      hint: every tool_result must answer a tool_called event earlier in the same turn

and exits with the status the spec assigns to the code (see :data:`EXIT_STATUS`).
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace

from .shapes import ProblemRecord

#: Reason codes of the spec (spec/reason-codes.md) with the hint printed under each error.
REASON_HINTS: dict[str, str] = {
    "log_invalid": "the log must follow spec/thread-log.md; run `threads-cases validate LOG`",
    "json_invalid": "the file must be strict JSON as described in spec/strict-json.md",
    "unsafe_value": "use values that survive every language: finite numbers, "
    "integers within +-(2^53-1), string keys",
    "invalid_request": "check the command's arguments with --help",
    "dialect_unknown": "use one of the dialects under spec/dialects/",
    "io_error": "check that the path exists and is readable",
    "event_not_found": "list the turns and their event ids with `threads-cases turns LOG`, "
    "or pick a turn with --turn N",
    "no_turn_after_fork": "the fork point is the event just before a user_message; "
    "`threads-cases turns LOG` lists them",
    "turn_incomplete": "save a turn that has finished (turn_completed or turn_failed), "
    "with no tool call in flight at the fork point",
    "egress_policy_unsupported": "record the thread with a sandbox that blocks the network, "
    "such as FakeSandbox",
    "case_exists": "pass --overwrite to replace it, or choose another --name",
    "secret_detected": "pass --redact to replace them with stable placeholders, or "
    "--allow-secrets to save them knowingly",
    "case_too_large": "save a turn with smaller inputs, or fork later in the thread",
    "replay_failed": "save with --no-verify to keep a case that fails today on purpose",
    "sandbox_content_missing": "save the case again with --sandbox DIR holding the files as "
    "they were when the turn ran",
    "case_invalid": "run `threads-cases validate CASE` to see every problem of the case",
    "format_unsupported": "upgrade threads-cases, or re-save the case",
    "driver_unavailable": "run `threads-cases implementations` to see why it cannot start",
    "import_repaired": "the line was read as its writer reads it; check the value if it matters "
    "(spec/importers.md section 4)",
    "import_skipped": "the line could not be read; pass --strict to refuse the file instead",
    "baseline_invalid": "see schemas/baseline.schema.json (spec/replay.md section 12); "
    "`threads-cases baseline update` writes a valid file",
    "agent_unavailable": "check the agent reference (--agent, or agent in threads-cases.toml "
    "or under [tool.threads-cases] of pyproject.toml) and --app-dir: threads-py takes "
    "module:attribute, threads-ts ./file.mjs#export (spec/replay.md 8)",
    "handler_failed": "the handler itself raised, not the model's input: fix the handler; "
    'for bad arguments it returns ToolResult("why", is_error=True) (spec/replay.md 8.1)',
    "handler_missing": "replay your own agent, which holds the handler: --agent "
    "module:attribute (threads-py) or --agent ./agent.mjs#export (threads-ts), or agent in "
    "threads-cases.toml or under [tool.threads-cases] of pyproject.toml; with an agent in one "
    'language only, run that implementation alone: impl = ["threads-py"] in the settings, or '
    "--impl (spec/replay.md 8)",
}

#: Exit status per reason code; anything not listed exits 1.
EXIT_STATUS: dict[str, int] = {
    "invalid_request": 2,
    "dialect_unknown": 2,
    "baseline_invalid": 2,
}


@dataclass(frozen=True)
class Location:
    """Where a problem is: a file (or ``None``), a 1-based line (or ``None``) and a JSON pointer."""

    file: str | None = None
    line: int | None = None
    pointer: str | None = None

    def render(self) -> str:
        parts: list[str] = []
        if self.file is not None:
            parts.append(self.file if self.line is None else f"{self.file}:{self.line}")
        elif self.line is not None:
            parts.append(f"line {self.line}")
        if self.pointer is not None:
            parts.append(self.pointer or "/")
        return ": ".join(parts)


@dataclass(frozen=True)
class Problem:
    """One problem found: ``{code, message, file, line, pointer}``."""

    code: str
    message: str
    location: Location = field(default_factory=Location)
    hint: str = field(default="", compare=False)

    def render(self) -> str:
        where = self.location.render()
        return f"{where}: {self.message}" if where else self.message

    def to_json(self) -> ProblemRecord:
        return {
            "code": self.code,
            "message": self.message,
            "file": self.location.file,
            "line": self.location.line,
            "pointer": self.location.pointer,
        }


class CaseError(Exception):
    """A refusal or failure with a stable reason ``code``.

    Attributes: ``code`` (a reason code from spec/reason-codes.md), ``message`` (one
    sentence, never containing secret values), ``location`` (file, line, JSON pointer) and
    ``hint`` (one line telling the user what to do).
    """

    def __init__(
        self,
        code: str,
        message: str,
        *,
        file: str | None = None,
        line: int | None = None,
        pointer: str | None = None,
        hint: str | None = None,
    ) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.location = Location(file, line, pointer)
        self.hint = hint if hint is not None else REASON_HINTS.get(code, "")

    @property
    def exit_status(self) -> int:
        return EXIT_STATUS.get(self.code, 1)

    def at(
        self, *, file: str | None = None, line: int | None = None, pointer: str | None = None
    ) -> CaseError:
        """Return this error with missing location parts filled in (existing parts win)."""
        loc = self.location
        self.location = replace(
            loc,
            file=loc.file if loc.file is not None else file,
            line=loc.line if loc.line is not None else line,
            pointer=loc.pointer if loc.pointer is not None else pointer,
        )
        return self

    def problem(self) -> Problem:
        return Problem(self.code, self.message, self.location, self.hint)

    def render(self) -> str:
        return f"error[{self.code}]: {self.problem().render()}"

    def __str__(self) -> str:
        return self.problem().render()


def pointer_join(parts: list[str | int] | tuple[str | int, ...]) -> str:
    """RFC 6901 JSON pointer for a path of keys and indexes (``[]`` gives ``""``)."""
    out = []
    for p in parts:
        s = str(p).replace("~", "~0").replace("/", "~1")
        out.append("/" + s)
    return "".join(out)
