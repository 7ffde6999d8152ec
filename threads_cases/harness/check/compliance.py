"""What the compliance page shows (spec/conformance.md section 7), built from JSON Lines
reports; :mod:`.compliance_html` renders it.

:func:`build_page` reads one or more reports of ``run`` or ``conformance``
(``schemas/report.schema.json``) into a :class:`Page`, which holds:

* the counts per implementation and verdict;
* the matrix of cases x implementations, each cell the verdict as an icon and a word (never
  colour alone) and its first reason, linking to the result's detail;
* each result that is ``fail``, ``error``, ``drifted``, ``xfail`` or ``xpass``: reasons,
  message, the first divergence (kind, where, pointer, recorded and replayed values) and each
  failing or warning check (matcher beside the nearest replayed event, differences);
* the results a baseline expects to fail (``xfail``, ``xpass``: a result line's
  ``"baseline": {"reason", "issue"?, "check"?}``), with the reason and the issue as a link
  (only ``http``/``https`` addresses become links);
* with ``compare``, what changed since an older report, as ``threads-cases diff OLD NEW``
  computes it (:func:`threads_cases.review.filediff.compare_results`).

Reason codes: ``invalid_request`` (no report, a report given twice, a file that is not a
report, a result line without a string ``case``/``path``/``implementation``/``verdict``, one
case and implementation in two reports), ``json_invalid`` (a report that is not strict JSON
Lines).
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

from ...core.errors import CaseError

if TYPE_CHECKING:
    from ...core.shapes import RepeatSummary
from ..report.report_diff import compare_results, report_results
from ..report.suite import iter_report

#: verdict -> (icon, what it means); the page shows the icon and the verdict's word
VERDICT_MARKS: dict[str, tuple[str, str]] = {
    "pass": ("✓", "passed"),
    "drifted": ("~", "passed, but the replay drifted from the recording"),
    "xfail": ("⊘", "failed as the baseline expects"),
    "xpass": ("⚠", "passed although the baseline expects a failure: a stale entry"),
    "fail": ("✗", "failed"),
    "error": ("!", "could not run"),
    "skip": ("–", "skipped"),
}
#: the verdicts whose results get a detail section
DETAILED = ("fail", "error", "drifted", "xfail", "xpass")
#: a value longer than this (in characters, as shown) is cut on the page
MAX_VALUE_CHARS = 20_000
#: at most this many differences are listed per check
MAX_DIFFERENCES = 30


@dataclass(frozen=True)
class Source:
    """One report the page was built from (its header)."""

    path: str
    command: str
    version: str
    started_at: str
    results: int
    #: a conformance report's levels (its footer's ``levels``, conformance.md 9), else empty
    levels: tuple[tuple[str, str, str, str], ...] = ()


@dataclass(frozen=True)
class Difference:
    pointer: str
    expected: str
    actual: str


@dataclass(frozen=True)
class CheckView:
    """A failing or warning check: ``matcher``/``nearest_event`` as indented JSON."""

    id: str
    code: str
    result: str
    detail: str
    matcher: str | None
    nearest_event: str | None
    differences: tuple[Difference, ...]
    more: int


@dataclass(frozen=True)
class DivergenceView:
    """The first divergence (spec/reports.md section 7), values as shown."""

    kind: str
    where: str
    pointer: str
    line: int | None
    recorded: str | None
    replayed: str | None
    summary: str


@dataclass(frozen=True)
class Baseline:
    """A baseline entry behind ``xfail``/``xpass``; ``issue_url`` only for http(s)."""

    reason: str
    issue: str | None
    issue_url: str | None
    check: str | None


@dataclass(frozen=True)
class Entry:
    """One result line on the page; ``anchor`` is its detail's element id."""

    anchor: str
    case: str
    path: str
    implementation: str
    verdict: str
    icon: str
    meaning: str
    reasons: tuple[str, ...]
    warnings: tuple[str, ...]
    message: str
    divergence: DivergenceView | None
    checks: tuple[CheckView, ...]
    baseline: Baseline | None
    #: a repeated result's rate, interval, pass^k and flips (spec/replay.md 11.9), or ""
    repeat: str = ""

    @property
    def detailed(self) -> bool:
        return self.verdict in DETAILED


@dataclass(frozen=True)
class Row:
    """A case: its result per implementation (``None``: not run there)."""

    case: str
    path: str
    cells: tuple[Entry | None, ...]

    @property
    def verdicts(self) -> str:
        return " ".join(sorted({c.verdict for c in self.cells if c is not None}))


@dataclass(frozen=True)
class ChangeView:
    """A result that changed since the older report: ``case`` its name (the newer report's
    when in both), ``before``/``after`` its ``(verdict, reasons)`` (``None`` when absent)."""

    case: str
    implementation: str
    what: str
    before: tuple[str, tuple[str, ...]] | None
    after: tuple[str, tuple[str, ...]] | None
    #: two repeated results: the rate's change against the noise (replay.md 11.10), or ""
    noise: str = ""


@dataclass(frozen=True)
class Comparison:
    old: str
    changes: tuple[ChangeView, ...]
    results: tuple[int, int]
    changed: int
    only_old: int
    only_new: int


@dataclass(frozen=True)
class Page:
    """Everything the page shows (module docstring)."""

    title: str
    sources: tuple[Source, ...]
    implementations: tuple[str, ...]
    verdicts: tuple[str, ...]
    counts: dict[str, dict[str, int]]
    totals: dict[str, int]
    rows: tuple[Row, ...]
    entries: tuple[Entry, ...]
    comparison: Comparison | None = None
    marks: dict[str, tuple[str, str]] = field(default_factory=lambda: dict(VERDICT_MARKS))

    @property
    def detailed(self) -> tuple[Entry, ...]:
        return tuple(e for e in self.entries if e.detailed)

    @property
    def expected(self) -> tuple[Entry, ...]:
        return tuple(e for e in self.entries if e.baseline is not None)


#: one report as the page reads it: its header as a :class:`Source` and its result lines,
#: each with its line number
ReportPart = tuple[Source, list[tuple[int, dict[str, Any]]]]


def read_report(path: str | os.PathLike[str]) -> ReportPart:
    """A report's header as a :class:`Source` and its result lines with their line numbers.

    Raises ``invalid_request`` for a file whose first line is not a threads-cases header or a
    result line without string ``case``, ``path``, ``implementation`` and ``verdict`` (file,
    line and pointer given); ``json_invalid`` for a file that is not strict JSON Lines."""
    return report_part(str(path), list(iter_report(path)))


def report_part(name: str, lines: Sequence[tuple[int, Any]]) -> ReportPart:
    """The :class:`Source` and result lines of a report's numbered ``lines`` (its header
    first), named ``name``: :func:`read_report` of a file, or the lines of a run's own report.
    Refusals as :func:`read_report`'s (``invalid_request``, at ``name``)."""
    head = lines[0][1]
    results = []
    levels: tuple[tuple[str, str, str, str], ...] = ()
    for lineno, value in lines[1:]:
        if isinstance(value, dict) and value.get("kind") == "footer":
            levels = _levels(value.get("levels"))
        if not isinstance(value, dict) or value.get("kind") != "result":
            continue
        for key in ("case", "path", "implementation", "verdict"):
            if not isinstance(value.get(key), str):
                raise CaseError(
                    "invalid_request",
                    f"a result line needs a string {key!r}",
                    file=name,
                    line=lineno,
                    pointer=f"/{key}",
                    hint="the report must follow schemas/report.schema.json",
                )
        results.append((lineno, value))
    source = Source(
        path=name,
        command=str(head.get("command", "")),
        version=str(head.get("version", "")),
        started_at=str(head.get("started_at", "")),
        results=len(results),
        levels=levels,
    )
    return source, results


def _levels(value: Any) -> tuple[tuple[str, str, str, str], ...]:
    """``(implementation, level, next, blocked by)`` per implementation of a footer's
    ``levels``, as texts (``none`` for no level, ``""`` for no next level)."""
    if not isinstance(value, dict):
        return ()
    out = []
    for impl, lv in value.items():
        if isinstance(lv, dict):
            out.append(
                (
                    str(impl),
                    str(lv.get("level") or "none"),
                    str(lv.get("next") or ""),
                    ", ".join(str(b) for b in _list(lv.get("blocked_by"))),
                )
            )
    return tuple(out)


def build_page(
    reports: Sequence[str | os.PathLike[str]],
    compare: str | os.PathLike[str] | None = None,
    title: str | None = None,
) -> Page:
    """The page of ``reports`` (their results together, in the reports' order), and what
    changed since the report ``compare`` when given. Refusals: see :func:`read_report`, and
    ``invalid_request`` for no report or a case and implementation in two reports."""
    return page_of(read_reports(reports), compare, title)


def read_reports(reports: Sequence[str | os.PathLike[str]]) -> Iterator[ReportPart]:
    """Each of ``reports`` read (:func:`read_report`), in order, as it is asked for (so a
    refusal of a later file comes after what :func:`page_of` finds in the earlier ones).
    ``invalid_request`` for no report, or a file given twice."""
    if not reports:
        raise CaseError("invalid_request", "no report given", hint="pass one or more reports")
    given: set[Path] = set()
    for path in reports:
        if Path(path).resolve() in given:
            raise CaseError("invalid_request", "the report is given twice", file=str(path))
        given.add(Path(path).resolve())
        yield read_report(path)


def page_of(
    parts: Iterable[ReportPart],
    compare: str | os.PathLike[str] | None = None,
    title: str | None = None,
) -> Page:
    """The page of the reports ``parts`` (:func:`read_reports`, or :func:`report_part` of a
    run's own lines), as :func:`build_page`. ``invalid_request`` for a case and
    implementation in two of them."""
    sources, results = [], []
    seen: dict[tuple[str, str, str], str] = {}
    impls: dict[str, None] = {}
    for source, lines in parts:
        path = source.path
        sources.append(source)
        for lineno, r in lines:
            # a listed conformance file holds several tests: the case id tells them apart
            key = (r["path"], r["case"], r["implementation"])
            where = f"{path}:{lineno}"
            if key in seen:
                raise CaseError(
                    "invalid_request",
                    f"{key[1]} ({key[0]}) on {key[2]} is in two reports ({seen[key]} and {where})",
                    file=str(path),
                    line=lineno,
                    hint="pass reports of different cases or implementations, "
                    "e.g. the shards of one run",
                )
            seen[key] = where
            impls.setdefault(r["implementation"], None)
            results.append(r)
    entries = tuple(_entry(f"r{n}", r) for n, r in enumerate(results, 1))
    names = tuple(impls)
    comparison = _comparison(compare, results) if compare is not None else None
    return Page(
        title=title or "threads-cases compliance",
        sources=tuple(sources),
        implementations=names,
        verdicts=_verdicts(entries),
        counts=_counts(entries, names),
        totals=_counts(entries, ("",))[""],
        rows=_rows(entries, names),
        entries=entries,
        comparison=comparison,
    )


def _verdicts(entries: Sequence[Entry]) -> tuple[str, ...]:
    present = {e.verdict for e in entries}
    known = [v for v in VERDICT_MARKS if v in present]
    return (*known, *sorted(present - set(known)))


def _counts(entries: Sequence[Entry], impls: Sequence[str]) -> dict[str, dict[str, int]]:
    """Per implementation (``""``: all of them), the number of results of each verdict."""
    out = {name: dict.fromkeys(_verdicts(entries), 0) for name in impls}
    for e in entries:
        for name in impls:
            if name in ("", e.implementation):
                out[name][e.verdict] += 1
    return out


def _rows(entries: Sequence[Entry], impls: Sequence[str]) -> tuple[Row, ...]:
    by_path: dict[str, dict[str, Entry]] = {}
    for e in entries:
        by_path.setdefault(e.path, {})[e.implementation] = e
    return tuple(
        Row(
            case=next(iter(cells.values())).case,
            path=path,
            cells=tuple(cells.get(name) for name in impls),
        )
        for path, cells in by_path.items()
    )


def _entry(anchor: str, r: dict[str, Any]) -> Entry:
    verdict = r["verdict"]
    icon, meaning = VERDICT_MARKS.get(verdict, ("?", verdict))
    checks = _list(r.get("checks"))
    div = r.get("divergence")
    return Entry(
        anchor=anchor,
        case=r["case"],
        path=r["path"],
        implementation=r["implementation"],
        verdict=verdict,
        icon=icon,
        meaning=meaning,
        reasons=_strings(r.get("reasons")),
        warnings=_strings(r.get("warnings")),
        message=str(r.get("message") or ""),
        divergence=_divergence(div) if isinstance(div, dict) else None,
        checks=tuple(
            _check(c) for c in checks if isinstance(c, dict) and c.get("result") in ("fail", "warn")
        ),
        baseline=_baseline(r.get("baseline")),
        repeat=_repeat(r.get("repeat")),
    )


def _repeat(info: Any) -> str:
    """A result's ``repeat`` as the terminal's rate text ("" when absent or malformed)."""
    from ..report.repeat_view import rate_text

    try:
        # a report line's, read back: rate_text's failures on a malformed one are caught
        return rate_text(cast("RepeatSummary", info)) if isinstance(info, dict) else ""
    except (KeyError, TypeError, ValueError, IndexError):
        return ""


def _list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


def _strings(value: Any) -> tuple[str, ...]:
    return tuple(str(v) for v in value) if isinstance(value, list) else ()


def shown(value: Any) -> str:
    """A JSON value as the page shows it: a string with a line break as its text, anything
    else as indented JSON; cut after :data:`MAX_VALUE_CHARS` characters."""
    if isinstance(value, str) and "\n" in value:
        text = value
    else:
        text = json.dumps(value, indent=2, sort_keys=True, ensure_ascii=False)
    if len(text) > MAX_VALUE_CHARS:
        rest = len(text) - MAX_VALUE_CHARS
        text = text[:MAX_VALUE_CHARS] + f"\n... ({rest} more characters in the report)"
    return text


def _divergence(d: dict[str, Any]) -> DivergenceView:
    where = []
    if d.get("call") is not None:
        where.append(f"model call {d['call']}")
    if d.get("seq") is not None:  # as the log numbers it, the summary's one numbering
        where.append(f"seq {d['seq']} {d.get('event_type') or ''} ({d.get('event_id')})")
    elif d.get("event_index") is not None:  # a report written before divergences had seq
        where.append(f"event {d['event_index']} {d.get('event_type') or ''}".strip())
    line = d.get("line")
    return DivergenceView(
        kind=str(d.get("kind", "")),
        where=", ".join(where),
        pointer=str(d.get("pointer", "")),
        line=line if isinstance(line, int) else None,
        recorded=shown(d["recorded"]) if "recorded" in d else None,
        replayed=shown(d["replayed"]) if "replayed" in d else None,
        summary=str(d.get("summary", "")),
    )


def _check(c: dict[str, Any]) -> CheckView:
    diffs = _list(c.get("differences"))
    return CheckView(
        id=str(c.get("id", "")),
        code=str(c.get("code") or ""),
        result=str(c.get("result", "")),
        detail=str(c.get("detail", "")),
        matcher=shown(c["matcher"]) if "matcher" in c else None,
        nearest_event=shown(c["nearest_event"]) if c.get("nearest_event") else None,
        differences=tuple(
            Difference(
                pointer=str(d.get("pointer", "")),
                expected="(missing)" if d.get("missing") else shown(d.get("expected")),
                actual="(extra)" if d.get("extra") else shown(d.get("actual")),
            )
            for d in diffs[:MAX_DIFFERENCES]
            if isinstance(d, dict)
        ),
        more=max(0, len(diffs) - MAX_DIFFERENCES),
    )


def _baseline(b: Any) -> Baseline | None:
    if not isinstance(b, dict):
        return None
    issue = b.get("issue") if isinstance(b.get("issue"), str) and b.get("issue") else None
    safe = issue is not None and issue.lower().startswith(("https://", "http://"))
    check = b.get("check")
    return Baseline(
        reason=str(b.get("reason", "")),
        issue=issue,
        issue_url=issue if safe else None,
        check=check if isinstance(check, str) and check else None,
    )


def _comparison(old: str | os.PathLike[str], results: list[dict[str, Any]]) -> Comparison:
    """What changed from the report ``old`` to ``results``: the comparer of
    ``threads-cases diff OLD NEW`` (spec/reports.md section 8)."""
    _, old_lines = read_report(old)
    ra = report_results(line for _, line in old_lines)
    rb = report_results(results)
    changes = compare_results(ra, rb)
    from ..run.noise import change_text

    what = {
        "/verdict": "verdict changed",
        "/reasons": "reasons changed",
        "/repeat/rate": "pass rate changed",
    }
    return Comparison(
        old=str(old),
        changes=tuple(
            ChangeView(
                case=str((rb.get(c.key) or ra[c.key])["case"]),
                implementation=c.implementation,
                what=what.get(c.pointer, "new" if c.before is None else "gone"),
                before=_brief(c.before),
                after=_brief(c.after),
                noise="" if c.rate is None else change_text(c.rate),
            )
            for c in changes
        ),
        results=(len(ra), len(rb)),
        changed=sum(1 for c in changes if c.pointer == "/verdict"),
        only_old=sum(1 for c in changes if c.after is None),
        only_new=sum(1 for c in changes if c.before is None),
    )


def _brief(b: dict[str, Any] | None) -> tuple[str, tuple[str, ...]] | None:
    return None if b is None else (str(b["verdict"]), _strings(b.get("reasons")))
