"""``baseline update`` and ``baseline prune``: the baseline file brought in line with a run
(spec/replay.md section 12.4).

Both take a run made with the baseline applied (``run_suite(..., baseline=...)``, so every
result carries its judgement) and rewrite the file under the case lock pattern of
:func:`threads_cases.case.writer.case_lock` (a ``.<file>.lock`` folder beside it), re-reading
it inside the lock so that two editors never lose each other's entries, then writing it
canonically and atomically (:func:`~threads_cases.harness.baseline.file.write_baseline`).

- :func:`update_baseline` adds an entry per failure no entry lists (keyed by case,
  implementation, check and code; existing entries and their reasons are kept as they are;
  stale entries too: pruning is a separate, reviewable step).
- :func:`prune_baseline` removes every entry the run found stale, and every entry naming an
  implementation that is not known (it can never match); entries of cases the run did not
  judge (not selected, skipped, an implementation that could not start) are kept.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from ...case.writer import case_lock
from ..check.expected import listed, new_entries, stale_entries
from ..run.runner import CaseResult
from .file import Entry, read_baseline, unknown_implementation, write_baseline


@dataclass(frozen=True)
class BaselineChange:
    """What an update or a prune did to the file at ``path``: the entries ``added`` and
    ``removed``, how many it holds now (``total``), whether the file was ``written`` (False
    when nothing changed), and how many entries the run did not judge (``unjudged``), which
    (``not_judged``), and which of ``removed`` named an implementation that is not known
    (``unknown``)."""

    path: Path
    added: tuple[Entry, ...]
    removed: tuple[Entry, ...]
    total: int
    written: bool
    unjudged: int = 0
    not_judged: tuple[Entry, ...] = ()
    unknown: tuple[Entry, ...] = ()


def _current(path: Path) -> list[Entry]:
    return list(read_baseline(path).entries) if path.is_file() else []


def _unjudged(entries: Sequence[Entry], results: Sequence[CaseResult]) -> tuple[Entry, ...]:
    """The entries whose case and implementation no result of the run judged."""
    judged = {
        (r.case, r.implementation)
        for r in results
        if r.judgement is not None and getattr(r.judgement, "judged", False)
    }
    return tuple(e for e in entries if (e.case, e.implementation) not in judged)


def update_baseline(
    path: Path,
    results: Sequence[CaseResult],
    *,
    reason: str | None = None,
    issue: str | None = None,
) -> BaselineChange:
    """Add the run's unlisted failures to the baseline at ``path`` (created when missing),
    with ``reason`` (default the placeholder ``TODO: ...``, which runs warn about) and
    ``issue``. Raises ``CaseError("baseline_invalid")`` for a malformed file, ``io_error``
    when it cannot be locked or written."""
    fresh = new_entries(results, reason, issue)
    path.parent.mkdir(parents=True, exist_ok=True)
    with case_lock(path.parent, path.name):
        entries = _current(path)
        added = tuple(e for e in fresh if not listed(e, entries))
        entries += added
        written = write_baseline(path, entries) if added or not path.is_file() else False
    added = tuple(sorted(added, key=lambda e: e.key))
    rest = _unjudged(entries, results)
    return BaselineChange(path, added, (), len(entries), written, len(rest), rest)


def prune_baseline(
    path: Path, results: Sequence[CaseResult], known: Iterable[str] | None = None
) -> BaselineChange:
    """Remove the entries the run found stale from the baseline at ``path``, and, when
    ``known`` (the implementation names there are) is given, every entry naming another
    implementation: no run can ever judge it. Raises ``CaseError("baseline_invalid")`` for
    a malformed file, ``io_error`` when it cannot be locked or written."""
    stale = {e.key for e in stale_entries(results)}
    if not path.is_file():
        return BaselineChange(path, (), (), 0, False)
    with case_lock(path.parent, path.name):
        entries = _current(path)
        unknown = tuple(unknown_implementation(entries, known)) if known is not None else ()
        stale |= {e.key for e in unknown}
        removed = tuple(e for e in entries if e.key in stale)
        kept = [e for e in entries if e.key not in stale]
        written = write_baseline(path, kept) if removed else False
    rest = _unjudged(kept, results)
    return BaselineChange(path, (), removed, len(kept), written, len(rest), rest, unknown)
