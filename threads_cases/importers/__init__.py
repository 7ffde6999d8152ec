"""Importers: real agent sessions (Claude Code, Codex CLI) as canonical thread logs.

::

    from threads_cases.importers import import_events, import_to_file

    events = import_events("claude-code", "session.jsonl")            # in memory
    report = import_to_file("codex", "rollout.jsonl", "thread.jsonl")  # streamed, atomic

Formats (:data:`FORMATS`): ``claude-code`` (:mod:`.claude_code`), ``codex``
(:mod:`.codex`: ``codex exec --json`` streams in :mod:`.codex.exec` and rollout files in
:mod:`.codex.rollout`, told apart from the file) and ``vcr`` (:mod:`.vcr`: VCR cassettes of
the Anthropic Messages, OpenAI Chat Completions and Responses APIs) and ``swe-agent``
(:mod:`.swe_agent`: SWE-agent ``.traj`` trajectories), ``inspect-ai`` (:mod:`.inspect_ai`:
one sample and epoch of a ``.eval`` or ``.json`` eval log, ``sample=`` / ``epoch=`` pick
it), ``openhands`` (:mod:`.openhands`: OpenHands trajectories, lists of events) and
``threads`` (:mod:`.threads_export`: the threads runtime's ``threads export`` files).
The turn model shared by both is in :mod:`.common`, its mapping to events in
:mod:`.emitter`; each module's docstring lists which source lines become which events, which
are kept as ``x_`` extension events, and which are dropped.

The log written is canonical (``threads_cases.core.log.encode_log``), every event checked with
``threads_cases.core.log.check_events`` and the reducer on the way. Its thread_started is::

    {"agent": {"name": "claude-code" | "codex", "model": <first model seen>, "system": "",
               "tools": [{"name", "description": "", "input_schema": {"type": "object"},
                          "kind": "external", "effect": "read" | "write"}]},
     "metadata": {"source": "claude-code" | "codex", "session_id": str, "cwd"?: str, ...}}

Reading is lenient by default: a line that is not strict JSON is read as its writer's
``JSON.parse`` reads it, damaged lines are recovered or skipped, malformed records skipped;
each such line is an ``import_repaired`` / ``import_skipped`` warning in ``Stats.warnings``
(:mod:`.lenient`). ``strict=True`` refuses the first such warning instead (every one:
``Stats.strict_file``), a recording cut short too.

Reason codes: ``import_invalid`` (exit 1: with ``strict``, a malformed transcript line,
reported as ``FILE:LINE: <line type>: message``; nothing is written), ``invalid_request``
(an unknown format or ``--branch`` uuid), ``io_error``
(the transcript or the output cannot be read or written).
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, cast

from ..core.atomic import replacing
from ..core.dialects import CANONICAL
from ..core.errors import CaseError
from ..core.events import Event
from ..core.log import encode_log
from .claude_code import ClaudeCodeSource
from .codex import CodexSource
from .common import Stats, Turn
from .emitter import Emitter
from .inspect_ai import InspectSource
from .openhands import OpenHandsSource
from .source import gc_paused
from .swe_agent import SweAgentSource
from .threads_export import ThreadsExportSource
from .vcr import VcrSource

FORMATS = ("claude-code", "codex", "vcr", "swe-agent", "inspect-ai", "openhands", "threads")

__all__ = [
    "FORMATS",
    "ImportReport",
    "Stats",
    "import_events",
    "import_to_file",
    "iter_import",
    "open_source",
]


def open_source(
    fmt: str,
    path: str | os.PathLike[str],
    *,
    branch: str | None = None,
    prompt: str | None = None,
    strict: bool = False,
    stats: Stats | None = None,
    sample: str | None = None,
    epoch: int | None = None,
) -> (
    ClaudeCodeSource
    | CodexSource
    | VcrSource
    | SweAgentSource
    | InspectSource
    | OpenHandsSource
    | ThreadsExportSource
):
    """Scan a transcript (the first pass) and return its source.

    ``fmt`` is one of :data:`FORMATS`, or ``"auto"``: the format is detected from the file's
    first lines (:mod:`.detect`; a note says which). Raises ``CaseError("invalid_request")``
    for an unknown format, a ``branch`` with codex or an unknown ``branch`` uuid, and
    ``CaseError("import_invalid")`` for a malformed line or, with ``auto``, a file no format
    fits (the message names the formats tried). ``sample`` (the sample id, as text) and
    ``epoch`` pick the sample of an inspect-ai log (spec/importers.md 11.1); with another
    format they are ``invalid_request``.
    """
    stats = stats if stats is not None else Stats()
    if strict:  # every warning a refusal (Stats.strict_file)
        stats.strict_file = os.fspath(path)
    if fmt == "auto":
        from .detect import detect_format

        fmt = detect_format(path)
        stats.notes.append(f"{os.fspath(path)}: read as {fmt} (import auto)")
    if (sample is not None or epoch is not None) and fmt != "inspect-ai":
        raise CaseError("invalid_request", "--sample and --epoch are for inspect-ai logs only")
    if fmt == "claude-code":
        if prompt is not None:
            raise CaseError("invalid_request", "--prompt is for codex exec streams only")
        return ClaudeCodeSource(path, branch=branch, strict=strict, stats=stats)
    if fmt == "codex":
        if branch is not None:
            raise CaseError(
                "invalid_request",
                "--branch is for claude-code transcripts only (codex transcripts do not fork)",
            )
        return CodexSource(path, prompt=prompt, strict=strict, stats=stats)
    if fmt == "vcr":
        if branch is not None or prompt is not None:
            raise CaseError(
                "invalid_request",
                "--branch is for claude-code transcripts and --prompt for codex exec streams; "
                "a cassette records its prompts",
            )
        return VcrSource(path, strict=strict, stats=stats)
    if fmt == "swe-agent":
        if branch is not None or prompt is not None:
            raise CaseError(
                "invalid_request",
                "--branch and --prompt are not for SWE-agent trajectories (one run, one task)",
            )
        return SweAgentSource(path, strict=strict, stats=stats)
    if fmt == "inspect-ai":
        if branch is not None or prompt is not None:
            raise CaseError(
                "invalid_request",
                "--branch and --prompt are not for inspect-ai logs (--sample ID --epoch N "
                "picks the sample)",
            )
        return InspectSource(path, sample=sample, epoch=epoch, strict=strict, stats=stats)
    if fmt == "openhands":
        if branch is not None or prompt is not None:
            raise CaseError(
                "invalid_request", "--branch and --prompt are not for OpenHands trajectories"
            )
        return OpenHandsSource(path, strict=strict, stats=stats)
    if fmt == "threads":
        if branch is not None or prompt is not None:
            raise CaseError("invalid_request", "--branch and --prompt are not for threads exports")
        return ThreadsExportSource(path, strict=strict, stats=stats)
    raise CaseError(
        "invalid_request", f"unknown format {fmt!r}; formats: {', '.join(FORMATS)}, auto"
    )


def iter_import(
    fmt: str,
    path: str | os.PathLike[str],
    *,
    branch: str | None = None,
    prompt: str | None = None,
    strict: bool = False,
    stats: Stats | None = None,
    sample: str | None = None,
    epoch: int | None = None,
) -> Iterator[dict[str, Any]]:
    """Stream the canonical, checked events of a transcript (two passes over the file; one
    turn held at a time). Raises as :func:`open_source`; a refusal can come after some
    events were yielded, so write them somewhere temporary (:func:`import_to_file` does)."""
    lines = _import_lines(
        fmt,
        path,
        branch=branch,
        prompt=prompt,
        strict=strict,
        stats=stats,
        sample=sample,
        epoch=epoch,
    )
    return (ev for ev, _ in lines)


def _import_lines(
    fmt: str,
    path: str | os.PathLike[str],
    *,
    stats: Stats | None,
    **options: Any,
) -> Iterator[tuple[dict[str, Any], bytes]]:
    """:func:`iter_import` with each event's canonical line (JCS bytes, no newline)."""
    try:
        yield from _checked_lines(fmt, path, stats=stats, **options)
    except CaseError as err:
        if err.code != "import_invalid":
            raise
        from .wrong_format import reworded  # only when refusing: detection reads the file

        raise reworded(err, path, fmt) from None


def _checked_lines(
    fmt: str,
    path: str | os.PathLike[str],
    *,
    stats: Stats | None,
    **options: Any,
) -> Iterator[tuple[dict[str, Any], bytes]]:
    stats = stats if stats is not None else Stats()
    src = open_source(fmt, path, stats=stats, **options)
    em = Emitter(
        file=str(path),
        thread_id=src.thread_id,
        agent=src.agent,
        metadata=src.metadata,
        start_ref=src.start_ref,
        stats=stats,
    )
    for ev in em.start():
        yield ev, em.last_line
    turns = 0
    for item in src.items():
        # a turn without user input is never listed nor saved (case/turns.py): not a turn here
        turns += isinstance(item, Turn) and item.content is not None
        events = em.turn(item) if isinstance(item, Turn) else em.extra(item)
        for ev in events:
            yield ev, em.last_line
    if not turns:  # a file of another format some importer reads as nothing
        from .wrong_format import no_turn_refusal

        refused = no_turn_refusal(path, fmt)
        if refused is not None:
            raise refused
        stats.notes.append(
            "the file holds no turn (no user message the recorded run went on from): "
            "the log holds its thread_started alone, and nothing of it can be saved as a case"
        )
    if em.missing_results:
        stats.skip(
            "tool call with no result before the next reply (recorded as an error result)",
            em.missing_results,
        )


def import_events(fmt: str, path: str | os.PathLike[str], **options: Any) -> list[dict[str, Any]]:
    """All events of a transcript in memory (see :func:`iter_import` for the options)."""
    return list(iter_import(fmt, path, **options))


@dataclass
class ImportReport:
    """What :func:`import_to_file` wrote: ``path``, ``events``, ``turns``, ``bytes`` and the
    :class:`~threads_cases.importers.common.Stats` (skipped lines per kind, invalid lines,
    notes). ``turns`` counts the turns with user input, the ones ``threads-cases turns``
    lists and ``save --turn`` numbers (a turn without user input cannot be saved)."""

    path: Path
    events: int = 0
    turns: int = 0
    bytes: int = 0
    stats: Stats = field(default_factory=Stats)


def _write(
    events: Iterator[tuple[dict[str, Any], bytes]],
    fh: Any,
    report: ImportReport,
    *,
    dialect: str,
    flush_every: int,
) -> None:
    """Write ``events`` (with their canonical lines) to ``fh`` in ``dialect``, in batches,
    counting events, turns and bytes. The canonical dialect reuses the checked bytes."""
    batch: list[bytes] = []
    add = batch.append
    canonical = dialect == CANONICAL
    events_n = turns = written = 0  # counted here, into the report once at the end
    for ev, line in events:
        add(line if canonical else encode_log([cast(Event, ev)], dialect=dialect)[:-1])
        if ev["type"] == "user_message":  # the turns `threads-cases turns` lists and numbers
            turns += 1
        if len(batch) >= flush_every:
            events_n += len(batch)
            add(b"")  # the last line's newline, without copying the batch again
            written += fh.write(b"\n".join(batch))
            batch.clear()
    if batch:
        events_n += len(batch)
        add(b"")
        written += fh.write(b"\n".join(batch))
    report.events += events_n
    report.turns += turns
    report.bytes += written


def import_to_file(
    fmt: str,
    path: str | os.PathLike[str],
    out: str | os.PathLike[str],
    *,
    branch: str | None = None,
    prompt: str | None = None,
    strict: bool = False,
    dialect: str = "threads-py",
    flush_every: int = 512,
    sample: str | None = None,
    epoch: int | None = None,
) -> ImportReport:
    """Import ``path`` and write the log to ``out`` atomically: a temporary file beside it,
    fsync, rename. On any refusal the temporary file is removed and ``out`` is untouched.
    Returns an :class:`ImportReport`."""
    out = Path(out)
    stats = Stats()
    report = ImportReport(out, stats=stats)
    try:
        with contextlib.ExitStack() as stack:
            try:
                out.parent.mkdir(parents=True, exist_ok=True)
                # fsynced, renamed over ``out``, the folder fsynced; a rewrite keeps its mode
                fh = stack.enter_context(replacing(out, fsync=True))
            except OSError as exc:
                raise CaseError(
                    "io_error",
                    f"cannot write the log in {out.parent}: {exc.strerror}",
                    file=str(out),
                    hint="pass -o a path in a folder you can write to",
                ) from None
            events = _import_lines(
                fmt,
                path,
                branch=branch,
                prompt=prompt,
                strict=strict,
                stats=stats,
                sample=sample,
                epoch=epoch,
            )
            # the sources hold their file's values (trees of dicts and lists, no cycles) and a
            # turn holds its replies: collections as the events pile up would walk them all,
            # again and again (a fifth of a long SWE-agent or inspect-ai run), for nothing
            with gc_paused():
                _write(events, fh, report, dialect=dialect, flush_every=flush_every)
    except OSError as exc:
        raise CaseError(
            "io_error", f"cannot write the log: {exc.strerror}", file=str(out)
        ) from None
    return report
