"""Reading a case directory for review: every file as bytes, strict parsing that reports the
file and line, the dialect a log or expected file belongs to, and one row of ``list``.

Reason codes: ``case_invalid`` (a symlink or special file, an empty or broken JSON file),
``log_invalid`` (a broken log line), ``json_invalid`` when the caller asks for it.
"""

from __future__ import annotations

import io
import re
from pathlib import Path
from typing import Any

from ..case.directory import computed_fingerprint
from ..core.canonical import compact
from ..core.errors import CaseError, Location, Problem
from ..core.strictjson import canonical_document, canonical_line, iter_lines, parse

CANONICAL_DIALECT = "threads-py"
_LOG = re.compile(r"^log\.([a-z0-9][a-z0-9-]{0,63})\.jsonl$")
_EXPECTED = re.compile(r"^expected\.([a-z0-9][a-z0-9-]{0,63})\.json$")
RECORDING_FILES = ("model.json", "stubs.json", "sandbox.json")
#: The list each recording file holds, diffed item by item.
_LIST_KEY = {"model.json": "replies", "stubs.json": "calls", "sandbox.json": "reads"}


# --------------------------------------------------------------------------- reading


def walk_case(path: Path) -> tuple[dict[str, bytes], list[Problem]]:
    """Every regular file under ``path`` (``{posix relative path: bytes}``) and a problem for
    each symlink or special file (which is skipped)."""
    files: dict[str, bytes] = {}
    problems: list[Problem] = []
    for p in sorted(path.rglob("*")):
        rel = p.relative_to(path).as_posix()
        if p.is_symlink():
            problems.append(
                Problem("case_invalid", "symlinks are not allowed inside a case", Location(str(p)))
            )
        elif p.is_dir():
            continue
        elif not p.is_file():
            problems.append(
                Problem(
                    "case_invalid", "only regular files are allowed in a case", Location(str(p))
                )
            )
        else:
            files[rel] = p.read_bytes()
    return files, problems


def _parse_json(data: bytes, name: str, code: str = "case_invalid") -> Any:
    if not data.strip():
        raise CaseError(code, "empty file", file=name, line=1)
    return parse(data, code=code, file=name)


def _parse_jsonl(data: bytes, name: str, code: str = "log_invalid") -> list[Any]:
    out = []
    for lineno, body in iter_lines(io.BytesIO(data), code=code):
        if isinstance(body, CaseError):
            raise body.at(file=name, line=lineno)
        out.append(parse(body, code=code, file=name, line=lineno))
    return out


def _dialect_of(name: str) -> str | None:
    m = _LOG.match(name) or _EXPECTED.match(name)
    return m.group(1) if m else None


def _decode_events(raw: list[Any], dialect: str | None) -> list[Any]:
    """Log lines spelled canonically when the dialect is known (else as they are)."""
    from ..core.dialects import get_dialect

    if dialect is None:
        return raw
    try:
        d = get_dialect(dialect)
        return [d.decode_event(e) if isinstance(e, dict) else e for e in raw]
    except CaseError:
        return raw


def _decode_state(value: Any, dialect: str | None) -> Any:
    from ..core.dialects import get_dialect

    if dialect is None or not isinstance(value, dict):
        return value
    try:
        return get_dialect(dialect).decode_state(value)
    except CaseError:
        return value


def _render(value: Any, limit: int = 80) -> str:
    return compact(value, limit)


def short_fingerprint(fp: Any) -> str:
    return str(fp).removeprefix("sha256:")[:12] if isinstance(fp, str) else "-"


def canonical_bytes(rel: str, data: bytes, where: str) -> bytes:
    """The canonical bytes of a ``.json`` or ``.jsonl`` case file (spec/case-format.md 1.2);
    raises ``CaseError`` when the file is not strict JSON."""
    if rel.endswith(".jsonl"):
        return b"".join(canonical_line(v) + b"\n" for v in _parse_jsonl(data, where))
    return canonical_document(_parse_json(data, where, "json_invalid"))


# --------------------------------------------------------------------------- list


def case_summary(path: Path) -> dict[str, Any]:
    """One row of ``list``: name, implementations, portable, fingerprint (and whether it is
    current), the number of files and their total size in bytes; ``error`` when case.json
    cannot be read."""
    from ..case.directory import load_case

    row: dict[str, Any] = {
        "name": path.name,
        "path": str(path),
        "implementations": [],
        "portable": None,
        "fingerprint": None,
        "fingerprint_ok": None,
        "size": 0,
        "files": 0,
        "error": None,
    }
    files, _ = walk_case(path)
    row["size"] = sum(len(b) for b in files.values())
    row["files"] = len(files)
    try:
        case = load_case(path)
    except CaseError as err:
        row["error"] = err.render()
        return row
    row.update(
        name=case.name,
        implementations=case.implementations,
        portable=case.meta["portable"],
        fingerprint=case.meta["fingerprint"],
        fingerprint_ok=computed_fingerprint(files) == case.meta["fingerprint"],
    )
    return row
