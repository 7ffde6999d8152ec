"""VCR cassettes read as a list of HTTP interactions (spec/importers.md section 6.1).

A cassette (vcrpy, pytest-recording) is YAML::

    interactions:
    - request: {body: <text or null>, headers: {...}, method: POST, uri: https://...}
      response:
        body: {string: <text, or !!binary bytes>}
        headers: {content-type: [...], content-encoding: [gzip]?, date: [...]}
        status: {code: 200, message: OK}
    version: 1

The file may be gzipped as a whole (``.yaml.gz``, told by its first bytes, not its name).
YAML is read with libyaml's ``CSafeLoader`` where the installed PyYAML has it (else the pure
``SafeLoader``: the same values, slower). A response body recorded compressed
(``content-encoding: gzip`` / ``deflate``, kept as bytes) is decompressed; a request body may
be a string, bytes or (as some recorders write it) an already parsed mapping; recorders that
keep bodies as YAML write ``parsed_body:`` (a mapping) in place of ``body:``, or ``body:
{type: json, content: <mapping>}`` (``type: text``: a string), for requests and responses.
An interaction's time is its ``recorded_at`` where a recorder writes one, else its
response's ``Date`` header.

Each :class:`Interaction` carries the line of the file (of the decompressed text) where its
``- request:`` entry starts, so warnings and refusals name ``FILE:LINE``.

A file cut short (``head -c N``, a gzip stream that stops) is read to its last whole
interaction, the one the text stops in kept as its request alone when that is whole
(:mod:`.cut`); YAML damaged in the middle stays a refusal naming the line and column.

Reason codes: ``io_error`` (the file cannot be read), ``import_invalid`` (not YAML, damaged in
the middle, cut before its first interaction ends, not a cassette: the message says what
the file holds instead).
"""

from __future__ import annotations

import contextlib
import gzip
import re
import zlib
from dataclasses import dataclass, field, replace
from email.utils import parsedate_to_datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

import yaml

from ...core.errors import CaseError
from ...core.files import MAX_LOG_BYTES, open_regular
from ..common import import_error, parse_ts_ms

if TYPE_CHECKING:  # .cut is imported on the cut path only: the whole file never pays for it
    from .cut import CassetteCut

try:
    _LOADER: Any = yaml.CSafeLoader
except AttributeError:  # a PyYAML built without libyaml
    _LOADER = yaml.SafeLoader

#: whether the cassette is read with libyaml (the benchmark's baseline uses the same loader)
LIBYAML = _LOADER is not yaml.SafeLoader
VCR_HINT = (
    "pass a vcrpy / pytest-recording cassette (YAML with an `interactions` list), "
    "plain or gzipped; `threads-cases import auto FILE` names the formats it tries"
)
_ENTRY = re.compile(rb"^-[ \t]+request:", re.MULTILINE)


@dataclass
class Interaction:
    """One recorded request and its response: ``index`` (from 0), ``line`` (where the
    entry starts, from 1), ``method``, ``uri``, ``body`` (the request body as text, or None),
    ``status`` (the HTTP status, 0 when not recorded), ``headers`` (response headers,
    lower-case names, each value one string), ``text`` (the response body as text),
    ``ts`` (the response's ``Date`` header in ms since the epoch, or None) and ``parsed``
    (a response body kept as a mapping)."""

    index: int
    line: int
    method: str
    uri: str
    body: Any
    status: int
    headers: dict[str, str]
    text: str
    ts: int | None = None
    #: a response body a recorder kept as a YAML mapping (``parsed_body``), else None
    parsed: dict[str, Any] | None = None
    problems: list[str] = field(default_factory=list)
    #: the cassette stops inside this interaction's response: its request is whole, its
    #: response not recorded (:mod:`.cut`)
    cut: bool = False


def read_bytes(path: Path) -> tuple[bytes, str | None]:
    """The cassette's bytes, decompressed when the file is gzipped, and, when its gzip
    stream stops before its end, why (its text is what decompresses: :func:`.cut.gunzip_cut`);
    ``io_error`` when it cannot be read, ``import_invalid`` when the gzip stream is damaged
    in the middle."""
    with open_regular(path, code="io_error", limit=MAX_LOG_BYTES) as fh:
        data = fh.read()
    if data[:2] == b"\x1f\x8b":
        try:
            return gzip.decompress(data), None
        except (OSError, EOFError, zlib.error) as exc:
            first = exc
        from .cut import gunzip_cut

        try:
            return gunzip_cut(data)
        except zlib.error:
            raise import_error(
                f"the gzipped cassette cannot be decompressed ({first})",
                file=str(path),
                line=None,
                kind=None,
                hint=VCR_HINT,
            ) from None
    return data, None


def _text(value: Any, encoding: str = "") -> str:
    """A body as text: bytes decompressed (``encoding``) and decoded as UTF-8 (bad bytes
    become U+FFFD), a string as it is, None as ``""``."""
    if value is None:
        return ""
    if isinstance(value, bytes):
        if encoding in ("gzip", "x-gzip") or value[:2] == b"\x1f\x8b":
            with contextlib.suppress(OSError, EOFError, zlib.error):
                value = gzip.decompress(value)
        elif encoding == "deflate":
            try:
                value = zlib.decompress(value)
            except zlib.error:
                value = zlib.decompress(value, -zlib.MAX_WBITS)
        text: str = value.decode("utf-8", "replace")
        return text
    return value if isinstance(value, str) else ""


def _headers(raw: Any) -> dict[str, str]:
    out: dict[str, str] = {}
    if isinstance(raw, dict):
        for k, v in raw.items():
            if isinstance(v, list):
                v = v[0] if v else ""
            out[str(k).lower()] = v if isinstance(v, str) else str(v)
    return out


def _date_ms(value: str) -> int | None:
    try:
        dt = parsedate_to_datetime(value)
    except (TypeError, ValueError, IndexError):
        return None
    return int(dt.timestamp() * 1000) if dt.tzinfo is not None else None


def _interaction(k: int, line: int, raw: Any) -> Interaction:
    """One ``interactions`` entry; what is missing is listed in ``problems``."""
    req = raw.get("request") if isinstance(raw, dict) else None
    resp = raw.get("response") if isinstance(raw, dict) else None
    it = Interaction(k, line, "", "", None, 0, {}, "")
    if not isinstance(req, dict):
        it.problems.append("has no request mapping")
        return it
    it.method = str(req.get("method") or "")
    it.uri = str(req.get("uri") or "")
    body = _unwrap(req.get("body"))
    if body is None and isinstance(req.get("parsed_body"), dict):
        body = req["parsed_body"]  # recorders that keep bodies as YAML mappings
    it.body = body if isinstance(body, dict) else (_text(body) or None)
    if not isinstance(resp, dict):
        it.problems.append("has no response mapping")
        return it
    status = resp.get("status")
    code = status.get("code") if isinstance(status, dict) else status
    it.status = code if isinstance(code, int) and not isinstance(code, bool) else 0
    it.headers = _headers(resp.get("headers"))
    rbody = _unwrap(resp.get("body"))
    if rbody is None and isinstance(resp.get("parsed_body"), dict):
        rbody = resp["parsed_body"]
    if isinstance(rbody, dict):
        it.parsed = rbody
    else:
        it.text = _text(rbody, it.headers.get("content-encoding", "").strip().lower())
    recorded = parse_ts_ms(raw.get("recorded_at"))
    if recorded is not None:
        it.ts = recorded
    elif "date" in it.headers:
        it.ts = _date_ms(it.headers["date"])
    return it


def _unwrap(body: Any) -> Any:
    """A body as vcrpy writes it (``{string: ...}`` or the value), or as recorders that keep
    bodies typed write it (``{type: json | text, content: ...}``)."""
    if isinstance(body, dict):
        if "string" in body:
            return body["string"]
        if "content" in body and body.get("type") in ("json", "text", "binary", None):
            return body["content"]
    return body


def is_cassette(doc: Any) -> bool:
    """Whether a YAML document is shaped like a VCR cassette."""
    return isinstance(doc, dict) and isinstance(doc.get("interactions"), list)


class Cassette:
    """A cassette read: its ``interactions`` and, when the file is cut short, ``cut``
    (:class:`.cut.CassetteCut`: where, and the warning's text)."""

    __slots__ = ("cut", "interactions")

    def __init__(self, interactions: list[Interaction], cut: CassetteCut | None = None) -> None:
        self.interactions, self.cut = interactions, cut


def _last_whole(doc: dict[str, Any]) -> bool:
    """Whether the last entry of a cassette that reads has its response ``status`` code
    (the last key vcrpy writes of an entry): the whole file's O(1) check (:mod:`.cut`)."""
    entries = doc["interactions"]
    raw = entries[-1] if entries else None
    resp = raw.get("response") if isinstance(raw, dict) else None
    status = resp.get("status") if isinstance(resp, dict) else None
    code = status.get("code") if isinstance(status, dict) else status
    return not entries or isinstance(code, int)


def _refuse_shape(doc: Any, file: str) -> CaseError:
    what = type(doc).__name__ if doc is not None else "nothing"
    if isinstance(doc, dict):
        what = f"a mapping without an `interactions` list (keys: {', '.join(map(str, doc))[:80]})"
    return CaseError(
        "import_invalid", f"not a VCR cassette: the YAML holds {what}", file=file, hint=VCR_HINT
    )


def _parse(data: bytes, starts: list[int], file: str, gz: bool) -> tuple[Any, CassetteCut | None]:
    """The YAML document of a cassette and where it is cut (None: whole; :mod:`.cut`).
    ``gz``: its gzip stream stops, so a text too short to be a cassette is cut short."""
    try:
        doc = yaml.load(data, Loader=_LOADER)  # CSafeLoader or SafeLoader: no tags run code
    except yaml.YAMLError as exc:
        if not isinstance(exc, yaml.MarkedYAMLError | yaml.reader.ReaderError):
            raise import_error(
                f"not YAML: {exc}", file=file, line=None, kind=None, hint=VCR_HINT
            ) from None
        from .cut import recover

        return recover(data, starts, exc, file, VCR_HINT, _LOADER)
    if not is_cassette(doc):
        if gz:  # the gzip stream stops before a whole interaction
            from .cut import nothing_whole, stop_place

            raise nothing_whole(file, *stop_place(data))
        raise _refuse_shape(doc, file)
    if _last_whole(doc):
        return doc, None
    from .cut import partial_last

    return doc, partial_last(data, doc, starts, file)


def read_cassette(path: Path) -> Cassette:
    """The interactions of the cassette at ``path`` (module docstring); a file cut short
    read to its last whole interaction (:mod:`.cut`). Raises ``import_invalid`` for a file
    that is not a cassette, ``io_error`` when unreadable."""
    file = str(path)
    data, gz_cut = read_bytes(path)
    starts = [m.start() for m in _ENTRY.finditer(data)]
    try:
        doc, cut = _parse(data, starts, file, gz_cut is not None)
    except CaseError as exc:
        if gz_cut is None:
            raise
        raise CaseError(
            exc.code, f"{gz_cut}; {exc.message}", file=file, line=exc.location.line, hint=exc.hint
        ) from None
    if gz_cut is not None:  # what is lost after the text is not known: ``lost``
        from .cut import CassetteCut

        if cut is None:
            cut = CassetteCut(data.count(b"\n") + 1, "every interaction it holds is whole")
        cut = replace(cut, message=f"{gz_cut}; {cut.message}", lost=True)
    lines, line, pos = [], 1, 0
    for start in starts:  # counted on from the entry before: linear in the file
        line += data.count(b"\n", pos, start)
        pos = start
        lines.append(line)
    entries = doc["interactions"]
    if cut is not None and cut.request is not None:
        entries = [*entries, {"request": cut.request}]
    if len(lines) < len(entries) or (cut is None and len(lines) != len(entries)):
        lines = [0] * len(entries)  # written by another YAML emitter: name the entries only
    out = [_interaction(k, lines[k], raw) for k, raw in enumerate(entries)]
    if cut is not None and cut.request is not None:
        out[-1].cut, out[-1].problems = True, []
    return Cassette(out, cut)
