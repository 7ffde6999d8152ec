"""``--format github``: GitHub Actions annotations and a job summary for ``run`` and
``conformance``.

:func:`write_github` prints, for every result that failed or errored::

    ::error file=<case dir>/case.json,title=<case> [<impl>] <reason>::<one-line detail>

(``file=`` the file and ``line=`` the line of the error that stopped the run when it names
them, such as ``file=<case dir>/case.json,line=58`` for a case.json that is not JSON)

(``::warning`` for drifted; ``::error`` for xpass, titled ``xpass``, whose message names
the stale baseline entry and the command that removes it; ``::notice`` for xfail with the
entry's reason and issue), then one summary line
``threads-cases: 20 pass, 1 fail in 1.23s``. Data is escaped as GitHub's toolkit does
(``%`` -> ``%25``, CR -> ``%0D``, LF -> ``%0A``), properties also ``:`` -> ``%3A`` and
``,`` -> ``%2C``. When ``$GITHUB_STEP_SUMMARY`` names a file, a Markdown section is
appended to it: a table with cases as rows and implementations as columns (a mark and the
reason per cell) and the counts.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import IO

from ...core.texts import shown_text
from ..live.said import panel_lines
from ..run.runner import VERDICTS, CaseResult, SuiteResult
from .matrix import EMOJI_MARKS, counts_text, markdown_table, tally_text
from .result_text import agent_line, baseline_text, stale_text

LEVELS = {
    "fail": "error",
    "error": "error",
    "xpass": "error",
    "drifted": "warning",
    "xfail": "notice",
}
MARKS = EMOJI_MARKS
_DETAIL_LIMIT = 900


def escape_data(text: str) -> str:
    """Escape a workflow command's message (after ``::``); control characters are written
    as ``\\xNN`` first (:func:`~threads_cases.core.texts.shown_text`): a driver's ESC or NUL
    never reaches the log raw."""
    text = "\r".join(shown_text(part) for part in text.split("\r"))  # CR: GitHub's own %0D
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def escape_property(text: str) -> str:
    """Escape a workflow command's property value (``file=``, ``title=``)."""
    return escape_data(text).replace(":", "%3A").replace(",", "%2C")


def annotation_file(r: CaseResult) -> str:
    """The file an annotation points at (:func:`annotation_place`)."""
    return annotation_place(r)[0]


def annotation_place(r: CaseResult) -> tuple[str, int | None]:
    """The file and line an annotation points at: those of the error that stopped the run
    when it names an existing file (a case.json with a trailing comma at line 58, a log
    line), else the case's case.json (a conformance test file as it is) with no line; the
    file relative to the workspace (or the current folder) when it is inside it."""
    p = Path(r.path)
    target, line = (p if p.is_file() else p / "case.json"), None
    loc = r.location
    if loc is not None and loc.file is not None and Path(loc.file).is_file():
        target, line = Path(loc.file), loc.line
    return _relative(target), line


def _relative(target: Path) -> str:
    base = Path(os.environ.get("GITHUB_WORKSPACE") or Path.cwd())
    try:
        return target.resolve().relative_to(base.resolve()).as_posix()
    except (ValueError, OSError):
        return target.as_posix()


def detail_line(r: CaseResult) -> str:
    """One line: the message, then each failing (or warning) check's detail and its first
    differences, joined by ``; ``."""
    parts: list[str] = []
    if r.verdict == "xpass":
        parts.append(stale_text(r))
    elif r.baseline is not None:
        parts.append(baseline_text(r))
    if r.message and r.verdict != "xpass":
        parts.append(r.message)
    agent = agent_line(r)
    if agent:
        parts.append(agent)
    if r.divergence:
        parts.append("first divergence: " + r.divergence["summary"])
    parts.extend(panel_lines(r.live_replies))  # what a live model said (live/said.py)
    for c in r.checks:
        if c.result not in ("fail", "warn"):
            continue
        text = f"{c.code or c.id}: {c.detail}" if c.detail else (c.code or c.id)
        if c.differences and c.matcher is None:
            text += " (" + "; ".join(d.render() for d in c.differences[:3])
            text += f"; {len(c.differences) - 3} more)" if len(c.differences) > 3 else ")"
        parts.append(text)
    if r.warnings:
        parts.append("warnings: " + ", ".join(r.warnings))
    line = " | ".join(" ".join(p.split()) for p in parts) or r.verdict
    return line if len(line) <= _DETAIL_LIMIT else line[: _DETAIL_LIMIT - 3] + "..."


def annotation(r: CaseResult) -> str | None:
    """The workflow command for one result (``None`` for pass and skip)."""
    level = LEVELS.get(r.verdict)
    if level is None:
        return None
    reason = r.verdict if r.verdict in ("xfail", "xpass") else ",".join(r.reasons) or r.verdict
    title = f"{r.case} [{r.implementation}] {reason}"
    file, line = annotation_place(r)
    at = f"file={escape_property(file)}," + ("" if line is None else f"line={line},")
    return f"::{level} {at}title={escape_property(title)}::{escape_data(detail_line(r))}"


def summary_line(suite: SuiteResult) -> str:
    return f"threads-cases: {counts_text(suite)} in {suite.duration_ms / 1000:.2f}s"


def markdown_summary(suite: SuiteResult, title: str) -> str:
    """The job summary: a heading, the matrix and the counts, in GitHub Markdown."""
    lines = [f"### threads-cases: {title}s", "", *markdown_table(suite, title)]
    c = suite.counts
    lines.append("")
    lines.append(
        f"{tally_text(suite)}: **"
        + " · ".join(f"{c[v]} {v}" for v in VERDICTS if c[v] or v not in ("xfail", "xpass"))
        + "** in "
        f"{suite.duration_ms / 1000:.2f}s; exit status {suite.exit_status}"
        + (" (strict)" if suite.strict else "")
    )
    from .repeat_view import repeat_lines

    repeated = repeat_lines(suite)  # spec/replay.md 11.9
    if repeated:
        lines += ["", *(f"- {text}" for text in repeated)]
    lines.append("")
    return "\n".join(lines) + "\n"


def _stderr(message: str) -> None:
    print(message, file=sys.stderr)


def write_github(
    suite: SuiteResult,
    title: str,
    out: IO[str] | None = None,
    warn: Callable[[str], None] | None = None,
) -> None:
    """Print the annotations and the summary line; append the Markdown summary to
    ``$GITHUB_STEP_SUMMARY`` when it is set (a failure to write it is a warning: ``warn``,
    by default a line on stderr; the CLI passes its ``note``, silent under -q)."""
    stream = out or sys.stdout
    for r in suite.results:
        line = annotation(r)
        if line is not None:
            stream.write(line + "\n")
    from ..live.view import live_lines
    from ..run.provenance import answer_lines
    from .repeat_view import repeat_lines

    # repeated runs' rates (11.9), a live run's calls and spend (11.6), the answers (11.11)
    for text in [*repeat_lines(suite), *live_lines(suite), *answer_lines(suite.results)]:
        stream.write(text + "\n")
    stream.write(summary_line(suite) + "\n")
    stream.flush()
    target = os.environ.get("GITHUB_STEP_SUMMARY")
    if target:
        try:
            with open(target, "a", encoding="utf-8") as fh:
                fh.write(markdown_summary(suite, title))
        except OSError as exc:
            (warn or _stderr)(f"warning: cannot append the job summary to {target}: {exc.strerror}")
