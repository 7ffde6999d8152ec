"""The outputs of a finished run, each behind one small interface (spec/reports.md): a
:class:`Reporter` is given the :class:`FinishedRun` once, after the last result, and writes
its output. ``run`` and ``conformance`` pick theirs from their options (``--format``,
``--junit``) and hand the run to each in turn, as pytest hands a session to its terminal and
junitxml plugins:

- :class:`JsonLines`: the JSON Lines report (``schemas/report.schema.json``) on a stream
  (``--format json``);
- :class:`Terminal`: the view for people (:func:`.suite_view.print_suite`, or
  :func:`.suite_view.print_conformance` for ``conformance``; ``--format pretty``);
- :class:`GitHub`: annotations and the job summary (:mod:`.github`; ``--format github``);
- :class:`JUnit`: JUnit XML written atomically to a file (:mod:`.junit`; ``--junit FILE``);
- :class:`LastReport`: the JSON Lines report kept for ``--last-failed`` and ``stale``
  (``.threads-cases/last-report.jsonl``), left as it was by a run that checked nothing;
- :class:`Html`: the compliance page (:mod:`.compliance_html`, spec/conformance.md 7) in
  ``DIR/index.html``. Besides a finished run it takes :class:`ReportFiles`, the JSON Lines
  reports of runs that finished before (``report html``: the shards of one run, and an older
  report to compare with).

A reporter says what the user should know through ``note`` (the CLI's: stderr, silenced by
``-q``), never by raising for an output it could not write beside a finished run.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any, Protocol

from ..run.runner import SuiteResult

if TYPE_CHECKING:
    from rich.console import Console

Note = Callable[[str], None]


@dataclass(frozen=True, eq=False)
class FinishedRun:
    """A finished run as every reporter sees it: the suite, the lines of its JSON Lines
    report (:func:`.suite.report_lines`, built once), the command (``"run"`` or
    ``"conformance"``) and what a row is called (``"case"``, ``"test"``)."""

    suite: SuiteResult
    lines: Sequence[Mapping[str, Any]]
    command: str
    title: str

    @cached_property
    def encoded(self) -> list[bytes]:
        """Each report line as canonical JSON with its LF, encoded once for every reporter
        that writes it (stdout under ``--format json`` and the kept last report)."""
        from ...core.canonical import canonical_line

        return [canonical_line(line) + b"\n" for line in self.lines]


class Reporter(Protocol):
    """One output of a finished run."""

    def report(self, run: FinishedRun) -> None:
        """Write this output of ``run``."""
        ...


def _stderr(message: str) -> None:
    print(message, file=sys.stderr)


@dataclass(frozen=True)
class JsonLines:
    """The report's lines, canonical JSON one per line, on ``out`` (bytes; stdout's buffer
    by default)."""

    out: IO[bytes] | None = None

    def report(self, run: FinishedRun) -> None:
        out = self.out or sys.stdout.buffer
        out.writelines(run.encoded)
        out.flush()


@dataclass(frozen=True)
class Terminal:
    """The view for people on ``console``: a suite's panels, table and summary line; for
    ``conformance``, its panels and matrix by area (``areas``, every test with ``verbose``)."""

    console: Console
    areas: Sequence[str] = ()
    verbose: bool = False

    def report(self, run: FinishedRun) -> None:
        from .suite_view import print_conformance, print_suite

        if run.command == "conformance":
            print_conformance(self.console, run.suite, self.areas, self.verbose)
        else:
            print_suite(self.console, run.suite, run.title)


@dataclass(frozen=True)
class GitHub:
    """GitHub Actions annotations and the job summary (``$GITHUB_STEP_SUMMARY``); a summary
    that cannot be written is a ``note``."""

    note: Note = _stderr

    def report(self, run: FinishedRun) -> None:
        from .github import write_github

        write_github(run.suite, run.title, warn=self.note)


@dataclass(frozen=True)
class JUnit:
    """JUnit XML of the run written to ``path`` (its folder created; never half a file)."""

    path: Path

    def report(self, run: FinishedRun) -> None:
        from ...core.atomic import write_atomic
        from .junit import junit_xml

        self.path.parent.mkdir(parents=True, exist_ok=True)  # as for every file written
        write_atomic(self.path, junit_xml(run.suite))  # the umask's mode


@dataclass(frozen=True)
class LastReport:
    """The JSON Lines report kept in ``path`` (outside any case) for ``--last-failed`` and
    ``stale``. A run without results leaves the last one as it was (an empty report would
    wipe the record) and says so; a report that cannot be written is a warning."""

    path: Path
    note: Note = _stderr

    def report(self, run: FinishedRun) -> None:
        from .suite import write_encoded

        if not run.suite.results:
            k, n = run.suite.shard or (0, 0)
            why = f"shard {k}/{n} holds none of the cases found" if n else "no case was run"
            self.note(
                f"{why}: nothing was checked; the last report ({self.path}) is left as it was"
            )
            return
        try:
            write_encoded(run.encoded, self.path)
        except OSError as exc:
            self.note(f"warning: cannot keep the last report in {self.path}: {exc}")


@dataclass(frozen=True)
class ReportFiles:
    """Runs that finished before, as their JSON Lines reports (``schemas/report.schema.json``)
    in the order given: what :class:`Html` renders for ``report html``."""

    paths: Sequence[str | os.PathLike[str]]


#: the name of a run's own report on its page (a report file is named by its path)
THIS_RUN = "this run"


@dataclass(frozen=True)
class Html:
    """The compliance page of a finished run, or of :class:`ReportFiles`, written to
    ``out_dir/index.html`` (:func:`.compliance_html.write_built`): with ``compare`` (an older
    report) it also shows what changed since; ``title`` is the page's. ``wrote`` is given the
    line saying what was written (``report html`` prints it).

    Raises ``CaseError``, unlike the other reporters, as the page is the command's only
    output: ``invalid_request`` and ``json_invalid`` for reports it refuses
    (:func:`.compliance.build_page`), ``io_error`` for a page that cannot be written."""

    out_dir: Path
    compare: Path | None = None
    title: str | None = None
    wrote: Note | None = None

    def report(self, run: FinishedRun | ReportFiles) -> None:
        from ..check.compliance import page_of, read_reports, report_part
        from .compliance_html import write_built

        if isinstance(run, ReportFiles):
            parts = read_reports(run.paths)
        else:
            parts = iter([report_part(THIS_RUN, list(enumerate(run.lines, 1)))])
        page = page_of(parts, self.compare, self.title)
        path = write_built(page, self.out_dir)
        if self.wrote is not None:
            counts = ", ".join(f"{n} {v}" for v, n in page.totals.items() if n)
            self.wrote(
                f"wrote {path}: {len(page.rows)} case(s) x {len(page.implementations)} "
                f"implementation(s): {counts or 'no result'}"
            )


def report_all(reporters: Sequence[Reporter], run: FinishedRun) -> None:
    """Hand ``run`` to each of ``reporters``, in order."""
    for reporter in reporters:
        reporter.report(run)
