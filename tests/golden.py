"""Golden files for rendered output: ``assert_golden("name.txt", text)`` compares ``text``
with tests/data/golden/name.txt byte for byte. ``THREADS_CASES_UPDATE_GOLDEN=1`` rewrites the
file instead (then review its diff like any change of output).

Output that holds volatile parts goes through :func:`normalise` first, the one place that
says what a golden file may not pin: durations, the run's start time, the package version
and the run's own folder. Everything else (widths, borders, order, wording, markup) stays as
rendered, so a change of layout fails the test.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

from threads_cases import __version__

GOLDEN = Path(__file__).resolve().parent / "data" / "golden"

#: (pattern, replacement), applied in order by :func:`normalise`
VOLATILE: list[tuple[re.Pattern[str], str]] = [
    # the summary line's wall time: "... 1 error in 0.33s"
    (re.compile(r"\bin \d+(?:\.\d+)?s\b"), "in <seconds>s"),
    # a JSON report's durations: "duration_ms":131.412
    (re.compile(r'"duration_ms":\d+(?:\.\d+)?'), '"duration_ms":<ms>'),
    # JUnit's durations: time="0.247"
    (re.compile(r'\btime="\d+(?:\.\d+)?"'), 'time="<seconds>"'),
    # the run's start (a report header's started_at, the page's "started"): second precision,
    # so a recorded event's ts (milliseconds) stays as it is
    (re.compile(r"\b\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z"), "<started>"),
    # the package version, where the output names it
    (re.compile(rf'(threads-cases |"version":"){re.escape(__version__)}\b'), r"\1<version>"),
]


def normalise(text: str, *, root: Path | None = None) -> str:
    """``text`` with its volatile parts (:data:`VOLATILE`) replaced by placeholders, and the
    absolute folder ``root`` (the test's temporary project: a report's ``cwd``) by
    ``<root>``."""
    if root is not None:
        for form in {str(root.resolve()), str(root)}:
            text = text.replace(form, "<root>")
    for pattern, replacement in VOLATILE:
        text = pattern.sub(replacement, text)
    return text


def assert_golden(name: str, text: str) -> None:
    path = GOLDEN / name
    if os.environ.get("THREADS_CASES_UPDATE_GOLDEN") == "1":
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    assert path.is_file(), f"no golden file {path}; write it with THREADS_CASES_UPDATE_GOLDEN=1"
    assert text == path.read_text(encoding="utf-8"), f"differs from {path}"
