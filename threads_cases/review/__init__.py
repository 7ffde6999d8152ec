"""Reviewing cases: show, diff, fmt, list, validate and stale (the library behind the
``threads-cases show|diff|fmt|list|validate|stale`` commands).

Shapes:

* :func:`case_summary` -> ``{"name", "path", "dialects", "portable", "fingerprint",
  "fingerprint_ok", "size", "files", "error"}`` (one row of ``list``).
* :func:`diff_case_files` / :func:`diff_file` -> a list of :class:`Change`
  ``{"file", "kind": added|removed|changed, "item", "pointer", "before", "after"}``: matchers
  (``item`` ``must[i]``/``expect[i]``), prefix log events (``item`` ``seq N <type>``), model
  replies (``replies[i]``), stubs (``calls[i]``), sandbox reads (``reads[i]``), expected
  states and other JSON by pointer, artifacts and other files by name.
* :func:`format_case` -> :class:`FormatResult` (the files that are not canonical, the new
  bytes, whether the fingerprint is stale, the files that could not be read).
* :func:`validate_case` -> every :class:`~threads_cases.core.errors.Problem` of a case directory.
* :func:`stale_entries` -> the results of a JSON report with ``reply_unused`` /
  ``stub_unused`` checks.

Reason codes: ``case_invalid`` (a broken file, a missing or unknown file, a cross-file
reference, logs that disagree), ``format_unsupported``, ``log_invalid`` (a log),
``state_mismatch`` (an expected file the log does not reduce to), ``fingerprint_stale``,
``dialect_unknown``; ``git_unavailable`` and ``invalid_request`` for ``diff --git`` refusals.

Modules: :mod:`.files` (reading a case, ``list``), :mod:`.validate`, :mod:`.show`, :mod:`.fmt`,
:mod:`.diff`, :mod:`.git` (``diff --git``), :mod:`.stale`. The names below are re-exported so
``from threads_cases.review import validate_case`` keeps working.
"""

from __future__ import annotations

from ..case.directory import walk_case
from .diff import Change, bookkeeping_line, diff_case_files, diff_file, split_bookkeeping
from .files import CANONICAL_DIALECT, RECORDING_FILES, case_summary, short_fingerprint
from .fmt import FormatResult, case_dirs_for, format_case, unfixable_problems, write_formatted
from .git import git_case_files
from .show import VALUES_WARNING, event_summary, render_case
from .stale import UNUSED_CODES, stale_entries, unchecked_cases
from .validate import validate_case

__all__ = [
    "CANONICAL_DIALECT",
    "RECORDING_FILES",
    "UNUSED_CODES",
    "VALUES_WARNING",
    "Change",
    "FormatResult",
    "bookkeeping_line",
    "case_dirs_for",
    "case_summary",
    "diff_case_files",
    "diff_file",
    "event_summary",
    "format_case",
    "git_case_files",
    "render_case",
    "short_fingerprint",
    "split_bookkeeping",
    "stale_entries",
    "unchecked_cases",
    "unfixable_problems",
    "validate_case",
    "walk_case",
    "write_formatted",
]
