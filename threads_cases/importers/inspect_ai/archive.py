"""An inspect-ai log file read: a ``.eval`` archive or a ``.json`` log, its samples listed
(spec/importers.md 11.1).

A ``.eval`` file is a zip archive: ``header.json`` (the eval's spec, plan, results; an eval
still running has ``_journal/start.json`` instead), one member ``samples/<id>_epoch_<n>.json``
per sample and epoch, and ``summaries.json`` / ``reductions.json``. A ``.json`` log is one
object holding the same header keys and a ``samples`` list.

Damage: an archive whose central directory is missing (the writer stopped) is read member
by member from its local headers; a member or a ``.json`` log cut short is closed where it
stops (:mod:`..cutjson`). Each is an ``import_repaired`` warning, reason ``cut_record``;
``strict`` refuses it (``import_invalid``).
"""

from __future__ import annotations

import io
import re
import struct
import zipfile
import zlib
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ...core.errors import CaseError
from ...core.files import MAX_LOG_BYTES, read_regular
from ..cutjson import CUT_HINT, NotJson, read_document

INSPECT_HINT = (
    "pass an inspect-ai log: a .eval archive (header.json, samples/<id>_epoch_<n>.json) or a "
    ".json log with a `samples` list; `threads-cases import auto FILE` names the formats it "
    "tries"
)
SAMPLE_MEMBER = re.compile(r"^samples/(.+)_epoch_(\d+)\.json$")
_LOCAL = struct.Struct("<4sHHHHHIIIHH")


@dataclass
class SampleRef:
    """One sample and epoch of the log: its ``id`` (as text), ``epoch``, the place it is
    read from (``where``: a member name or ``/samples/<i>``) and how to load it."""

    id: str
    epoch: int
    where: str
    load: Callable[[], tuple[Any, list[str | int] | None]]


@dataclass
class LogFile:
    """The header (``eval``, ``status``...) and the samples of one log, in file order;
    ``cut`` holds why the file is damaged (a warning each)."""

    header: dict[str, Any]
    samples: list[SampleRef] = field(default_factory=list)
    #: ``(line, message)`` per damage: the line its text stops on (of a ``.json`` log, or
    #: of the member of an archive the message names; 1 for the archive's own damage)
    cut: list[tuple[int, str]] = field(default_factory=list)
    #: where the text of each document cut short stops, by the ``where`` of its samples
    #: (a member's name, or ``the log``): ``line L column C`` (of the ``.json`` log) or
    #: ``<member> line L column C``
    stops: dict[str, str] = field(default_factory=dict)


def _loads(
    data: bytes,
    where: str,
    cuts: list[tuple[int, str]],
    stops: dict[str, str],
    *,
    line_in_file: bool = False,
) -> tuple[Any, list[str | int] | None]:
    """A JSON document, or the cut document closed (its open path), with a note in ``cuts``
    naming the line and column where its text stops (:func:`..cutjson.read_document`), and
    that place in ``stops`` (``where`` its key)."""
    try:
        read = read_document(data, where)
    except NotJson as exc:
        raise _Unreadable(exc.message, exc.line if line_in_file else None) from None
    if read.cut is None:
        return read.value, None
    message = f"{read.message}; the event it stops inside is dropped"
    cuts.append((read.line, message))
    place = f"line {read.line} column {read.column}"
    stops[where] = place if line_in_file else f"{where} {place}"
    return read.value, read.cut.open_path


class _Unreadable(ValueError):
    def __init__(self, message: str, line: int | None = None) -> None:
        super().__init__(message)
        self.line = line


def refuse_cut(file: str, cut: tuple[int, str]) -> CaseError:
    """The ``--strict`` refusal of a damaged log: as :meth:`..common.Stats.warn` words it."""
    return CaseError(
        "import_invalid", f"cut_record: {cut[1]}", file=file, line=cut[0], hint=CUT_HINT
    )


def _members_of_cut_zip(data: bytes) -> tuple[dict[str, bytes], str | None]:
    """The members of an archive with no central directory, from its local headers; the name
    of the member the data stops inside (its bytes are what was written), or None."""
    out: dict[str, bytes] = {}
    pos = 0
    while data.startswith(b"PK\x03\x04", pos) and pos + _LOCAL.size <= len(data):
        _, _, flags, method, _, _, _, csize, _, nlen, xlen = _LOCAL.unpack_from(data, pos)
        start = pos + _LOCAL.size
        name = data[start : start + nlen].decode("utf-8", "replace")
        body = start + nlen + xlen
        if method not in (0, 8):
            return out, name
        if method == 0 and not flags & 8:
            out[name] = data[body : body + csize]
            if body + csize > len(data):
                return out, name
            pos = body + csize
            continue
        dec = zlib.decompressobj(-zlib.MAX_WBITS)
        try:
            out[name] = dec.decompress(data[body:])
        except zlib.error:
            return out, name
        if not dec.eof:
            return out, name
        pos = len(data) - len(dec.unused_data)
        if flags & 8:  # a data descriptor after the member
            pos += 16 if data.startswith(b"PK\x07\x08", pos) else 12
    return out, None


def _archive(data: bytes, file: str, strict: bool) -> LogFile:
    cuts: list[tuple[int, str]] = []
    try:
        with zipfile.ZipFile(io.BytesIO(data)) as zf:
            names = zf.namelist()
            members = {n: zf.read(n) for n in names if n.endswith(".json")}
    except (zipfile.BadZipFile, zlib.error, EOFError, OSError, KeyError):
        if strict:
            raise CaseError(
                "import_invalid",
                "the .eval archive is damaged (no central directory: the writer stopped)",
                file=file,
                hint=INSPECT_HINT,
            ) from None
        members, stopped = _members_of_cut_zip(data)
        names = list(members)
        if stopped is not None:
            cuts.append((1, f"the archive stops at byte {len(data)}, inside member {stopped}"))
        else:
            cuts.append((1, "the archive has no central directory: read from its local headers"))
    head = members.get("header.json") or members.get("_journal/start.json")
    header: Any = {}
    stops: dict[str, str] = {}
    if head is not None:
        try:
            header, _ = _loads(head, "header.json", cuts, stops)
        except _Unreadable:
            header = {}
    log = LogFile(header if isinstance(header, dict) else {}, cut=cuts, stops=stops)
    for name in names:
        m = SAMPLE_MEMBER.match(name)
        if m is None:
            continue

        def load(name: str = name) -> tuple[Any, list[str | int] | None]:
            return _loads(members[name], name, log.cut, log.stops)

        log.samples.append(SampleRef(m.group(1), int(m.group(2)), name, load))
    return log


def read_log_file(path: Path, *, strict: bool) -> LogFile:
    """The log at ``path`` (module docstring). Raises ``CaseError("import_invalid")`` for a
    file that is neither (and, with ``strict``, for a damaged one), ``io_error``."""
    file = str(path)
    data = read_regular(path, code="io_error", limit=MAX_LOG_BYTES)
    if data[:4] == b"PK\x03\x04":
        return _archive(data, file, strict)
    cuts: list[tuple[int, str]] = []
    stops: dict[str, str] = {}
    try:
        doc, open_path = _loads(data, "the log", cuts, stops, line_in_file=True)
    except _Unreadable as exc:
        raise CaseError(
            "import_invalid", str(exc), file=file, line=exc.line, hint=INSPECT_HINT
        ) from None
    if cuts and strict:
        raise refuse_cut(file, cuts[0])
    if not isinstance(doc, dict) or not isinstance(doc.get("samples", []), list):
        raise CaseError(
            "import_invalid",
            "not an inspect-ai log: neither a .eval archive nor a JSON object with a "
            "`samples` list",
            file=file,
            hint=INSPECT_HINT,
        )
    log = LogFile({k: v for k, v in doc.items() if k != "samples"}, cut=cuts, stops=stops)
    samples = doc.get("samples") or []
    for i, s in enumerate(samples):
        if not isinstance(s, dict):
            continue
        sub = open_path[2:] if open_path and open_path[:2] == ["samples", i] else None
        sid, ep = s.get("id"), s.get("epoch")

        def load(s: Any = s, sub: Any = sub) -> tuple[Any, list[str | int] | None]:
            return s, sub

        epoch = ep if isinstance(ep, int) and not isinstance(ep, bool) else 1
        log.samples.append(SampleRef(str(sid), epoch, f"/samples/{i}", load))
    return log
