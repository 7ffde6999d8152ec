"""Reading a case directory for review: every file as bytes, strict parsing that reports the
file and line, the dialect a log or expected file belongs to, and one row of ``list``.

Reason codes: ``case_invalid`` (a symlink or special file, an empty or broken JSON file),
``log_invalid`` (a broken log line), ``json_invalid`` when the caller asks for it.
"""

from __future__ import annotations

import io
import os
import re
from pathlib import Path
from typing import Any

from ..case.directory import walk_case
from ..case.loader import first_blocking, inspect_case
from ..core.canonical import canonical_document, canonical_line, compact
from ..core.errors import CaseError
from ..core.files import check_recording_entries
from ..core.strictjson import iter_lines, parse

CANONICAL_DIALECT = "threads-py"
_LOG = re.compile(r"^log\.([a-z0-9][a-z0-9-]{0,63})\.jsonl$")
_EXPECTED = re.compile(r"^expected\.([a-z0-9][a-z0-9-]{0,63})\.json$")
_UNPARSED: Any = object()
RECORDING_FILES = ("model.json", "stubs.json", "sandbox.json")
#: The list each recording file holds, diffed item by item.
_LIST_KEY = {"model.json": "replies", "stubs.json": "calls", "sandbox.json": "reads"}


# --------------------------------------------------------------------------- reading


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


#: The code of a ``.json`` file of a case that is not strict JSON, in every command that reads
#: cases (run, validate, fmt, show, diff): spec/reason-codes.md 3.2. A log line that is not
#: strict JSON is ``log_invalid``; ``json_invalid`` is for JSON files outside a case.
CASE_FILE_CODE = "case_invalid"


def canonical_bytes(rel: str, data: bytes, where: str) -> bytes:
    """The canonical bytes of a ``.json`` or ``.jsonl`` case file (spec/case-format.md 1.2);
    raises ``CaseError`` when the file is not strict JSON. A log is rewritten line by line
    (memory: the output and one line's value)."""
    if rel.endswith(".jsonl"):
        out = io.BytesIO()
        for lineno, body in iter_lines(io.BytesIO(data), code="log_invalid"):
            if isinstance(body, CaseError):
                raise body.at(file=where, line=lineno)
            out.write(canonical_line(parse(body, code="log_invalid", file=where, line=lineno)))
            out.write(b"\n")
        return out.getvalue()
    value = _parse_json(data, where, CASE_FILE_CODE)
    check_recording_entries(rel, value, where)  # case_too_large past 100,000 (8.4 item 6)
    return canonical_document(value)


def is_canonical(rel: str, data: bytes, where: str, parsed: Any = _UNPARSED) -> bool:
    """Whether a ``.json``/``.jsonl`` case file is already canonical; ``parsed`` is its value
    when the caller has read it (a ``.json`` file is then not parsed again). Memory: one
    line's value for a log, the value and its output for a document. Raises ``CaseError``
    when the file is not strict JSON."""
    if rel.endswith(".jsonl"):
        for lineno, body in iter_lines(io.BytesIO(data), code="log_invalid"):
            if isinstance(body, CaseError):
                raise body.at(file=where, line=lineno)
            value = parse(body, code="log_invalid", file=where, line=lineno)
            if canonical_line(value) != body:
                return False
        return True
    if parsed is _UNPARSED:
        parsed = _parse_json(data, where, CASE_FILE_CODE)
    return canonical_document(parsed) == data


# --------------------------------------------------------------------------- list


def case_summary(path: Path) -> dict[str, Any]:
    """One row of ``list``: name, dialects, portable, fingerprint (and whether it is
    current), the number of files and their total size in bytes; ``error`` (None, or
    ``{"code", "message", "file", "line", "pointer", "hint"}``) when the case cannot run:
    the first problem of the case loader that stops ``run`` too (spec/case-format.md 8.1,
    :func:`~threads_cases.case.loader.first_blocking`; a stale fingerprint does not)."""
    row: dict[str, Any] = {
        "name": path.name,
        "path": str(path),
        "dialects": [],
        "portable": None,
        "fingerprint": None,
        "fingerprint_ok": None,
        "size": 0,
        "files": 0,
        "error": None,
    }
    case, problems = inspect_case(path)
    files = dict(case.files) if case is not None else walk_case(path)[0]
    row["size"] = sum(len(b) for b in files.values())
    row["files"] = len(files)
    err = first_blocking(problems)
    if err is not None:
        row["error"] = {**err.problem().to_json(), "hint": err.hint}
    at_meta = str(path / "case.json")
    if case is None or any(x.location.file == at_meta and first_blocking([x]) for x in problems):
        return row  # case.json itself cannot be trusted: no name, dialects or fingerprint
    row.update(
        name=case.name,
        dialects=case.dialects,
        portable=case.meta["portable"],
        fingerprint=case.meta.get("fingerprint"),
        fingerprint_ok=case.fingerprint_ok,
    )
    return row


def unread_file(path: Path, case: Any, problem: Any) -> bool:
    """Whether ``problem`` is about a file that exists in the case directory but was not read
    (spec/case-format.md 8.4): ``show`` refuses rather than leave it out."""
    file = problem.location.file
    if not file or case is None:
        return False
    try:
        rel = Path(file).relative_to(path).as_posix()
    except ValueError:
        return False
    return os.path.lexists(file) and not Path(file).is_dir() and rel not in case.files
