"""Saving a turn of a log file (or of a transcript) as a case: what ``threads-cases save`` does.

:func:`save_log` is the library form of the ``save`` command (spec/case-format.md 7.3): it
opens the log (or imports a Claude Code / Codex transcript in memory), finds the turn by
``at`` or by its number, drafts matchers when none are given, and calls
:func:`threads_cases.case.save.save_case` (which checks the case by replaying it before it
is moved into place, unless ``verify=False``).

It returns the :class:`~threads_cases.case.save.SaveResult` of ``save_case`` with
``warnings`` (lines for the user) added. Refusals come back in the result; only a
transcript that cannot be imported raises (``CaseError("import_invalid")`` or
``io_error``), because the command reports it with exit status 1, not 2.
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

from .case.directory import CaseExpectation
from .case.save import EMPTY_EXPECTATION_WARNING, SaveError, SaveResult
from .case.wording import API, Hints, worded
from .core.dialects import CANONICAL
from .core.errors import CaseError

if TYPE_CHECKING:
    from .reference.thread import Thread

NO_EXPECTATIONS_WARNING = (
    "warning: --no-draft: the case checks nothing about the turn's outcome "
    "(no must or expect matchers); every run of it will warn no_expectations"
)


class ImportFailed(Exception):
    """The transcript given with ``from_format`` could not be imported: ``error`` is the
    ``CaseError`` (``import_invalid`` or ``io_error``)."""

    def __init__(self, error: CaseError) -> None:
        super().__init__(str(error))
        self.error = error


def _resolve_turn(
    events: list[dict[str, Any]],
    at: str | None,
    turn: int | None,
    *,
    log: Any,
    from_format: str | None,
    hints: Hints,
) -> tuple[str, int | None]:
    """The fork point and the turn number (``None`` when ``at`` starts no listed turn). A
    turn out of range of a recording (``from_format``) is told how to list that recording's
    turns: ``turns`` reads thread logs, so the recording is imported first."""
    from .case.turns import LIST_TURNS_HINT, fork_point, list_turns

    if turn is not None:
        try:
            return fork_point(events, turn), turn
        except CaseError as err:
            if from_format is None or err.hint != LIST_TURNS_HINT:
                raise
            from .importers.recordings import turns_hint

            loc = err.location
            hint = turns_hint(log, from_format, hints)
            raise CaseError(
                err.code, err.message, file=loc.file, line=loc.line, hint=hint
            ) from None
    assert at is not None
    n = next((t["index"] for t in list_turns(events) if t["fork_point"] == at), None)
    return at, n


def _open(
    log: str | os.PathLike[str] | Sequence[dict[str, Any]],
    *,
    from_format: str | None,
    artifacts: Any,
    dialect: str,
    warnings: list[str],
    hints: Hints,
) -> Thread:
    from .reference.thread import Thread

    source: Any = log
    if from_format is not None:
        from .importers import Stats, import_events

        stats = Stats()
        try:
            source = import_events(from_format, Path(log), stats=stats)  # type: ignore[arg-type]
            # spec/importers.md sections 1 and 4: as `import` prints them, the notes
            # (a turn cut short) first, then the lines repaired or skipped
            warnings += [f"note: {text}" for text in stats.notes]
            warnings += [
                f"warning[{w.code}]: {log}:{w.line}: {w.reason}: {w.message}"
                for w in stats.warnings
            ]
        except CaseError as err:
            if err.code in ("import_invalid", "io_error"):
                raise ImportFailed(err) from None
            raise
        dialect = CANONICAL
    elif artifacts is None and isinstance(log, (str, os.PathLike)):
        beside = Path(log).parent / "artifacts"  # where Thread.write_artifacts puts them
        artifacts = beside if beside.is_dir() else None
    try:
        return Thread.open(source, artifacts=artifacts, dialect=dialect)
    except CaseError as err:
        if from_format is not None or not isinstance(log, (str, os.PathLike)):
            raise
        from .importers.recordings import log_error

        raise log_error(err, log, hints) from None  # a recording: import it, or --from


def save_log(
    log: str | os.PathLike[str] | Sequence[dict[str, Any]],
    *,
    name: str,
    dir: str | os.PathLike[str],
    at: str | None = None,
    turn: int | None = None,
    must: Sequence[dict[str, Any]] = (),
    expect: Sequence[dict[str, Any]] = (),
    draft: bool | None = None,
    from_format: str | None = None,
    artifacts: Any = None,
    sandbox: str | os.PathLike[str] | None = None,
    dialect: str = CANONICAL,
    external_effects: str = "stub",
    overwrite: bool = False,
    secrets: str = "refuse",
    verify: bool = True,
    agent: Any = None,
    hints: Hints = API,
) -> SaveResult:
    """Save turn ``turn`` (1-based, as ``threads-cases turns`` numbers them) or the turn after
    the event ``at`` of ``log`` as the case ``dir/name`` (spec/case-format.md 5 and 7).

    ``log`` is a thread log path in ``dialect``, a list of envelopes, or with ``from_format``
    (``"claude-code"`` or ``"codex"``) a transcript imported in memory. ``must``/``expect``
    are matchers. ``draft``: ``None`` drafts matchers (as ``threads-cases draft`` does) only
    when none are given, ``True`` adds the drafted ones to those given, ``False`` never
    drafts (an empty expectation then gives a warning). ``artifacts`` is a folder of files
    named by sha256 hex (default: the folder ``artifacts`` beside a ``log`` path, when there
    is one); ``sandbox`` a folder holding the sandbox files the log knows only
    by hash (case-format.md 5.9). ``secrets`` is ``"refuse"``, ``"redact"`` or ``"allow"``.
    ``verify`` replays the case before it is written (``replay_failed`` when it would not
    pass), with ``agent`` when given (an ``AgentSpec`` or a reference such as
    ``"my_agent:agent"``, whose handlers a custom sandbox tool needs; spec/replay.md 8).
    ``hints`` words the refusals' hints for who acts on them: ``"api"`` names the keywords
    (``overwrite=True``), ``"cli"`` (what the ``save`` command passes) only its flags
    (:mod:`threads_cases.case.wording`).

    Returns a :class:`SaveResult`; refusals use the codes of ``save_case`` plus
    ``invalid_request`` (both or neither of ``at``/``turn``; a turn out of range). Raises
    ``CaseError("import_invalid")`` / ``io_error`` when the transcript cannot be imported.
    """
    warnings: list[str] = []
    try:
        if (at is None) == (turn is None):
            raise CaseError("invalid_request", "give exactly one of --at EVENT_ID and --turn N")
        thread = _open(
            log,
            from_format=from_format,
            artifacts=artifacts,
            dialect=dialect,
            warnings=warnings,
            hints=hints,
        )
        events = cast(list[dict[str, Any]], list(thread.events))
        at, n = _resolve_turn(events, at, turn, log=log, from_format=from_format, hints=hints)
        musts, expects = list(must), list(expect)
        drafting = draft is True or (draft is None and not musts and not expects)
        if drafting:
            musts, expects = _drafted(events, at, n, musts, expects)
            if musts or expects:
                warnings.append(
                    f"drafted {len(musts)} must and {len(expects)} expect matcher(s) from the "
                    "recorded turn (see them in case.json; --no-draft to skip)"
                )
        if not musts and not expects:
            warnings.append(NO_EXPECTATIONS_WARNING if draft is False else _NOTHING_DRAFTED)
        result = thread.save_case(
            name,
            expect=CaseExpectation(musts, expects),
            at=at,
            dir=dir,
            external_effects=external_effects,
            overwrite=overwrite,
            secrets=secrets,
            verify=verify,
            agent=agent,
            sandbox_dir=sandbox,
            draft=False,  # drafted above, with the command line's words
        )
    except ImportFailed as failed:
        raise failed.error from None
    except CaseError as err:
        result = SaveResult(False, error=SaveError.of(err))
    if not result.ok:
        return worded(result, hints)
    kept = (w for w in result.warnings if w != EMPTY_EXPECTATION_WARNING)  # said above
    return dataclasses.replace(result, warnings=(*warnings, *kept))


_NOTHING_DRAFTED = (
    "warning: the recorded turn gave nothing to draft matchers from; the case checks "
    "nothing about the turn's outcome"
)


def _drafted(
    events: list[dict[str, Any]],
    at: str,
    n: int | None,
    musts: list[dict[str, Any]],
    expects: list[dict[str, Any]],
) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """The drafted matchers of turn ``n`` before the given ones. A turn that cannot be drafted
    (no terminal event) is left to ``save_case``, which refuses it with its own code."""
    from .case.turns import draft_matchers

    if n is None:
        return musts, expects
    try:
        proposed = draft_matchers(events, n)
    except CaseError:
        return musts, expects
    return proposed["must"] + musts, proposed["expect"] + expects
