"""A cassette cut short (spec/importers.md 6.1, "Cut short"): the recorder, or a copy, stopped
in the middle of a write, so the file ends inside an interaction (``head -c N``, or a
``.yaml.gz`` whose gzip stream stops).

The lenient path only: a cassette that reads as YAML and whose last interaction is whole
never comes here but for one O(1) look at that interaction (:func:`partial_last`).

* **The gzip stream** stopping is read as far as it decompresses (:func:`gunzip_cut`).
* **Ends early or wrong in the middle.** A YAML error whose mark is on the text's last
  non-blank line (or past it) is the end of the text: the file is cut short. An error
  before that line, with more text after it, is damage in the middle: a refusal naming the
  line and column, never a truncation.
* **What is read.** The interactions whose ``- request:`` entry (written at column 0, as
  vcrpy and pytest-recording write them) has another entry, or a top-level key, after it
  are whole: the text before the last entry is loaded again with the same loader (public
  API only). The entry the text stops in keeps its request when its ``response:`` key was
  reached (the request was written whole before it), with no response; else it is dropped.
  A cassette that YAML reads although cut (a plain scalar or a block cut at a line end)
  is cut when its last entry has no response ``status`` (the last key vcrpy writes of an
  entry) and nothing follows it.
* **Nothing whole.** A cut before the first interaction ends is a refusal,
  ``import_invalid``, naming the line and column where the text stops.

Reason codes: ``import_invalid`` (damaged in the middle; cut before any whole interaction).
"""

from __future__ import annotations

import re
import zlib
from dataclasses import dataclass
from typing import Any

import yaml

from ..common import import_error

#: the hint of a cassette refused because it is cut before its first interaction ends
NOTHING_WHOLE_HINT = (
    "the cassette is cut short before its first interaction ends (its recorder stopped in "
    "the middle of a write): record it again, or import a copy holding a whole interaction"
)
_TOP_KEY = re.compile(rb"^[^\s\-#]", re.MULTILINE)
_RESPONSE = re.compile(rb"^  response:", re.MULTILINE)


@dataclass(frozen=True)
class CassetteCut:
    """Where a cassette is cut: ``line`` (where its text stops, from 1), ``message`` (the
    ``cut_record`` warning's text), ``entry`` (the index of the interaction the text stops
    inside, or None when every interaction read is whole) and ``request`` (that entry's
    request, when it was written whole, else None) and ``lost``."""

    line: int
    message: str
    entry: int | None = None
    request: dict[str, Any] | None = None
    #: interactions may be lost after the last one read (False: the text stops in a key
    #: after the whole interactions list)
    lost: bool = True


def gunzip_cut(data: bytes) -> tuple[bytes, str | None]:
    """``data`` (gzip) decompressed as far as it goes, and, when its stream stops before
    its end, why (else None). Raises ``zlib.error`` for a stream damaged in the middle."""
    out: list[bytes] = []
    rest = data
    while rest[:2] == b"\x1f\x8b":
        d = zlib.decompressobj(16 + zlib.MAX_WBITS)
        out.append(d.decompress(rest))
        if not d.eof:
            text = b"".join(out)
            return text, (
                f"the gzip stream stops after {len(data)} bytes of the file, before its end: "
                f"read the {len(text)} bytes it decompresses to"
            )
        rest = d.unused_data
    return b"".join(out), None


def stop_place(data: bytes) -> tuple[int, int]:
    """The line and column where the text of ``data`` stops (its last non-blank character)."""
    line, col, _ = _stop(data)
    return line, col


def _stop(data: bytes) -> tuple[int, int, int]:
    """The line and column (from 1, the column in characters) of the text's last non-blank
    character, and the line (from 0) it is on."""
    stripped = data.rstrip()
    line0 = stripped.count(b"\n")
    last = stripped[stripped.rfind(b"\n") + 1 :].decode("utf-8", "replace")
    return line0 + 1, max(len(last), 1), line0


def _whole_utf8(data: bytes) -> bytes:
    """``data`` without an incomplete UTF-8 sequence at its very end (a cut inside a
    character), else as it is."""
    try:
        data[-4:].decode("utf-8")
    except UnicodeDecodeError as exc:
        if exc.reason == "unexpected end of data":
            return data[: len(data) - 4 + exc.start]
    return data


def _load(data: bytes, loader: Any) -> Any:
    try:
        return yaml.load(data, Loader=loader)  # a safe loader: no tags run code
    except yaml.YAMLError:
        return None


def _request_of(entry: bytes, loader: Any) -> dict[str, Any] | None:
    """The request of a cut entry when its ``response:`` key was reached, else None."""
    m = _RESPONSE.search(entry)
    if m is None:
        return None
    doc = _load(entry[: m.start()], loader)
    raw = doc[0] if isinstance(doc, list) and len(doc) == 1 else None
    req = raw.get("request") if isinstance(raw, dict) else None
    return req if isinstance(req, dict) else None


def recover(
    data: bytes, starts: list[int], exc: yaml.YAMLError, file: str, hint: str, loader: Any
) -> tuple[Any, CassetteCut]:
    """The document of a cassette YAML refused (``exc``) and where it is cut (module
    docstring), or the refusal: ``import_invalid`` for damage in the middle, or a cut with
    no whole interaction."""
    line, col, line0 = _stop(data)
    mark = getattr(exc, "problem_mark", None) or getattr(exc, "context_mark", None)
    if isinstance(exc, yaml.reader.ReaderError):
        trimmed = _whole_utf8(data)
        if trimmed == data:  # bytes that are not UTF-8 before the end: damaged
            raise import_error(f"not YAML: {exc}", file=file, line=None, kind=None, hint=hint)
        try:  # the text stops inside a character: read without it
            doc = yaml.load(trimmed, Loader=loader)
        except yaml.MarkedYAMLError as again:
            return recover(trimmed, starts, again, file, hint, loader)
        cut = partial_last(trimmed, doc, starts, file, cut=True)
        return doc, cut or CassetteCut(line, _stops(line, col, "inside a character"))
    if mark is not None and mark.line < line0:
        problem = getattr(exc, "problem", None) or str(exc)
        raise import_error(
            f"not YAML: line {mark.line + 1} column {mark.column + 1}: {problem} (the text "
            "goes on after it: the file is damaged there, not cut short)",
            file=file,
            line=mark.line + 1,
            kind=None,
            hint=hint,
        )
    return _prefix(data, starts, line, col, file, loader)


def _stops(line: int, col: int, where: str) -> str:
    return f"the cassette stops at line {line} column {col}, {where} (cut short)"


def _prefix(
    data: bytes, starts: list[int], line: int, col: int, file: str, loader: Any
) -> tuple[Any, CassetteCut]:
    """The whole interactions before the entry the text stops in, and that entry's request
    when it is whole."""
    last = starts[-1] if starts else len(data)
    after = _TOP_KEY.search(data, last + 1) if starts else None
    if after is not None:  # the text stops in a key after the interactions list
        doc = _load(data[: after.start()], loader)
        if isinstance(doc, dict) and isinstance(doc.get("interactions"), list):
            n = len(doc["interactions"])
            return doc, CassetteCut(
                line,
                f"{_stops(line, col, 'after its last interaction')}: its {n} "
                "interaction(s) are whole and read",
                lost=False,
            )
    doc = _load(data[:last], loader) if starts else None
    entries = doc.get("interactions") if isinstance(doc, dict) else None
    if not isinstance(entries, list) or not entries:
        raise nothing_whole(file, line, col)
    k = len(entries)
    request = _request_of(data[last:], loader)
    return doc, CassetteCut(line, _cut_message(line, col, k, request), k, request)


def nothing_whole(file: str, line: int, col: int, lead: str = "") -> Exception:
    """The refusal of a cassette cut before its first interaction ends (``lead``: why the
    gzip stream stops, when it does)."""
    lead = f"{lead}; " if lead else ""
    return import_error(
        f"{lead}{_stops(line, col, 'before its first interaction ends')}: no interaction of "
        "it can be read",
        file=file,
        line=line,
        kind=None,
        hint=NOTHING_WHOLE_HINT,
    )


def _cut_message(line: int, col: int, k: int, request: dict[str, Any] | None) -> str:
    head = f"{_stops(line, col, f'inside interaction {k + 1}')}: its {k} whole interaction(s) read"
    if request is not None:
        return f"{head}; interaction {k + 1}'s request is whole, its response is not: no reply"
    return f"{head}; interaction {k + 1} is dropped (its request is not whole)"


def partial_last(
    data: bytes, doc: Any, starts: list[int], file: str, *, cut: bool = False
) -> CassetteCut | None:
    """Where a cassette YAML reads is cut (module docstring): None when its last entry is
    whole (O(1): it has a response ``status`` code) or something follows it; ``cut`` says the
    text is known cut (a character cut in the middle) whatever the entry holds."""
    entries = doc.get("interactions") if isinstance(doc, dict) else None
    if not isinstance(entries, list) or not entries:
        return None
    raw = entries[-1]
    resp = raw.get("response") if isinstance(raw, dict) else None
    status = resp.get("status") if isinstance(resp, dict) else None
    code = status.get("code") if isinstance(status, dict) else status
    if not cut and isinstance(code, int):
        return None  # the happy path: the last entry is whole
    if len(starts) == len(entries):
        last = starts[-1]
    elif len(starts) == len(entries) - 1 and not isinstance(raw, dict):
        last = data.rfind(b"\n-") + 1  # the text stops in the entry's first key (``- req``)
    else:
        return None  # written by another YAML emitter: not told
    if _TOP_KEY.search(data, last + 1) is not None:
        return None  # a damaged entry, not a cut one: the entry's own warning says so
    line, col, _ = _stop(data)
    k = len(entries) - 1
    if k == 0:
        raise nothing_whole(file, line, col)
    req = raw.get("request") if isinstance(raw, dict) and "response" in raw else None
    request = req if isinstance(req, dict) else None
    del entries[-1]
    return CassetteCut(line, _cut_message(line, col, k, request), k, request)
