"""What every importer shares: the turn model the format readers produce (:class:`Turn`,
:class:`Reply`, :class:`Extra`), timestamps, tool effects and the refusal helper; the
:class:`~threads_cases.importers.emitter.Emitter` turns the items into checked events.

A format reader (``claude_code``, ``codex``) yields, in log order:

* :class:`Extra` -- an ``x_`` extension event outside any turn;
* :class:`Turn` -- one turn: the user input (or ``None``), then a list of :class:`Reply`
  and :class:`Extra` items in order, and how it ended (:attr:`Turn.failed`).

Refusals raise ``CaseError("import_invalid")`` (exit status 1) with the source file, line and
``<line type>: message``; a bad timestamp ``log_invalid`` (:func:`check_timestamp`).
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from ..core.errors import CaseError
from ..core.texts import quote
from ..core.timestamps import MAX_MS, MIN_MS, check_ts, timestamp_problem, valid_ts_ms

IMPORT_HINT = (
    "fix or remove the line (the import writes nothing while a line is refused); "
    "without --strict, unreadable and malformed lines are skipped with a warning"
)

#: Tools that only read: effect "read" (every other tool is "write").
READ_ONLY_TOOLS = frozenset(
    {
        "Read",
        "Glob",
        "Grep",
        "LS",
        "WebFetch",
        "WebSearch",
        "NotebookRead",
        "TodoRead",
        "ListMcpResourcesTool",
        "ReadMcpResourceTool",
        "BashOutput",
        "read_file",
        "list_files",
        "web_search",
        "view_image",
        "list_dir",
        "grep_files",
        "find",
        "search",
    }
)

PLACEHOLDER_PROMPT = "[the user prompt is not recorded in this transcript]"

_TS = re.compile(
    r"^(\d{4})-(\d{2})-(\d{2})[T ](\d{2}):(\d{2}):(\d{2})(?:[.,](\d+))?"
    r"(Z|z|[+-]\d{2}:?\d{2})?$"
)


WRONG_FORMAT_HINT = (
    "`threads-cases import auto FILE -o LOG` tries every format (claude-code, codex, vcr, "
    "swe-agent, inspect-ai, openhands, threads); a thread log needs no import"
)


def json_object(value: Any) -> dict[str, Any]:
    """``value`` when it is a JSON object, else ``{}`` (a field of a damaged record read as
    empty, never a traceback)."""
    return value if isinstance(value, dict) else {}


def content_text(value: Any) -> str:
    """The text of a message's content: a string, or the ``text`` parts of a list of content
    parts joined (other parts and other values give ``""``)."""
    if isinstance(value, str):
        return value
    if isinstance(value, list):
        return "".join(
            p.get("text", "") for p in value if isinstance(p, dict) and p.get("type") == "text"
        )
    return ""


def wrong_format_hint(file: str, asked: str) -> str:
    """The hint of a file that is not in the ``asked`` format at all: the format ``import
    auto`` detects in it, with the command that imports it, or :data:`WRONG_FORMAT_HINT`
    when it detects none (spec/importers.md section 7)."""
    import shlex

    from .detect import detect_format  # detect imports the importers: only when refusing

    try:
        found = detect_format(file)
    except (CaseError, OSError):
        return WRONG_FORMAT_HINT
    if found == asked:
        return WRONG_FORMAT_HINT
    return (
        f"this looks like the {found} format: `threads-cases import {found} "
        f"{shlex.quote(file)} -o LOG` (`import auto` detects it)"
    )


def import_error(
    message: str, *, file: str, line: int | None, kind: str | None, hint: str = IMPORT_HINT
) -> CaseError:
    """``CaseError("import_invalid")``: ``FILE:LINE: <line type>: message`` with the hint."""
    text = f"{kind}: {message}" if kind else message
    return CaseError("import_invalid", text, file=file, line=line, hint=hint)


def imported_agent(
    name: str,
    model: str,
    tools: Iterable[str],
    definitions: Mapping[str, dict[str, Any]] | None = None,
) -> dict[str, Any]:
    """The ``agent`` of an imported thread: every tool external, effect by name; its
    ``description`` and ``input_schema`` from ``definitions`` (by tool name) when the source
    defines the tool, else ``""`` and ``{"type": "object"}`` (a transcript names its tools
    only by their calls)."""
    defs = definitions or {}
    out = []
    for n in tools:
        d = defs.get(n) or {}
        out.append(
            {
                "name": n,
                "description": d.get("description", ""),
                "input_schema": d.get("input_schema", {"type": "object"}),
                "kind": "external",
                "effect": tool_effect(n),
            }
        )
    return {"name": name, "model": model, "system": "", "tools": out}


def tool_effect(name: str) -> str:
    """``"read"`` for the read-only tools of :data:`READ_ONLY_TOOLS`, else ``"write"``."""
    return "read" if name in READ_ONLY_TOOLS else "write"


TS_HINT = (
    "fix the line's timestamp (an RFC 3339 time with a real calendar date, years 0001 to "
    "9999, or epoch seconds/milliseconds) or remove the line; the import never guesses a time"
)


def _ts_of(value: Any) -> tuple[int | None, str | None]:
    """``(ms, None)`` for a time, ``(None, None)`` for no time, ``(None, why)`` for a bad one."""
    if value is None:
        return None, None
    if isinstance(value, bool) or not isinstance(value, (int, float, str)):
        return None, "is not a time (an RFC 3339 string or a number of epoch seconds)"
    if not isinstance(value, str):
        v = float(value)
        ms = int(v if v > 1e11 else v * 1000) if 0 <= v < 1e16 else -1
        if not 0 <= ms <= MAX_MS:
            return None, "is not an epoch time from 1970 to year 9999"
        return ms, None
    fast = valid_ts_ms(value)  # the usual YYYY-MM-DDTHH:MM:SS.mmmZ on a day seen before
    if fast is not None:
        return fast, None
    m = _TS.match(value.strip())
    if not m:
        return None, "is not an RFC 3339 time with a four-digit year (0001 to 9999)"
    y, mo, d, h, mi, s, frac, tz = m.groups()
    try:
        dt = datetime(int(y), int(mo), int(d), int(h), int(mi), int(s), tzinfo=UTC)
    except ValueError:
        return None, f"is not a real calendar date and time ({y}-{mo}-{d} {h}:{mi}:{s})"
    ms = int(dt.timestamp()) * 1000 + int((frac or "0")[:3].ljust(3, "0"))
    if tz and tz not in ("Z", "z"):
        sign = 1 if tz[0] == "+" else -1
        digits = tz[1:].replace(":", "")
        if int(digits[:2]) > 23 or int(digits[2:]) > 59:
            return None, f"has an offset {tz} that does not exist"
        ms -= sign * (int(digits[:2]) * 60 + int(digits[2:])) * 60_000
    if not MIN_MS <= ms <= MAX_MS:  # an event time stays within years 0001 to 9999
        return None, "is outside years 0001 to 9999 in UTC"
    if len(value) == 24 and timestamp_problem(value) is None:
        check_ts(value)  # remembers the day for valid_ts_ms
    return ms, None


def parse_ts_ms(value: Any) -> int | None:
    """An RFC 3339 timestamp (any precision, ``Z`` or an offset) or epoch seconds/ms -> ms;
    ``None`` for a missing or bad one (:func:`check_timestamp` refuses the bad ones)."""
    if type(value) is str:
        ms = valid_ts_ms(value)  # the usual spelling, on a day seen before
        if ms is not None:
            return ms
    return _ts_of(value)[0]


def check_timestamp(record: Any, *, file: str, line: int) -> None:
    """Refuse a record whose ``timestamp`` is present but not a real time: ``log_invalid``
    at ``FILE:LINE``, pointer ``/timestamp`` (spec/importers.md section 4). A record without
    one (or with ``null``) takes the previous event's time."""
    if not isinstance(record, dict) or "timestamp" not in record:
        return
    value = record["timestamp"]
    if type(value) is str and valid_ts_ms(value) is not None:
        return
    why = _ts_of(value)[1]
    if why is not None:
        kind = record.get("type")
        where = f"{kind}: " if isinstance(kind, str) else ""
        raise CaseError(
            "log_invalid",
            f"{where}timestamp {quote(record['timestamp'])} {why}",
            file=file,
            line=line,
            pointer="/timestamp",
            hint=TS_HINT,
        )


@dataclass(slots=True)  # one made a source line: slots make it cheaper to build and read
class Ref:
    """Where an item came from: an id base (line uuid or ``L<line>``), a time and a line."""

    base: str
    ts: int | None
    line: int | None
    kind: str = ""


@dataclass
class Extra:
    """An ``x_`` extension event: ``type`` (starting with ``x_``) and its ``data``."""

    type: str
    data: dict[str, Any]
    ref: Ref
    suffix: str = "x"
    #: ``data`` is known plain and written by orjson (``core.canonical.canonical_event_line``'s
    #: ``data_plain``): it is not scanned again
    plain: bool = False


@dataclass(slots=True)
class Result:
    content: Any
    is_error: bool
    ref: Ref


#: the stop reason of a reply the recording stops inside (:attr:`Reply.cut`;
#: spec/importers.md section 1): the word its turn's ``turn_failed`` code says
CUT_STOP_REASON = "interrupted"

#: the hint of a refusal under ``--strict`` of what the lenient reading repairs or skips
STRICT_HINT = (
    "--strict refuses what the import would repair, skip or cut short with a warning; "
    "import without --strict to read it with that warning, or fix the file"
)


@dataclass
class Reply:
    """One model reply: its blocks, the source's stop_reason, usage, and the results of its
    tool_use blocks by tool_use_id."""

    blocks: list[dict[str, Any]]
    ref: Ref
    stop_reason: str | None = None
    usage: dict[str, Any] = field(default_factory=dict)
    results: dict[str, Result] = field(default_factory=dict)
    msg_id: str | None = None
    last_uuid: str | None = None
    #: the token total of ``usage`` (set with it by the Claude Code mapping)
    usage_total: int = 0
    #: ``blocks`` and ``usage`` are parts of a value known plain that orjson wrote
    #: (``core.canonical.canonical_event_line``'s ``data_plain``): not scanned again
    plain: bool = False
    #: a call id the reply gave to several tool_use blocks -> the ids its calls are written
    #: with, in block order (``[id, id-dup2, ...]``, :func:`.callids.scope_call_ids`); None
    #: while every id of the reply is its own
    aliases: dict[str, list[str]] | None = None
    #: the recording stops inside this reply (a stream cut short, a background response
    #: never completed, a transcript cut after a reply with no stop reason): it never said
    #: how it ended, so its stop reason is :data:`CUT_STOP_REASON`, never ``end_turn``
    cut: bool = False

    def tool_uses(self) -> list[dict[str, Any]]:
        return [b for b in self.blocks if b.get("type") == "tool_use"]

    def answer(self, call_id: str, result: Result, *, replace: bool = True) -> bool:
        """Record ``result`` as the result of this reply's call ``call_id``. Calls sharing
        the id (:attr:`aliases`) are answered by occurrence: the first one not answered yet
        takes it. When every call of the id is answered, the last one's result is replaced
        (``replace``, a later copy wins) or ``result`` is dropped: False."""
        ids = self.aliases.get(call_id) if self.aliases is not None else None
        if ids is None:
            if not replace and call_id in self.results:
                return False
            self.results[call_id] = result
            return True
        for cid in ids:
            if cid not in self.results:
                self.results[cid] = result
                return True
        if replace:
            self.results[ids[-1]] = result
        return replace


@dataclass
class Turn:
    """A turn: ``content`` (the user input, or None), ``items`` (Reply and Extra in order),
    ``failed`` (``(code, message, ref)`` when the source says it failed or was interrupted)."""

    content: Any
    ref: Ref
    items: list[Reply | Extra] = field(default_factory=list)
    failed: tuple[str, str, Ref] | None = None
    #: ``content`` is part of a value known plain that orjson wrote (as :class:`Reply`'s)
    plain: bool = False

    @property
    def replies(self) -> list[Reply]:
        return [i for i in self.items if isinstance(i, Reply)]


@dataclass(frozen=True)
class ImportWarning:
    """One line the import repaired or skipped (spec/importers.md section 4): ``line`` (from
    1), ``code`` (``import_repaired`` | ``import_skipped``), ``reason`` (``duplicate_key``,
    ``big_integer``, ``lone_surrogate``, ``invalid_utf8``, ``nul_bytes``, ``joined_records``,
    ``cut_record``, ``invalid_line``; for a record's meaning ``reused_id``,
    ``double_encoded``, ``arguments_not_json``, ``not_continued``, ``not_completed``,
    ``duplicate_call_id``, ``invalid_usage``, ``unmatched_result``, ``empty_call_id``) and a
    one-line
    ``message``."""

    line: int
    code: str
    reason: str
    message: str

    def as_json(self) -> dict[str, Any]:
        return {
            "line": self.line,
            "code": self.code,
            "reason": self.reason,
            "message": self.message,
        }


@dataclass
class Stats:
    """What an import skipped or changed: ``skipped`` lines per kind (``--verbose``),
    ``invalid`` (lines skipped as unreadable or malformed), ``warnings`` (every repair and
    skip with its line, :class:`ImportWarning`) and ``notes``.

    ``strict_file``, set under ``--strict`` (the transcript's name), makes every warning a
    refusal instead: ``import_invalid`` at ``FILE:LINE: <reason>: <message>``
    (spec/importers.md section 4, "--strict"). Strict is the one rule "refuse whatever the
    lenient reading would repair, skip or cut short", kept in this one place so no
    importer can warn where it should refuse."""

    skipped: Counter[str] = field(default_factory=Counter)
    invalid: int = 0
    notes: list[str] = field(default_factory=list)
    warnings: list[ImportWarning] = field(default_factory=list)
    strict_file: str | None = None

    def skip(self, kind: str, n: int = 1) -> None:
        self.skipped[kind] += n

    def warn(
        self, line: int, code: str, reason: str, message: str, *, hint: str = STRICT_HINT
    ) -> None:
        """Record a warning; under ``--strict`` refuse instead, with ``hint``."""
        if self.strict_file is not None:
            raise import_error(
                f"{reason}: {message}",
                file=self.strict_file,
                line=line or None,
                kind=None,
                hint=hint,
            )
        self.warnings.append(ImportWarning(line, code, reason, message))


#: the reason of a usage count that is not one (spec/importers.md section 4)
INVALID_USAGE = "invalid_usage"
_MAX_COUNT = 2**53 - 1


def usage_problems(raw: Any) -> list[tuple[str, Any]]:
    """The ``(key, value)`` of each number of a reply's usage that is not a token count (a
    non-negative integer within 2^53-1): the emitter writes it as 0 (``input_tokens``,
    ``output_tokens``) or drops it, with an ``invalid_usage`` warning. Values that are no
    numbers (a ``service_tier`` name, a nested breakdown) are not counts and not listed."""
    if not isinstance(raw, dict):
        return []
    return [
        (k, v)
        for k, v in raw.items()
        if type(v) is not bool
        and isinstance(v, int | float)
        and not (type(v) is int and 0 <= v <= _MAX_COUNT)
    ]


def warn_usage(raw: Any, line: int | None, stats: Stats) -> None:
    """One ``invalid_usage`` warning per :func:`usage_problems` of ``raw`` (under
    ``--strict``, a refusal)."""
    for k, v in usage_problems(raw):
        done = "written as 0" if k in ("input_tokens", "output_tokens") else "dropped"
        stats.warn(
            line or 0,
            "import_repaired",
            INVALID_USAGE,
            f"the reply's usage {k} is {v!r}, not a non-negative integer within 2^53-1: {done}",
        )


def stats_for(stats: Stats | None, *, strict: bool, file: str) -> Stats:
    """``stats`` (a new :class:`Stats` when None), refusing every warning under ``strict``
    (:attr:`Stats.strict_file`): each source takes its stats through here, so a source
    built directly with ``strict=True`` refuses what ``open_source`` would."""
    out = stats if stats is not None else Stats()
    if strict and out.strict_file is None:
        out.strict_file = file
    return out


#: why a turn open at the end of a transcript whose last record is damaged is cut short
CUT_AT_END = "the transcript ends in a damaged record inside this turn"


def cut_short(turn: Turn, why: str, stats: Stats, *, place: str | None = None) -> None:
    """Fail ``turn`` with ``interrupted`` (``why``) where it would otherwise complete, with a
    note in ``stats``: the transcript stopped inside it (spec/importers.md section 1). A turn
    with no reply, or whose last reply calls a tool, fails ``interrupted`` anyway (the
    emitter's rule), and gets the note too: the cut is why it did not complete. A turn whose
    failure the source recorded gets none. ``place`` (where the text stops, as the note
    names it: ``line 94``, ``samples/1_epoch_1.json line 1 column 1200``) leads the note in
    place of the line the turn starts on, for a format whose lines are no turns' places."""
    if turn.failed is not None:
        return  # the source recorded how the turn ended
    replies = turn.replies
    if replies and not replies[-1].tool_uses():
        turn.failed = ("interrupted", why, replies[-1].ref)
    where = (
        f"line {turn.ref.line}: the turn starting here"
        if place is None
        else (f"{place}: the turn open where the text stops")
    )
    stats.notes.append(f"{where} is recorded as interrupted (turn_failed), not completed: {why}")
