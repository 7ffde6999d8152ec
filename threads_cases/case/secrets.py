"""Credentials in cases: detection and stable redaction (spec/case-format.md, "Secrets").

The rules are data, ``spec/secrets/rules.json``, loaded by every implementation:

* *text rules* ``{kind, pattern, group}``: a regular expression; the secret is the text of
  ``group`` (0: the whole match), so a label such as ``password=`` stays readable;
* *field rules* ``{kind, key_pattern, min_length}``: an object key matching ``key_pattern``
  as a whole makes its string value (of at least ``min_length`` characters) a secret;
* *pair rules* ``{when, kind, pattern}``: text rules that apply only to a text in which
  ``when`` was found (the unlabelled secret half of an AWS key pair).

A finding names the file, the line (JSON Lines), the JSON pointer with every key redacted,
or the view of an artifact (``utf-8``, ``latin-1``, ``utf-16le``, ``utf-16be``) and the
kind, never the value. Redaction replaces each secret with ``[REDACTED:<16 hex>]``, the
first 16 hex digits of the SHA-256 of the secret's UTF-8 bytes: the same secret always gets
the same placeholder, whatever rule or label found it.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterator
from dataclasses import dataclass
from functools import cache, lru_cache
from typing import Any

import orjson

from ..core.errors import CaseError, pointer_join
from ..core.resources import spec_dir
from .secret_forms import base64_runs, json_unescaped, url_decoded


@dataclass(frozen=True)
class _Rule:
    kind: str
    regex: re.Pattern[str]
    group: int = 0
    when: str | None = None
    keywords: tuple[str, ...] = ()


@dataclass(frozen=True)
class _Rules:
    text: tuple[_Rule, ...]
    pairs: tuple[_Rule, ...]
    fields: tuple[tuple[str, re.Pattern[str], int, re.Pattern[str] | None], ...]
    placeholder: re.Pattern[str]
    #: every keyword of every text rule in one alternation: a short text it does not match
    #: (lower-cased) holds no secret
    any_keyword: re.Pattern[str]
    prefix: str
    digits: int
    suffix: str
    #: decoded forms (10.2): the shortest base64 run decoded, how deep decoding nests
    base64_min_length: int
    max_depth: int


@cache
def rules() -> _Rules:
    """The rules of ``spec/secrets/rules.json`` (read once)."""
    doc = orjson.loads((spec_dir() / "secrets" / "rules.json").read_bytes())
    ph = doc["placeholder"]
    return _Rules(
        tuple(
            _Rule(r["kind"], re.compile(r["pattern"]), r["group"], None, tuple(r["keywords"]))
            for r in doc["text_rules"]
        ),
        tuple(_Rule(r["kind"], re.compile(r["pattern"]), 0, r["when"]) for r in doc["pair_rules"]),
        tuple(
            (
                r["kind"],
                re.compile(r["key_pattern"]),
                r["min_length"],
                re.compile(r["value_pattern"]) if "value_pattern" in r else None,
            )
            for r in doc["field_rules"]
        ),
        re.compile(doc["placeholder_pattern"]),
        re.compile(
            "|".join(sorted({re.escape(k) for r in doc["text_rules"] for k in r["keywords"]}))
        ),
        ph["prefix"],
        ph["hex_digits"],
        ph["suffix"],
        doc["decoding"]["base64_min_length"],
        doc["decoding"]["max_depth"],
    )


def kinds() -> list[str]:
    """Every kind the rules can report, sorted."""
    r = rules()
    return sorted({x.kind for x in r.text} | {f[0] for f in r.fields})


def placeholder(secret: str) -> str:
    """``[REDACTED:<first 16 hex of sha256(secret UTF-8)>]``: the value alone decides it."""
    r = rules()
    digest = hashlib.sha256(secret.encode("utf-8", "surrogatepass")).hexdigest()
    return f"{r.prefix}{digest[: r.digits]}{r.suffix}"


def is_placeholder(text: str) -> bool:
    return rules().placeholder.fullmatch(text) is not None


#: Up to this length one alternation of the keywords screens a text faster than a substring
#: search per keyword; past it the alternation, tried at every position, is the slower.
_SCREEN_MAX = 1024


def _candidates(r: _Rules, text: str) -> list[_Rule]:
    """The text rules whose keywords ``text`` holds (lower-cased): no match of a rule can
    hold none of them (spec/secrets/rules.json), and a substring search is a memchr-speed
    pass where a pattern that starts with a lookbehind is tried at every position."""
    lowered = text.lower()
    if len(lowered) <= _SCREEN_MAX and r.any_keyword.search(lowered) is None:
        return []
    return [rule for rule in r.text if any(k in lowered for k in rule.keywords)]


def _apply(rule: _Rule, text: str, taken: list[tuple[int, int, str]]) -> None:
    for m in rule.regex.finditer(text):
        a, b = m.span(rule.group)
        if a < 0 or a == b or any(a < y and x < b for x, y, _ in taken):
            continue
        if is_placeholder(text[a:b]):
            continue
        taken.append((a, b, rule.kind))


def spans(text: str) -> list[tuple[int, int, str]]:
    """``(start, end, kind)`` of every secret in ``text``, in order of position
    (spec/case-format.md 10.2): those of the text as written (:func:`plain_spans`), then
    those of its decoded forms (JSON string escapes, URL percent-encoding, base64 runs;
    :mod:`.secret_forms`) mapped back to the characters that encode them, nested up to
    ``max_depth`` decodings; spans that overlap are joined into one."""
    return _merged(_layered(text, rules(), 0))


def _layered(text: str, r: _Rules, depth: int) -> list[tuple[int, int, str]]:
    found = plain_spans(text)
    if depth >= r.max_depth:
        return found
    for decoded in (json_unescaped(text), url_decoded(text)):
        if decoded is not None:
            for a, b, kind in _layered(decoded.text, r, depth + 1):
                found.append((*decoded.source_span(a, b), kind))
    for a, b, inner in base64_runs(text, r.base64_min_length):
        hits = _merged(_layered(inner, r, depth + 1))
        if hits:  # the run is the secret, whole: its bytes are the credential's encoding
            found.append((a, b, hits[0][2]))
    return found


def _merged(found: list[tuple[int, int, str]]) -> list[tuple[int, int, str]]:
    """Spans by position, overlapping ones joined (the kind of the one starting first, of
    the longest at a tie)."""
    out: list[tuple[int, int, str]] = []
    for a, b, kind in sorted(found, key=lambda s: (s[0], -s[1])):
        if out and a < out[-1][1]:
            if b > out[-1][1]:
                out[-1] = (out[-1][0], b, out[-1][2])
            continue
        out.append((a, b, kind))
    return out


def plain_spans(text: str) -> list[tuple[int, int, str]]:
    """``(start, end, kind)`` of every secret of ``text`` as written, in order of position.
    Text rules run in file order, then pair rules whose ``when`` was found; a span
    overlapping an earlier one, or that is already a placeholder, is skipped."""
    r = rules()
    taken: list[tuple[int, int, str]] = []
    for rule in _candidates(r, text):  # pairs need a text rule's finding
        _apply(rule, text, taken)
    found = {k for _, _, k in taken}
    for rule in r.pairs:
        if rule.when in found:
            _apply(rule, text, taken)
    return sorted(taken)


def kinds_in(text: str) -> list[str]:
    """The kinds of credential found in a string, in order of appearance."""
    return [k for _, _, k in spans(text)]


def redact_text(text: str) -> str:
    """``text`` with every secret replaced by its placeholder."""
    found = spans(text)
    if not found:
        return text
    out, pos = [], 0
    for a, b, _ in found:
        out += [text[pos:a], placeholder(text[a:b])]
        pos = b
    out.append(text[pos:])
    return "".join(out)


def field_kind(key: str, value: Any) -> str | None:
    """The kind of a field rule that makes ``value`` (under ``key``) a secret, or None."""
    if not isinstance(value, str) or is_placeholder(value):
        return None
    for kind, min_length, value_rx in _field_rules_of(key):
        if len(value) >= min_length and (value_rx is None or value_rx.fullmatch(value)):
            return kind
    return None


@lru_cache(maxsize=4096)
def _field_rules_of(key: str) -> tuple[tuple[str, int, re.Pattern[str] | None], ...]:
    """``(kind, min_length, value pattern)`` of the field rules whose key pattern matches
    ``key``, in rule order (keys repeat on every event: each is matched once)."""
    return tuple((kind, n, v) for kind, rx, n, v in rules().fields if rx.fullmatch(key))


@lru_cache(maxsize=4096)
def _key_scan(key: str) -> tuple[str, tuple[str, ...]]:
    """An object key as a pointer segment, and the kinds found in it (cached: keys
    repeat). A key holding a secret is written whole as its placeholder (10.4): the rest of
    it may be the part of a credential no rule matched."""
    found = tuple(kinds_in(key))
    return (placeholder(key) if found else key), found


def _utf16_order(key: str) -> bytes:
    return key.encode("utf-16-be", "surrogatepass")


def find_in_value(value: Any, path: list[str | int] | None = None) -> Iterator[tuple[str, str]]:
    """``(kind, json_pointer)`` for every secret in a JSON value: in strings, in object keys
    and in the values of secret fields. Objects are walked in JCS key order; every key in a
    pointer is written redacted, so a pointer never shows a secret."""
    path = path if path is not None else []
    if isinstance(value, str):
        for kind in kinds_in(value):
            yield kind, pointer_join(path)
    elif isinstance(value, dict):
        for key in sorted(value, key=_utf16_order):
            item = value[key]
            redacted, found = _key_scan(key)
            path.append(redacted)
            for kind in found:
                yield kind, pointer_join(path)
            field = field_kind(key, item)
            if field is not None:
                yield field, pointer_join(path)
            else:
                yield from find_in_value(item, path)
            path.pop()
    elif isinstance(value, list):
        for i, item in enumerate(value):
            path.append(i)
            yield from find_in_value(item, path)
            path.pop()


def redact_value(value: Any) -> Any:
    """A copy of a JSON value with every secret replaced (keys included). Two keys that
    would become the same are refused (``secret_detected``): nothing is dropped silently."""
    if isinstance(value, str):
        return redact_text(value)
    if isinstance(value, dict):
        out: dict[str, Any] = {}
        for key, item in value.items():
            new_key = redact_text(key)
            if new_key in out:
                raise CaseError(
                    "secret_detected",
                    "two object keys become the same placeholder when redacted",
                    hint="remove the credential from the key by hand, or pass --allow-secrets",
                )
            out[new_key] = placeholder(item) if field_kind(key, item) else redact_value(item)
        return out
    if isinstance(value, list):
        return [redact_value(v) for v in value]
    return value


# --------------------------------------------------------------------------- bytes


def _utf16_view(data: bytes, codec: str) -> str:
    """One character per 2 bytes (a trailing odd byte is left out), surrogates as U+FFFD, so
    a span of the view is a span of byte pairs."""
    even = data[: len(data) - len(data) % 2]
    text = even.decode(codec, "surrogatepass")
    if len(text) != len(even) // 2:  # a valid pair became one character: go unit by unit
        hi, lo = (1, 0) if codec.endswith("le") else (0, 1)
        text = "".join(chr(even[i + hi] << 8 | even[i + lo]) for i in range(0, len(even), 2))
    return re.sub("[\ud800-\udfff]", "\ufffd", text)


def _views(data: bytes) -> Iterator[str]:
    try:
        data.decode("utf-8")
        yield "utf-8"
    except UnicodeDecodeError:
        yield "latin-1"
    if b"\x00" in data and len(data) >= 2:
        yield "utf-16le"
        yield "utf-16be"


def _view_text(data: bytes, view: str) -> str:
    if view in ("utf-8", "latin-1"):
        return data.decode(view)
    return _utf16_view(data, view)


def scan_bytes(data: bytes) -> list[tuple[str, str]]:
    """``(view, kind)`` of every secret in an artifact's bytes: the UTF-8 text (or, when the
    bytes are not UTF-8, each byte as one character: ``latin-1``), then, when the bytes hold
    a NUL, the UTF-16LE and UTF-16BE views (spec/case-format.md, "Secrets")."""
    return [(v, k) for v in _views(data) for k in kinds_in(_view_text(data, v))]


def redact_bytes(data: bytes) -> bytes:
    """The bytes with every secret of every view replaced, view after view; the placeholder
    is written in the view's encoding."""
    for view in list(_views(data)):
        text = _view_text(data, view)
        found = spans(text)
        if not found:
            continue
        if view in ("utf-8", "latin-1"):
            data = redact_text(text).encode(view)
            continue
        codec = "utf-16-le" if view == "utf-16le" else "utf-16-be"
        out, pos = [], 0
        for a, b, _ in found:
            out += [data[pos : 2 * a], placeholder(text[a:b]).encode(codec)]
            pos = 2 * b
        out.append(data[pos:])
        data = b"".join(out)
    return data


@dataclass(frozen=True)
class Finding:
    """A credential-like value: ``kind``, ``file`` (or ``None``), ``pointer`` (keys
    redacted, or ``None``), ``line`` (JSON Lines files), ``view`` (artifacts). The value
    itself is never kept."""

    kind: str
    file: str | None = None
    pointer: str | None = None
    line: int | None = None
    view: str | None = None

    def where(self) -> str:
        parts = [self.file or "<value>"]
        if self.line is not None:
            parts[0] += f":{self.line}"
        if self.pointer is not None:
            parts.append(self.pointer or "/")
        if self.view is not None:
            parts.append(f"as {self.view}")
        return ": ".join(parts)

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"kind": self.kind, "file": self.file}
        for key in ("line", "pointer", "view"):
            if getattr(self, key) is not None:
                out[key] = getattr(self, key)
        return out


def scan_files(files: dict[str, bytes]) -> list[Finding]:
    """Findings in a case's files, by file name: ``.json`` by pointer, ``.jsonl`` by line
    and pointer, every other file (artifacts) by view of its bytes."""
    out: list[Finding] = []
    for name in sorted(files):
        data = files[name]
        if name.endswith(".jsonl"):
            for n, line in enumerate(data.splitlines(), 1):
                try:
                    value = orjson.loads(line)
                except orjson.JSONDecodeError:
                    out += [Finding(k, name, None, n, v) for v, k in scan_bytes(line)]
                    continue
                out += [Finding(k, name, p, n) for k, p in find_in_value(value)]
        elif name.endswith(".json"):
            try:
                value = orjson.loads(data)
            except orjson.JSONDecodeError:
                out += [Finding(k, name, None, None, v) for v, k in scan_bytes(data)]
                continue
            out += [Finding(k, name, p) for k, p in find_in_value(value)]
        else:
            out += [Finding(k, name, None, None, v) for v, k in scan_bytes(data)]
    return out
