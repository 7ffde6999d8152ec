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

Reason codes: ``io_error`` (the file cannot be read), ``import_invalid`` (not YAML, not a
cassette: the message says what the file holds instead).
"""

from __future__ import annotations

import contextlib
import gzip
import re
import zlib
from dataclasses import dataclass, field
from email.utils import parsedate_to_datetime
from pathlib import Path
from typing import Any

import yaml

from ...core.errors import CaseError
from ...core.files import MAX_LOG_BYTES, open_regular
from ..common import import_error, parse_ts_ms

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


def read_bytes(path: Path) -> bytes:
    """The cassette's bytes, decompressed when the file is gzipped (``io_error`` when it
    cannot be read, ``import_invalid`` when the gzip stream is damaged)."""
    with open_regular(path, code="io_error", limit=MAX_LOG_BYTES) as fh:
        data = fh.read()
    if data[:2] == b"\x1f\x8b":
        try:
            return gzip.decompress(data)
        except (OSError, EOFError, zlib.error) as exc:
            raise import_error(
                f"the gzipped cassette cannot be decompressed ({exc})",
                file=str(path),
                line=None,
                kind=None,
                hint=VCR_HINT,
            ) from None
    return data


def load_yaml(data: bytes, file: str) -> Any:
    """The YAML document of a cassette (``import_invalid`` at the line of a YAML error)."""
    try:
        return yaml.load(data, Loader=_LOADER)  # CSafeLoader or SafeLoader: no tags run code
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark
        raise import_error(
            f"not YAML: {exc.problem}",
            file=file,
            line=mark.line + 1 if mark is not None else None,
            kind=None,
            hint=VCR_HINT,
        ) from None
    except yaml.YAMLError as exc:
        raise import_error(
            f"not YAML: {exc}", file=file, line=None, kind=None, hint=VCR_HINT
        ) from None


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


def read_cassette(path: Path) -> list[Interaction]:
    """The interactions of the cassette at ``path`` (module docstring). Raises
    ``import_invalid`` for a file that is not a cassette, ``io_error`` when unreadable."""
    data = read_bytes(path)
    doc = load_yaml(data, str(path))
    if not is_cassette(doc):
        what = type(doc).__name__ if doc is not None else "nothing"
        if isinstance(doc, dict):
            what = (
                f"a mapping without an `interactions` list (keys: {', '.join(map(str, doc))[:80]})"
            )
        raise CaseError(
            "import_invalid",
            f"not a VCR cassette: the YAML holds {what}",
            file=str(path),
            hint=VCR_HINT,
        )
    lines, line, pos = [], 1, 0
    for m in _ENTRY.finditer(data):  # counted on from the entry before: linear in the file
        line += data.count(b"\n", pos, m.start())
        pos = m.start()
        lines.append(line)
    entries = doc["interactions"]
    if len(lines) != len(entries):  # written by another YAML emitter: name the entries only
        lines = [0] * len(entries)
    return [_interaction(k, lines[k], raw) for k, raw in enumerate(entries)]
