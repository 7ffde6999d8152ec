"""A recording given where a thread log is wanted (``turns``, ``validate``, ``draft``,
``reduce``, ``save`` without ``--from``; spec/importers.md section 7.1).

The log reader refuses such a file at its first line, in words about thread logs (``not valid
JSON``, one problem per line of a YAML cassette). When ``import auto``'s detection
(:mod:`.detect`) recognises the file as a recording, :func:`not_a_thread_log` says instead
what it is and how to use it: ``log_invalid``, ``FILE: not a thread log: this looks like a
VCR cassette (vcr)``, the hint the command to import it (``threads-cases import vcr FILE -o
LOG``) or to save from it directly (``--from vcr``), worded for the command line or the API
(``hints``, as threads_cases/case/wording.py).
"""

from __future__ import annotations

import os
import shlex
from pathlib import Path

from ..case.wording import CLI, Hints
from ..core.errors import CaseError, Problem

#: what each format ``import auto`` detects is, in a sentence
WHAT = {
    "vcr": "a VCR cassette",
    "swe-agent": "a SWE-agent trajectory",
    "inspect-ai": "an inspect-ai eval log",
    "openhands": "an OpenHands trajectory",
    "claude-code": "a Claude Code transcript",
    "codex": "a Codex session",
    "threads": "a `threads export` file",
    "mcp": "an MCP session cassette",
}


def recording_format(path: str | os.PathLike[str]) -> str | None:
    """The format ``import auto`` detects in the file at ``path``; ``None`` when it detects
    none, when the file is a thread log, or when it cannot be read."""
    from .detect import detect_format

    try:
        return detect_format(path)
    except (CaseError, OSError):
        return None


def import_hint(
    path: str | os.PathLike[str], fmt: str, hints: Hints = CLI, then: str = "pass LOG in its place"
) -> str:
    """What to do with a recording of format ``fmt``: import it (and ``then`` what), or save
    a turn from it directly."""
    if hints == CLI:
        return (
            f"import it first: `threads-cases import {fmt} {shlex.quote(str(path))} -o LOG`, "
            f"then {then}; or save a turn from it directly with `save --from {fmt}`"
        )
    return (
        f'import it first: import_to_file("{fmt}", FILE, LOG); or save a turn from it '
        f'directly with save_log(FILE, ..., from_format="{fmt}")'
    )


def turns_hint(path: str | os.PathLike[str], fmt: str, hints: Hints = CLI) -> str:
    """How to list the turns of a recording: ``turns`` reads thread logs, so import it."""
    if hints == CLI:
        return (
            f"to list its turns, import it first: `threads-cases import {fmt} "
            f"{shlex.quote(str(path))} -o LOG`, then `threads-cases turns LOG`"
        )
    return f'list its turns with list_turns(import_events("{fmt}", FILE))'


def not_a_thread_log(path: str | os.PathLike[str], hints: Hints = CLI) -> CaseError | None:
    """``CaseError("log_invalid")`` saying what the file at ``path`` is and how to import it,
    when it is a recording ``import auto`` detects; else ``None`` (the reader's own error
    stands)."""
    if Path(path).is_dir():
        return None
    fmt = recording_format(path)
    if fmt is None:
        return None
    return CaseError(
        "log_invalid",
        f"not a thread log: this looks like {WHAT.get(fmt, fmt)} ({fmt})",
        file=str(path),
        hint=import_hint(path, fmt, hints),
    )


def log_error(err: CaseError, path: str | os.PathLike[str], hints: Hints = CLI) -> CaseError:
    """``err``, the log reader's refusal of ``path``, or :func:`not_a_thread_log` in its
    place when the refusal is at the first line (or the whole file) and the file is a
    recording."""
    if err.code != "log_invalid" or err.location.line not in (None, 1):
        return err
    return not_a_thread_log(path, hints) or err


def log_problems(problems: list[Problem], path: str | os.PathLike[str]) -> list[Problem]:
    """``problems``, what ``validate`` found in the log ``path``, or the one problem of
    :func:`not_a_thread_log` in their place when the first is at the first line and the
    file is a recording (never a problem per line of a cassette)."""
    if not problems or problems[0].code != "log_invalid":
        return problems
    if problems[0].location.line not in (None, 1):
        return problems
    found = not_a_thread_log(path)
    return [found.problem()] if found is not None else problems
