"""What every transcript reader shares: the file, its lines, and what to do with a bad line.

A format reader (:class:`~threads_cases.importers.claude_code.ClaudeCodeSource`,
:class:`~threads_cases.importers.codex.CodexSource`) reads its file twice: a first pass
(``_scan``) checks every line, collects the header (thread id, model, tools) and marks in
``self.keep`` the lines the second pass maps; the second pass (``items()``) yields
:class:`~threads_cases.importers.common.Turn` and
:class:`~threads_cases.importers.common.Extra` items from the kept lines only.

Reason codes: ``io_error`` (the transcript cannot be read), ``import_invalid`` (a malformed
line, unless ``skip_invalid``), spec/importers.md section 4.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import orjson

from ..core.errors import CaseError
from ..core.strictjson import parse
from .common import Stats, import_error

#: What :meth:`TranscriptSource._parse` returns for a line it skipped.
BAD: Any = object()


class TranscriptSource:
    """A transcript file read as JSON Lines, with the keep marks of the first pass.

    ``path`` is the file, ``stats`` collects what was skipped, ``skip_invalid`` skips a
    malformed line (counted in ``stats.invalid``) instead of raising ``import_invalid``.
    """

    format = ""

    def __init__(
        self,
        path: str | os.PathLike[str],
        *,
        skip_invalid: bool = False,
        stats: Stats | None = None,
    ) -> None:
        self.path = Path(path)
        self.file = str(path)
        self.stats = stats or Stats()
        self.skip_invalid = skip_invalid
        self.keep = bytearray()

    def _lines(self) -> Iterator[tuple[int, bytes]]:
        """``(line number from 1, the line without its end)``; ``io_error`` when unreadable."""
        try:
            fh = open(self.path, "rb")  # noqa: SIM115 - closed below
        except OSError as exc:
            raise CaseError(
                "io_error", f"cannot read the transcript: {exc.strerror}", file=self.file
            ) from None
        with fh:
            for lineno, raw in enumerate(fh, 1):
                yield lineno, raw.rstrip(b"\r\n")

    def _invalid(self, lineno: int, kind: str, message: str) -> None:
        """A malformed line: raise ``import_invalid``, or count it with ``skip_invalid``."""
        if not self.skip_invalid:
            raise import_error(message, file=self.file, line=lineno, kind=kind)
        self.stats.invalid += 1
        self.stats.skip("invalid line (--skip-invalid)")

    def _parse(self, lineno: int, body: bytes, kind: str) -> Any:
        """The value of one line, or :data:`BAD` when it is malformed (and skipped)."""
        try:
            return parse(body, code="import_invalid", file=self.file, line=lineno)
        except CaseError as err:
            self._invalid(lineno, kind, err.message)
            return BAD

    def _kept(self) -> Iterator[tuple[int, Any]]:
        """The lines the first pass kept, parsed: ``(line number, value)``."""
        keep = self.keep
        for lineno, body in self._lines():
            if lineno <= len(keep) and keep[lineno - 1]:
                yield lineno, orjson.loads(body)
