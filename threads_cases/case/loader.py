"""The one case loader (spec/case-format.md section 8).

:func:`open_case` reads a case directory once and checks it once; every command that reads a
case (``run``, the replay of both drivers, ``validate``, ``show``, ``list``) goes through it.
It returns a validated, immutable :class:`Case`::

    Case(path, files {relative posix path: bytes}, meta (case.json),
         documents {"model.json" | "stubs.json" | "sandbox.json" | "expected.<d>.json": value},
         logs {dialect: (canonical envelope, ...)}, fingerprint_ok,
         reduced {dialect: the Reducer each log was folded into, once})

Each log is reduced once, while it is checked (step 7): :meth:`Case.state` is its state and
:meth:`Case.fork` a reducer that goes on from it, so the in-process implementation's
``reduce`` and the replay's restore reduce nothing again (issue 33).

What it checks, in this order (each problem with its file and a line or JSON pointer):

1. the directory: ``case.json`` is a regular file; only directories and regular files inside
   (``case_invalid`` for a symlink or a special file);
2. ``case.json``: strict JSON, ``format`` 2 or 1 (``format_unsupported``; a format-1 case.json
   is read as format 2, its ``implementations`` as ``dialects``, with problems pointing into
   the file as written), ``case.schema.json``, the case name (section 2), a known dialect for
   each of ``dialects`` (``dialect_unknown``);
3. the file set: ``log.<d>.jsonl`` and ``expected.<d>.json`` for each listed dialect,
   ``model.json``, ``stubs.json``, ``sandbox.json`` (``case_invalid`` "... is missing");
4. the recordings: at most 32 MiB and 100,000 entries each (``case_too_large``), strict
   JSON and their schemas; every sandbox path a replay could have read
   (no device name in any segment);
5. ``artifacts/<hex>``: the bytes hash to their name; every artifact that ``sandbox.json`` and
   the logs refer to is there;
6. ``expected.<d>.json``: strict JSON;
7. each log, with the log reader and the reducer rules of its dialect (``log_invalid`` with the
   line), ending at ``at``;
8. the fingerprint (``fingerprint_stale``).

:func:`inspect_case` returns every problem; :func:`open_case` raises the first one that stops a
case from running. Only ``fingerprint_stale`` never does (a warning of a run, which
``validate`` reports); a file the case does not name (``unknown file``) does, as it makes
``validate`` and ``fmt`` refuse the case (spec/case-format.md 8.2).
"""

from __future__ import annotations

import errno
import hashlib
import io
import os
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType
from typing import Any, cast

from ..core.errors import CaseError, Location, Problem
from ..core.files import check_recording_entries
from ..core.reducer import Reducer
from ..core.shapes import JsonObject, JsonValue, State
from ..core.strictjson import parse
from .directory import (
    READ_FORMATS,
    case_json_kind,
    case_json_problem,
    check_case_name,
    computed_fingerprint,
    upgraded_meta,
    walk_case,
)

RECORDING_FILES = ("model.json", "stubs.json", "sandbox.json")
_HEX64 = re.compile(r"[0-9a-f]{64}")
_LOG = re.compile(r"log\.([a-z0-9][a-z0-9-]{0,63})\.jsonl")
_EXPECTED = re.compile(r"expected\.([a-z0-9][a-z0-9-]{0,63})\.json")
#: Problems that never stop a case from running (open_case does not raise them).
_ADVISORY = "fingerprint_stale"
UNKNOWN_FILE_HINT = "a case holds only the files of its format: move the file out, or delete it"


@dataclass(frozen=True)
class Case:
    """A case read and checked by :func:`open_case`. Immutable: the mappings are read-only
    views, the bytes are bytes, and the JSON values are shared (never mutate them).
    ``meta`` is case.json as format 2 (a format-1 file is upgraded in memory; ``files``
    keeps its bytes as written)."""

    path: Path
    meta: Mapping[str, JsonValue]
    files: Mapping[str, bytes] = field(default_factory=lambda: MappingProxyType({}))
    documents: Mapping[str, JsonValue] = field(default_factory=lambda: MappingProxyType({}))
    logs: Mapping[str, tuple[JsonObject, ...]] = field(default_factory=lambda: MappingProxyType({}))
    fingerprint_ok: bool = True
    #: the reducer each valid log was folded into by the loader (read it through
    #: :meth:`state` and :meth:`fork`, never apply to it)
    reduced: Mapping[str, Reducer] = field(
        default_factory=lambda: MappingProxyType({}), repr=False, compare=False
    )

    def state(self, dialect: str) -> State | None:
        """The canonical state the case's ``dialect`` log reduces to, as the loader reduced
        it (shared: never mutate it); None for a case built without it."""
        reducer = self.reduced.get(dialect)
        return None if reducer is None else cast(State, reducer.state)

    def fork(self, dialect: str) -> Reducer | None:
        """A reducer in the state of the ``dialect`` log that goes its own way from the fork
        point (:meth:`Reducer.branch`: the two share nothing they change), for the replay;
        None for a case built without it."""
        reducer = self.reduced.get(dialect)
        return None if reducer is None else reducer.branch()

    @property
    def name(self) -> str:
        return str(self.meta["name"])

    @property
    def dialects(self) -> list[str]:
        """The dialects the case holds a log and an expected state in (case.json
        ``dialects``); an implementation runs the case when its dialect is one of them."""
        return list(self.meta["dialects"])

    @property
    def implementations(self) -> list[str]:
        """Deprecated name of :attr:`dialects` (format 1 called the list so)."""
        return self.dialects

    def log_path(self, dialect: str) -> Path:
        return self.path / f"log.{dialect}.jsonl"

    def expected_path(self, dialect: str) -> Path:
        return self.path / f"expected.{dialect}.json"

    def read(self, name: str) -> JsonValue:
        """The parsed value of a JSON file of the case (``case.json``, a recording, an expected
        state), as it was read and checked when the case was opened."""
        if name == "case.json":
            return self.meta
        if name not in self.documents:
            raise CaseError("case_invalid", f"{name} is missing", file=str(self.path / name))
        return self.documents[name]

    def artifact(self, artifact_id: str) -> bytes | None:
        """The bytes of ``artifacts/<hex>`` (``sha256:`` prefix allowed), or None. Only 64
        lower-case hex digits name an artifact: anything else is None, never a path."""
        hexname = artifact_id.removeprefix("sha256:") if isinstance(artifact_id, str) else ""
        if not _HEX64.fullmatch(hexname):
            return None
        return self.files.get(f"artifacts/{hexname}")


def open_case(path: str | os.PathLike[str]) -> Case:
    """Read and check a case directory once (module docstring); returns a :class:`Case`.

    Raises ``CaseError`` for the first problem that stops the case from running:
    ``case_invalid``, ``format_unsupported``, ``dialect_unknown`` or ``log_invalid``, with
    the file and a line or pointer (spec/case-format.md 8.1-8.4).
    """
    case, problems = inspect_case(path)
    err = first_blocking(problems)
    if err is not None:
        raise err
    assert case is not None
    return case


def first_blocking(problems: list[Problem]) -> CaseError | None:
    """The first problem that stops a case from running, as a ``CaseError`` (or None)."""
    for problem in problems:
        if _blocking(problem):
            loc = problem.location
            return CaseError(
                problem.code,
                problem.message,
                file=loc.file,
                line=loc.line,
                pointer=loc.pointer,
                hint=problem.hint or None,
            )
    return None


def _blocking(problem: Problem) -> bool:
    return problem.code != _ADVISORY


def inspect_case(path: str | os.PathLike[str]) -> tuple[Case | None, list[Problem]]:
    """Every problem of a case directory (module docstring, in that order) and the case as
    far as it could be read (None when case.json is not an object of format 1; a case with
    problems is for reporting only: :func:`open_case` never returns one)."""
    p = Path(path)
    try:
        kind = case_json_kind(p, upstream=True)
    except OSError as exc:  # a path component over 255 bytes (8.4 item 4)
        if exc.errno != errno.ENAMETOOLONG:
            raise
        return None, [_problem("invalid_request", "a path component is longer than 255 bytes", p)]
    if kind is not None:
        return None, [case_json_problem(p, kind)]
    files, problems = walk_case(p)
    # a file left unread (too large, special, a symlink) leaves the fingerprint unknowable:
    # comparing it would add a false fingerprint_stale beside the real problem
    unread = bool(problems)
    meta, old = _check_meta(p, files, problems)
    dialects = _dialects(p, meta, old, problems)
    _check_file_set(p, files, meta, dialects, problems)
    documents: dict[str, Any] = {}
    _check_artifacts(p, files, problems)
    _check_recordings(p, files, documents, problems)
    for d in dialects:
        name = f"expected.{d}.json"
        if name in files:
            try:
                documents[name] = _parse_json(files[name], str(p / name))
            except CaseError as err:
                problems.append(err.problem())
    logs, reduced = _check_logs(p, files, meta, dialects, problems)
    fingerprint_ok = meta is None or unread or _fingerprint_ok(p, files, meta, problems)
    if meta is None:
        return None, problems
    case = Case(
        p,
        meta,
        MappingProxyType(files),
        MappingProxyType(documents),
        MappingProxyType({d: tuple(evs) for d, evs in logs.items()}),
        fingerprint_ok,
        MappingProxyType(reduced),
    )
    return case, problems


def _fingerprint_ok(
    p: Path, files: dict[str, bytes], meta: dict[str, Any], problems: list[Problem]
) -> bool:
    """Whether case.json's fingerprint is the files' (spec/case-format.md); a stale one adds
    ``fingerprint_stale`` to ``problems``, whose hint sends the user to ``fmt`` only when
    ``fmt`` would fix the case (it refuses a case with other problems)."""
    fp = computed_fingerprint(files)
    if fp is None or fp == meta.get("fingerprint"):
        return fp == meta.get("fingerprint")
    then = (
        "fix the problems above first; `threads-cases fmt` refuses a case that does not validate"
        if problems
        else "run `threads-cases fmt`"
    )
    said = meta.get("fingerprint")
    said = "has none" if said is None else f"says {said}"  # never "says None"
    problems.append(
        _problem(
            "fingerprint_stale",
            f"the files give {fp}, case.json {said}; {then}",
            p / "case.json",
            "/fingerprint",
        )
    )
    return False


# --------------------------------------------------------------------------- the checks


def _problem(
    code: str, message: str, file: Path | str, pointer: str | None = None, line: int | None = None
) -> Problem:
    return Problem(code, message, Location(str(file), line, pointer))


def _parse_json(data: bytes, name: str, code: str = "case_invalid") -> Any:
    if not data.strip():
        raise CaseError(code, "empty file", file=name, line=1)
    return parse(data, code=code, file=name)


def _check_meta(
    p: Path, files: dict[str, bytes], problems: list[Problem]
) -> tuple[dict[str, Any] | None, bool]:
    """case.json: strict JSON, format, schema, name. Returns it (as format 2) when it is an
    object of a format this version reads (the later checks use what they can of it, even
    when it breaks its schema), and whether the file is format 1."""
    from ..core.schemas import schema_problems

    where = p / "case.json"
    if "case.json" not in files:
        return None, False  # reported by the walk (a special file)
    try:
        value = _parse_json(files["case.json"], str(where))
    except CaseError as err:
        problems.append(err.problem())
        return None, False
    fmt = value.get("format") if isinstance(value, dict) else None
    if isinstance(value, dict) and "format" in value and not _known_format(fmt):
        problems.append(
            Problem(
                "format_unsupported",
                f"case format {value['format']!r} is not supported "
                f"(this version reads {' and '.join(map(str, READ_FORMATS))})",
                Location(str(where), None, "/format"),
                "upgrade threads-cases, or re-save the case",
            )
        )
        return None, False
    if fmt == 1 and "dialects" in value:
        problems.append(
            _problem(
                "case_invalid",
                "a format-1 case.json lists its dialects under implementations",
                where,
                "/dialects",
            )
        )
        value = {k: v for k, v in value.items() if k != "dialects"}
    old = fmt == 1
    value = upgraded_meta(value) if isinstance(value, dict) else value
    for pointer, message in schema_problems(value, "case.schema.json"):
        if old:  # point into the file as written
            pointer, message = _as_format_1(pointer), message.replace("dialects", "implementations")
        problems.append(_problem("case_invalid", f"schema: {message}", where, pointer))
    if not isinstance(value, dict):
        return None, False
    if isinstance(value.get("name"), str) and re.fullmatch(r"[A-Za-z0-9._-]{1,64}", value["name"]):
        try:
            check_case_name(value["name"])  # the schema allows "..", "CON", ...
        except CaseError as err:
            problems.append(_problem("case_invalid", err.message, where, "/name"))
    return value, old


def _known_format(fmt: Any) -> bool:
    return isinstance(fmt, int) and not isinstance(fmt, bool) and fmt in READ_FORMATS


def _as_format_1(pointer: str) -> str:
    """A pointer into an upgraded format-1 case.json, as a pointer into the file."""
    if pointer == "/dialects" or pointer.startswith("/dialects/"):
        return "/implementations" + pointer.removeprefix("/dialects")
    return pointer


def _dialects(
    p: Path, meta: dict[str, Any] | None, old: bool, problems: list[Problem]
) -> list[str]:
    from ..core.dialects import dialect_names

    if meta is None:
        return []
    known = set(dialect_names())
    out = []
    for i, d in enumerate(_listed(meta)):
        if d in known:
            out.append(d)
        else:
            problems.append(
                _problem(
                    "dialect_unknown",
                    f"unknown dialect {d!r}; known: {', '.join(sorted(known))}",
                    p / "case.json",
                    f"/{'implementations' if old else 'dialects'}/{i}",
                )
            )
    return out


def _listed(meta: dict[str, Any] | None) -> list[str]:
    value = meta.get("dialects") if meta is not None else None
    return [d for d in value if isinstance(d, str)] if isinstance(value, list) else []


def _check_file_set(
    p: Path,
    files: dict[str, bytes],
    meta: dict[str, Any] | None,
    dialects: list[str],
    problems: list[Problem],
) -> None:
    """Unknown files, then missing files (both ``case_invalid``)."""
    listed = _listed(meta)
    allowed = {"case.json", *RECORDING_FILES}
    for d in listed:
        allowed.update({f"log.{d}.jsonl", f"expected.{d}.json"})
    for rel in sorted(files):
        if rel in allowed:
            continue
        if rel.startswith("artifacts/") and _HEX64.fullmatch(rel.removeprefix("artifacts/")):
            continue
        hint = ""
        if _LOG.fullmatch(rel) or _EXPECTED.fullmatch(rel):
            if meta is None:
                continue  # case.json is unreadable: which logs belong is unknown
            hint = " (its dialect is not in case.json dialects)"
        where = Location(str(p / rel), None, None)
        problems.append(
            Problem("case_invalid", f"unknown file {rel}{hint}", where, UNKNOWN_FILE_HINT)
        )
    required = set(RECORDING_FILES)
    for d in dialects:
        required.update({f"log.{d}.jsonl", f"expected.{d}.json"})
    for rel in sorted(required - set(files)):
        if (p / rel).is_symlink() or (p / rel).exists():
            continue  # a symlink or special file: reported by the walk
        problems.append(_problem("case_invalid", f"{rel} is missing", p / rel))


def _check_artifacts(p: Path, files: dict[str, bytes], problems: list[Problem]) -> None:
    for rel, data in sorted(files.items()):
        hexname = rel.removeprefix("artifacts/")
        if (
            rel != hexname
            and _HEX64.fullmatch(hexname)
            and hashlib.sha256(data).hexdigest() != hexname
        ):
            problems.append(
                _problem("case_invalid", "artifact bytes do not match their sha256 name", p / rel)
            )


def _need_artifact(
    files: dict[str, bytes],
    problems: list[Problem],
    artifact: str,
    where: Path,
    pointer: str,
    line: int | None = None,
) -> None:
    if f"artifacts/{artifact.removeprefix('sha256:')}" not in files:
        problems.append(
            _problem(
                "case_invalid", f"artifact {artifact} is not in artifacts/", where, pointer, line
            )
        )


def _check_recordings(
    p: Path, files: dict[str, bytes], documents: dict[str, Any], problems: list[Problem]
) -> None:
    """model.json, stubs.json, sandbox.json: strict JSON, schema, sandbox paths, artifacts."""
    from ..core.schemas import schema_problems
    from .sandbox import check_path

    for rel in RECORDING_FILES:
        if rel not in files:
            continue
        try:
            doc = _parse_json(files[rel], str(p / rel))
            check_recording_entries(rel, doc, str(p / rel))
        except CaseError as err:
            problems.append(err.problem())
            continue
        found = schema_problems(doc, rel.replace(".json", ".schema.json"))
        for pointer, message in found:
            problems.append(_problem("case_invalid", f"schema: {message}", p / rel, pointer))
        if found:
            continue
        documents[rel] = doc
        if rel != "sandbox.json":
            continue
        for i, read in enumerate(doc["reads"]):
            if isinstance(read.get("artifact"), str):
                _need_artifact(files, problems, read["artifact"], p / rel, f"/reads/{i}/artifact")
            try:
                check_path(read["path"])  # the schema checks the form; a device name too
            except CaseError as err:
                problems.append(_problem("case_invalid", err.message, p / rel, f"/reads/{i}/path"))


class _NamedBytes(io.BytesIO):
    """A log held in memory, named by its path in error locations."""

    def __init__(self, data: bytes, name: str) -> None:
        super().__init__(data)
        self.name = name


def _check_logs(
    p: Path,
    files: dict[str, bytes],
    meta: dict[str, Any] | None,
    dialects: list[str],
    problems: list[Problem],
) -> tuple[dict[str, list[dict[str, Any]]], dict[str, Reducer]]:
    """Each log with the reader and reducer rules of its dialect; it ends at ``at``; the
    artifacts it refers to are there. Returns the canonical events of the valid logs and the
    reducer each was folded into (its state: the log's)."""
    from ..core.log import inspect_log

    logs: dict[str, list[dict[str, Any]]] = {}
    reduced: dict[str, Reducer] = {}
    at = meta.get("at") if meta else None
    for d in dialects:
        rel = f"log.{d}.jsonl"
        if rel not in files:
            continue
        where = p / rel
        reducer = Reducer(copy_data=False)  # the events are the loader's own
        events, found = inspect_log(_NamedBytes(files[rel], str(where)), dialect=d, reducer=reducer)
        problems.extend(found)
        if found:
            continue
        logs[d] = events
        reduced[d] = reducer
        ids = [e["event_id"] for e in events]
        if not isinstance(at, str):
            pass  # reported by the schema
        elif at not in ids:
            problems.append(
                _problem(
                    "case_invalid",
                    f'the fork point {at!r} (case.json "at") is not in the log',
                    where,
                )
            )
        elif ids[-1] != at:
            problems.append(
                _problem(
                    "case_invalid",
                    f"the fork point {at!r} is event {ids.index(at)}, "
                    "not the last event of the log",
                    where,
                    line=ids.index(at) + 1,
                )
            )
        for seq, pointer, artifact in artifact_refs(events):
            _need_artifact(files, problems, artifact, where, pointer, seq + 1)
    return logs, reduced


def artifact_refs(events: list[dict[str, Any]]) -> list[tuple[int, str, str]]:
    """``(seq, pointer, artifact id)`` for every artifact a canonical log refers to."""
    out = []
    for ev in events:
        data = ev["data"]
        if ev["type"] == "artifact_added":
            out.append((ev["seq"], "/data/artifact_id", data["artifact_id"]))
        if ev["type"] in ("sandbox_read", "sandbox_wrote") and isinstance(
            data.get("artifact"), str
        ):
            out.append((ev["seq"], "/data/artifact", data["artifact"]))
    return out
