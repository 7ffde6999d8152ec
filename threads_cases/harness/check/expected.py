"""Expected failures: a result judged against its baseline entries gives ``xfail`` or
``xpass`` (spec/replay.md section 12).

A result's *failures* are its failing checks (result ``fail``; ``warn`` too under strict),
each as ``(check id, reason code)``, or for the verdict ``error`` one failure without a check
whose code is the first reason. An entry *covers* a failure when its ``check`` (if any)
is the failure's check and its ``code`` (if any) the failure's code; an entry that covers
none of the result's failures or warnings is *stale*. Then, in this order:

==========================================  =========================================
some failure no entry covers                the verdict stays (``fail``, ``error``, ...):
                                            the case fails differently
some entry is stale                         ``xpass``: fails the run; remove the entry
                                            (``threads-cases baseline prune``)
every failure is covered                    ``xfail``: counted, shown, passing
no failure, no entry                        the verdict stays
==========================================  =========================================

Results that did not run (``skip``, and ``error driver_unavailable``: this machine, not the
implementation) are not judged: their entries are neither used nor stale.

A result whose case the harness itself could not read or check (``result.unreadable``: a
missing file, a file that is not strict JSON, a schema error, a damaged log) is the case's
error, not the implementation's: no entry covers it, so its verdict stays ``error`` and
``baseline update`` never adds an entry for it. Its entries that name its error (no check,
that code) are stale: a baseline never lists an unreadable case, ``baseline prune`` removes
them. Its other entries are neither used nor stale until the case can be read again.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from ...core.statedir import project_home
from ..baseline.file import DEFAULT_PATH, PRUNE_COMMAND, TODO_REASON, Baseline, Entry
from ..run.runner import CaseResult


@dataclass(frozen=True)
class Failure:
    """One failure (or, with ``failing`` False, a warning) of a result: the check id
    (``None`` for an ``error``) and the reason code."""

    check: str | None
    code: str | None
    failing: bool = True

    def covered_by(self, entry: Entry) -> bool:
        return (entry.check is None or entry.check == self.check) and (
            entry.code is None or entry.code == self.code
        )


@dataclass(frozen=True)
class Judgement:
    """What the baseline made of one result: the new ``verdict``, the entries that list its
    failures (``covering``), the ``stale`` entries, and the failures no entry lists
    (``uncovered``). ``judged`` is False for a result that did not run."""

    verdict: str
    covering: tuple[Entry, ...] = ()
    stale: tuple[Entry, ...] = ()
    uncovered: tuple[Failure, ...] = ()
    judged: bool = True


def ran(result: CaseResult) -> bool:
    """Whether a result says anything about the implementation (not a skip, not an
    implementation that could not start here)."""
    return result.verdict != "skip" and not (
        result.verdict == "error" and result.reasons == ["driver_unavailable"]
    )


def failures_of(result: CaseResult, strict: bool = False) -> list[Failure]:
    """The failures and warnings of a result (module docstring); ``failing`` is False for a
    warning that does not fail the run (a ``warn`` check without ``strict``)."""
    if result.verdict == "error":
        return [Failure(None, result.reasons[0] if result.reasons else None)]
    return [
        Failure(c.id, c.code or c.id, c.result == "fail" or strict)
        for c in result.checks
        if c.result in ("fail", "warn")
    ]


def judge(result: CaseResult, entries: Sequence[Entry], strict: bool = False) -> Judgement:
    """Judge one result (its verdict before any baseline) against the entries of its case and
    implementation (module docstring)."""
    if not ran(result):
        return Judgement(result.verdict, judged=False)
    if result.unreadable:
        code = result.reasons[0] if result.reasons else None
        wrong = tuple(e for e in entries if e.check is None and e.code == code)
        return Judgement(result.verdict, stale=wrong)
    found = failures_of(result, strict)
    failing = [f for f in found if f.failing]
    stale = tuple(e for e in entries if not any(f.covered_by(e) for f in found))
    covering = tuple(e for e in entries if any(f.covered_by(e) for f in failing))
    uncovered = tuple(f for f in failing if not any(f.covered_by(e) for e in entries))
    if uncovered:
        verdict = result.verdict
    elif stale:
        verdict = "xpass"
    elif failing:
        verdict = "xfail"
    else:
        verdict = result.verdict
    return Judgement(verdict, covering, stale, uncovered)


def apply_baseline(result: CaseResult, baseline: Baseline, strict: bool = False) -> CaseResult:
    """Judge ``result`` against ``baseline`` and record the judgement on it (in place, and
    returned): the verdict, ``result.baseline`` (the covering entry of an ``xfail``, the
    first stale entry of an ``xpass``) and, for a stale entry, a line in the message naming
    the command that removes it."""
    entries = baseline.for_result(result.case, result.implementation)
    j = judge(result, entries, strict)
    result.judgement = j
    if not j.judged or not entries:
        return result
    if result.unreadable:
        result.message = _join(result.message, unreadable_message(j.stale, baseline))
        return result
    result.verdict = j.verdict
    if j.verdict == "xfail":
        result.baseline = j.covering[0].record()
    elif j.verdict == "xpass":
        result.baseline = j.stale[0].record()
    if j.stale:
        result.message = _join(result.message, stale_message(j.stale, baseline))
    if j.uncovered and j.covering:
        listed = ", ".join(f"{f.check or 'error'} {f.code}" for f in j.uncovered)
        result.message = _join(
            result.message, f"listed in the baseline, but it fails differently: {listed}"
        )
    return result


def shared_listed(
    cases: Sequence[Path],
    baseline: Baseline | None,
    on_note: Callable[[str], None] | None = None,
) -> dict[str, list[str]]:
    """The names that two or more of ``cases`` share (``case.directory.shared_name_groups``)
    and the baseline has entries for, each with the paths that hold it; ``on_note`` gets a
    warning for each. Entries are keyed by case name, so such an entry cannot say which of
    the cases it lists: it is applied to neither (:func:`set_aside`)."""
    from ...case.directory import shared_name_groups

    if baseline is None:
        return {}
    listed = {e.case for e in baseline.entries}
    shared = {name: paths for name, paths in shared_name_groups(cases) if name in listed}
    for name, paths in shared.items():
        if on_note is not None:
            on_note(f"warning: {shared_listed_message(name, paths)}")
    return shared


def shared_listed_message(name: str, paths: Sequence[str]) -> str:
    """Why the entries of a shared name are not applied, and what to do."""
    return (
        f"the baseline entries of {name!r} are not applied: the cases {', '.join(paths)} "
        "share that name, so an entry cannot say which of them fails; each case reports its "
        "own verdict. Rename one case (case.json `name`)"
    )


def set_aside(
    result: CaseResult, paths: Sequence[str], baseline: Baseline, strict: bool = False
) -> CaseResult:
    """A result whose case shares its name with another case of the run: with entries for
    its name on its implementation, none is applied (its verdict stays what it is, never an
    ``xfail`` or ``xpass`` that belongs to the other case) and the message says why; the
    result is not judged (``baseline update`` and ``prune`` refuse such a run anyway)."""
    if not baseline.for_result(result.case, result.implementation):
        return apply_baseline(result, baseline, strict)
    result.judgement = Judgement(result.verdict, judged=False)
    result.message = _join(result.message, shared_listed_message(result.case, paths))
    return result


def apply_shared(
    result: CaseResult, baseline: Baseline, shared: dict[str, list[str]], strict: bool = False
) -> CaseResult:
    """:func:`apply_baseline`, or :func:`set_aside` for a case whose name is in ``shared``
    (:func:`shared_listed`): an entry of a shared name means neither case."""
    if result.case in shared:
        return set_aside(result, shared[result.case], baseline, strict)
    return apply_baseline(result, baseline, strict)


def _join(message: str, line: str) -> str:
    return f"{message}\n{line}" if message else line


def stale_message(stale: Sequence[Entry], baseline: Baseline) -> str:
    """``stale baseline entry: reads-notes [threads-py] must[2] (why) passes now; remove it
    with `threads-cases baseline prune``` (for a conformance skips file: remove it from the
    file)."""
    named = "; ".join(f"{e.label} ({e.reason})" for e in stale)
    return f"stale baseline entry: {named} no longer fails; {_how(baseline)}"


def unreadable_message(wrong: Sequence[Entry], baseline: Baseline) -> str:
    """Why a baseline entry does not turn a case that cannot be read into an ``xfail``, and
    how to remove the entries that list such a case."""
    line = "the baseline never lists a case that cannot be read: fix the case"
    if not wrong:
        return line + " (its baseline entries apply again once it can be read)"
    named = "; ".join(f"{e.label} {e.code} ({e.reason})" for e in wrong)
    return f"{line}; wrong baseline entry: {named}: {_how(baseline)}"


def _how(baseline: Baseline) -> str:
    """How to remove a stale entry from ``baseline``: the prune command, or for a conformance
    suite's skips file, an edit of that file."""
    src = baseline.path
    if src is not None and src.parent.name == "skips":
        return f"remove it from {src}"
    where = f" --baseline {src}" if src is not None and not _default(src) else ""
    return f"remove it with `{PRUNE_COMMAND}{where}`"


def _default(path: Path) -> bool:
    try:
        return path.resolve() == (project_home() / DEFAULT_PATH).resolve()
    except OSError:
        return False


def new_entries(
    results: Iterable[CaseResult], reason: str | None = None, issue: str | None = None
) -> list[Entry]:
    """An entry per failure no entry lists, in the results given (what ``baseline update``
    adds): keyed by case, implementation, check and code, with ``reason`` (default
    :data:`TODO_REASON`) and ``issue``. A failing result's warnings (``warn`` checks, such as
    an ``expect`` that missed after the stop) are proposed too: under ``--strict`` they fail
    with it, so the baseline holds under either strictness (spec/replay.md 12.4); the caller
    leaves out those an entry already covers. Results must carry their judgement
    (:func:`apply_baseline`)."""
    out: dict[tuple[str, str, str, str], Entry] = {}
    for r in results:
        j = _judgement(r)
        failing = list(j.uncovered)
        if j.uncovered or j.covering:  # a failing result: its warnings fail under --strict
            failing += [f for f in failures_of(r) if not f.failing]
        for f in failing:
            e = Entry(r.case, r.implementation, reason or TODO_REASON, f.check, f.code, issue)
            out.setdefault(e.key, e)
    return list(out.values())


def listed(entry: Entry, entries: Iterable[Entry]) -> bool:
    """Whether one of ``entries`` (of the same case and implementation) already covers what
    ``entry`` lists: its check (or none) and its code (or none)."""
    f = Failure(entry.check, entry.code)
    return any(
        (e.case, e.implementation) == (entry.case, entry.implementation) and f.covered_by(e)
        for e in entries
    )


def stale_entries(results: Iterable[CaseResult]) -> list[Entry]:
    """Every entry the results found stale (what ``baseline prune`` removes)."""
    out: dict[tuple[str, str, str, str], Entry] = {}
    for r in results:
        for e in _judgement(r).stale:
            out.setdefault(e.key, e)
    return list(out.values())


def _judgement(result: CaseResult) -> Judgement:
    j = result.judgement
    if not isinstance(j, Judgement):
        raise ValueError(f"{result.case} [{result.implementation}] was not judged")
    return j
