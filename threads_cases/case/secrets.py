"""Credentials in cases: detection and stable redaction (spec/case-format.md, "Secrets").

A case holds whatever its turn touched. Before a case is written, every string of every file
is scanned for values that look like credentials (:data:`PATTERNS`). A finding names the
file, the JSON pointer (or the line for JSON Lines) and the kind, never the value.

Redaction replaces each match with ``[REDACTED:<kind>:<first 8 hex of sha256(value)>]``: the
same secret always gives the same placeholder, in the log, the stubs and the model replies
alike, so a redacted case still replays and matches.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from ..core.errors import pointer_join

#: ``kind -> regex``. Order matters: the first kind that matches a span names it.
PATTERNS: dict[str, re.Pattern[str]] = {
    "private_key": re.compile(
        r"-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----[\s\S]*?"
        r"(?:-----END (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----|\Z)"
    ),
    "anthropic_api_key": re.compile(r"\bsk-ant-[A-Za-z0-9_-]{20,}"),
    "openai_api_key": re.compile(r"\bsk-(?:proj-|svcacct-|admin-)?(?!ant-)[A-Za-z0-9_-]{32,}"),
    "aws_access_key_id": re.compile(r"\b(?:AKIA|ASIA|AGPA|AIDA|AROA|AIPA|ANPA|ANVA)[0-9A-Z]{16}\b"),
    "aws_secret_access_key": re.compile(
        r"(?i)aws_?secret_?access_?key[\"']?\s*[:=]\s*[\"']?[A-Za-z0-9/+=]{40}\b"
    ),
    "github_token": re.compile(r"\b(?:gh[pousr]_[A-Za-z0-9]{36,}|github_pat_[A-Za-z0-9_]{22,})"),
    "gitlab_token": re.compile(r"\bglpat-[A-Za-z0-9_-]{20,}"),
    "google_api_key": re.compile(r"\bAIza[0-9A-Za-z_-]{35}"),
    "google_oauth_token": re.compile(r"\bya29\.[0-9A-Za-z_-]{20,}"),
    "slack_token": re.compile(r"\bxox[abprse]-[A-Za-z0-9-]{10,}"),
    "stripe_key": re.compile(r"\b(?:sk|rk)_(?:live|test)_[A-Za-z0-9]{16,}"),
    "huggingface_token": re.compile(r"\bhf_[A-Za-z0-9]{30,}"),
    "npm_token": re.compile(r"\bnpm_[A-Za-z0-9]{36}\b"),
    "jwt": re.compile(r"\beyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}"),
    "bearer_token": re.compile(r"(?i)\bbearer\s+(?!\[REDACTED)[A-Za-z0-9._~+/-]{20,}=*"),
    "url_credentials": re.compile(r"\b[a-z][a-z0-9+.-]*://[^\s/:@\"']+:[^\s/@\"']{3,}@"),
}

_PLACEHOLDER = re.compile(r"\[REDACTED:[a-z_]+:[0-9a-f]{8}\]")


@dataclass(frozen=True)
class Finding:
    """A credential-like value: ``kind``, ``file`` (or ``None``), ``pointer`` (or ``None``),
    ``line`` (JSON Lines files). The value itself is never kept."""

    kind: str
    file: str | None = None
    pointer: str | None = None
    line: int | None = None

    def where(self) -> str:
        parts = [self.file or "<value>"]
        if self.line is not None:
            parts[0] += f":{self.line}"
        if self.pointer is not None:
            parts.append(self.pointer or "/")
        return ": ".join(parts)


def _spans(text: str) -> Iterator[tuple[int, int, str]]:
    taken: list[tuple[int, int]] = []
    for kind, rx in PATTERNS.items():
        for m in rx.finditer(text):
            a, b = m.span()
            if any(a < y and x < b for x, y in taken):
                continue
            if _PLACEHOLDER.fullmatch(m.group(0)):
                continue
            taken.append((a, b))
            yield a, b, kind


def kinds_in(text: str) -> list[str]:
    """The kinds of credential found in a string, in order of appearance."""
    return [k for _, _, k in sorted(_spans(text))]


def placeholder(kind: str, secret: str) -> str:
    return f"[REDACTED:{kind}:{hashlib.sha256(secret.encode('utf-8')).hexdigest()[:8]}]"


def redact_text(text: str) -> str:
    """``text`` with every credential replaced by its stable placeholder."""
    spans = sorted(_spans(text))
    if not spans:
        return text
    out, pos = [], 0
    for a, b, kind in spans:
        out.append(text[pos:a])
        out.append(placeholder(kind, text[a:b]))
        pos = b
    out.append(text[pos:])
    return "".join(out)


def find_in_value(value: Any, path: list[str | int] | None = None) -> Iterator[tuple[str, str]]:
    """``(kind, json_pointer)`` for every credential in the strings (and keys) of a value."""
    path = path if path is not None else []
    if isinstance(value, str):
        for kind in kinds_in(value):
            yield kind, pointer_join(path)
    elif isinstance(value, dict):
        for k, v in value.items():
            for kind in kinds_in(k):
                yield kind, pointer_join([*path, k])
            path.append(k)
            yield from find_in_value(v, path)
            path.pop()
    elif isinstance(value, list):
        for i, v in enumerate(value):
            path.append(i)
            yield from find_in_value(v, path)
            path.pop()


def redact_value(value: Any) -> Any:
    """A copy of a JSON value with every string (and key) redacted."""
    if isinstance(value, str):
        return redact_text(value)
    if isinstance(value, dict):
        return {redact_text(k): redact_value(v) for k, v in value.items()}
    if isinstance(value, list):
        return [redact_value(v) for v in value]
    return value


def scan_files(files: dict[str, bytes]) -> list[Finding]:
    """Findings in a case's files: JSON by pointer, JSON Lines by line and pointer, other
    files (artifacts) by file when they are UTF-8 text."""
    import orjson

    out: list[Finding] = []
    for name in sorted(files):
        data = files[name]
        if name.endswith(".jsonl"):
            for n, line in enumerate(data.splitlines(), 1):
                try:
                    value = orjson.loads(line)
                except orjson.JSONDecodeError:
                    continue
                out += [Finding(k, name, p, n) for k, p in find_in_value(value)]
        elif name.endswith(".json"):
            try:
                value = orjson.loads(data)
            except orjson.JSONDecodeError:
                continue
            out += [Finding(k, name, p) for k, p in find_in_value(value)]
        else:
            try:
                text = data.decode("utf-8")
            except UnicodeDecodeError:
                continue
            out += [Finding(k, name) for k in kinds_in(text)]
    return out
