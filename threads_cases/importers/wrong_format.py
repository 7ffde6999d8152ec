"""An importer given a file that is not of its format (spec/importers.md section 7.2).

Each importer refuses what it cannot read in its own words (``not JSON``, ``no sample``,
``no interactions list``), which mislead when the file is simply of another format, empty
or binary. :func:`reworded` turns such a refusal, once it happened, into the one that says
what the file is, in this order:

* a file ``import auto`` detects as another format: ``this looks like a VCR cassette (vcr),
  not an inspect-ai eval log``, the hint the command that imports it;
* an empty file: ``the file is empty`` (whitespace only: ``the file holds only blank
  lines``);
* bytes that are not text: ``not text: the byte at offset N (0xNN) is not UTF-8`` (or a
  control byte), with the file; a zip or gzip archive the format does not take says so.

Anything else keeps the importer's own refusal. :func:`no_turn_refusal` does the same for
an import that read no turn at all from a file detected as another format (an OpenHands
import of a ``.traj`` object), which would otherwise write a thread of no turn.
"""

from __future__ import annotations

import os
import shlex
import zlib
from pathlib import Path

from ..core.errors import CaseError
from ..core.files import MAX_LOG_BYTES, open_regular
from .recordings import WHAT, recording_format

HEAD = 1 << 20
#: control bytes no text format of an importer holds (tab, newline, carriage return are text)
_CONTROL = frozenset(range(0x20)) - {0x09, 0x0A, 0x0D}


def _head(path: Path) -> bytes:
    with open_regular(path, code="io_error", limit=MAX_LOG_BYTES) as fh:
        return fh.read(HEAD)


def not_text(data: bytes) -> str | None:
    """Why ``data`` (a file's first bytes) is not text, naming the byte offset; ``None`` when
    it is UTF-8 text without control bytes (NULs included: a file of NULs is binary)."""
    if data[:4] == b"PK\x03\x04":
        return "not text: a zip archive"
    if data[:2] == b"\x1f\x8b":
        try:
            data = zlib.decompressobj(16 + zlib.MAX_WBITS).decompress(data, HEAD)
        except zlib.error:
            return "not text: a damaged gzip stream"
    try:
        data.decode("utf-8")
    except UnicodeDecodeError as exc:
        if exc.reason != "unexpected end of data" or exc.start < len(data) - 4:
            return (
                f"not text: the byte at offset {exc.start} (0x{data[exc.start]:02x}) is not UTF-8"
            )
    for i, b in enumerate(data):
        if b in _CONTROL:
            return f"not text: a control byte (0x{b:02x}) at offset {i}"
    return None


def other_format(path: str | os.PathLike[str], asked: str) -> str | None:
    """The format ``import auto`` detects in ``path`` when it is not ``asked``, else None."""
    found = recording_format(path)
    return found if found not in (None, asked) else None


def looks_like(path: str | os.PathLike[str], found: str, asked: str, *, code: str) -> CaseError:
    """``code``: the file at ``path`` is of format ``found``, not ``asked``."""
    what = WHAT.get(asked, asked)
    return CaseError(
        code,
        f"this looks like {WHAT.get(found, found)} ({found}), not {what}",
        file=str(path),
        hint=f"import it with `threads-cases import {found} {shlex.quote(str(path))} -o LOG` "
        f"(or `save --from {found}`); `import auto` detects it",
    )


def reworded(err: CaseError, path: str | os.PathLike[str], asked: str) -> CaseError:
    """``err``, the ``asked`` importer's refusal of the file at ``path``, or the refusal that
    says what the file is (module docstring); the code stays ``err``'s. Another format is
    said whatever the refusal; empty and binary files only for a refusal of the whole file
    (one naming a line, ``FILE:LINE: invalid UTF-8 (column N)``, already locates it)."""
    p = Path(path)
    if asked == "auto" or not p.is_file():
        return err
    found = other_format(p, asked)
    if found is not None:
        return looks_like(p, found, asked, code=err.code)
    try:
        head = _head(p)
    except (CaseError, OSError):
        return err
    if head.strip() and err.location.line is not None:  # that line's refusal says more
        return err
    if not head.strip():
        if err.message.startswith(("the file is empty", "the file holds only blank lines")):
            return err  # the importer's own words already say it
        empty = "the file holds only blank lines" if head else "the file is empty"
        return CaseError(err.code, empty, file=str(p), hint=err.hint)
    why = not_text(head)
    if why is not None and not (asked == "inspect-ai" and head[:4] == b"PK\x03\x04"):
        return CaseError(err.code, why, file=str(p), hint=err.hint)
    return err


def no_turn_refusal(path: str | os.PathLike[str], asked: str) -> CaseError | None:
    """The refusal of an import that read no turn from ``path``, when ``import auto``
    detects another format in it; ``None`` otherwise (a recording may hold no turn)."""
    if asked == "auto" or not Path(path).is_file():
        return None
    found = other_format(path, asked)
    return looks_like(path, found, asked, code="import_invalid") if found else None
