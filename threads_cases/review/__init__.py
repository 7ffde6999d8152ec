"""Reviewing cases: show, diff, fmt, list, validate and stale (the library behind the
``threads-cases show|diff|fmt|list|validate|stale`` commands).

Shapes:

* :func:`case_summary` -> ``{"name", "path", "implementations", "portable", "fingerprint",
  "fingerprint_ok", "size", "files", "error"}`` (one row of ``list``).
* :func:`diff_case_files` / :func:`diff_file` -> a list of :class:`Change`
  ``{"file", "kind": added|removed|changed, "item", "pointer", "before", "after"}``: matchers
  (``item`` ``must[i]``/``expect[i]``), prefix log events (``item`` ``seq N <type>``), model
  replies (``replies[i]``), stubs (``calls[i]``), sandbox reads (``reads[i]``), expected
  states and other JSON by pointer, artifacts and other files by name.
* :func:`format_case` -> :class:`FormatResult` (the files that are not canonical, the new
  bytes, whether the fingerprint is stale, the files that could not be read).
* :func:`validate_case` -> every :class:`~threads_cases.core.errors.Problem` of a case directory.
* :func:`stale_entries` -> the results of a JSON report with ``reply_unused`` /
  ``stub_unused`` checks.

Reason codes: ``case_invalid`` (a broken file, a missing or unknown file, a cross-file
reference, logs that disagree), ``format_unsupported``, ``log_invalid`` (a log),
``state_mismatch`` (an expected file the log does not reduce to), ``fingerprint_stale``,
``dialect_unknown``; ``git_unavailable`` and ``invalid_request`` for ``diff --git`` refusals.
"""

from __future__ import annotations

import difflib
import hashlib
import os
import re
import subprocess
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..case.directory import CASE_FORMAT, check_case_name, computed_fingerprint, fingerprint
from ..core.errors import CaseError, Location, Problem
from ..core.matchers import diff_values, values_equal
from ..core.strictjson import canonical_document, canonical_line, iter_lines, parse
from ..reference.sandbox import is_device_name

CANONICAL_DIALECT = "threads-py"
_HEX64 = re.compile(r"^[0-9a-f]{64}$")
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
    import io

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
    try:
        text = canonical_line(value).decode("utf-8")
    except CaseError:
        text = repr(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def short_fingerprint(fp: Any) -> str:
    return str(fp).removeprefix("sha256:")[:12] if isinstance(fp, str) else "-"


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


# --------------------------------------------------------------------------- fmt


@dataclass
class FormatResult:
    """What ``fmt`` found in one case: ``changed`` maps each non-canonical file to its
    canonical bytes (``case.json`` also when only its fingerprint is stale); ``problems`` are
    files that could not be read strictly (nothing of the case is written then)."""

    path: Path
    changed: dict[str, bytes] = field(default_factory=dict)
    fingerprint_stale: bool = False
    problems: list[Problem] = field(default_factory=list)
    noncanonical: set[str] = field(default_factory=set)

    def reason(self, rel: str) -> str:
        """Why ``rel`` changes: ``not canonical``, ``fingerprint stale`` or both."""
        parts = []
        if rel in self.noncanonical:
            parts.append("not canonical")
        if rel == "case.json" and self.fingerprint_stale:
            parts.append("fingerprint stale")
        return ", ".join(parts) or "not canonical"


def _canonical_bytes(rel: str, data: bytes, where: str) -> bytes:
    if rel.endswith(".jsonl"):
        return b"".join(canonical_line(v) + b"\n" for v in _parse_jsonl(data, where))
    return canonical_document(_parse_json(data, where, "json_invalid"))


def format_case(path: Path) -> FormatResult:
    """Canonical bytes for every ``.json``/``.jsonl`` file of a case (files under
    ``artifacts/`` and other files untouched) and ``case.json`` with a recomputed fingerprint.
    Writes nothing."""
    result = FormatResult(path)
    files, problems = walk_case(path)
    result.problems.extend(problems)
    new = dict(files)
    for rel, data in files.items():
        if rel.startswith("artifacts/") or not rel.endswith((".json", ".jsonl")):
            continue
        try:
            new[rel] = _canonical_bytes(rel, data, str(path / rel))
        except CaseError as err:
            result.problems.append(err.problem())
    if result.problems:
        return result
    if "case.json" not in new:
        result.problems.append(
            Problem(
                "case_invalid", "not a case directory: case.json is missing", Location(str(path))
            )
        )
        return result
    meta = parse(new["case.json"])
    if not isinstance(meta, dict):
        result.problems.append(
            Problem(
                "case_invalid",
                "case.json is not an object",
                Location(str(path / "case.json"), pointer=""),
            )
        )
        return result
    body = dict(new)
    body["case.json"] = canonical_document({k: v for k, v in meta.items() if k != "fingerprint"})
    fp = fingerprint(body)
    result.fingerprint_stale = meta.get("fingerprint") != fp
    result.noncanonical = {rel for rel, b in new.items() if files.get(rel) != b}
    new["case.json"] = canonical_document({**meta, "fingerprint": fp})
    result.changed = {rel: b for rel, b in new.items() if files.get(rel) != b}
    return result


def write_formatted(result: FormatResult) -> None:
    """Write the changed files of a :class:`FormatResult` (each by a rename, case.json last)."""
    for rel in sorted(result.changed, key=lambda r: (r == "case.json", r)):
        dest = result.path / rel
        tmp = dest.with_name(f".{dest.name}.fmt-{os.getpid()}")
        tmp.write_bytes(result.changed[rel])
        os.replace(tmp, dest)


def case_dirs_for(paths: Iterable[Path]) -> tuple[list[Path], list[Path]]:
    """Case directories for ``fmt``'s arguments: a directory is searched (as ``run`` does);
    a file stands for the case holding it (its folder or the one above, for artifacts).
    Returns ``(cases, missing paths)``; files outside any case are ignored."""
    from ..harness.runner import discover

    found: set[Path] = set()
    missing: list[Path] = []
    for p in paths:
        if p.is_dir():
            found.update(discover([p]))
        elif p.is_file():
            for parent in (p.parent, p.parent.parent):
                if (parent / "case.json").is_file():
                    found.add(parent)
                    break
        else:
            missing.append(p)
    return sorted(found), missing


# --------------------------------------------------------------------------- validate


def _problem(
    code: str, message: str, file: Path | str, pointer: str | None = None, line: int | None = None
) -> Problem:
    return Problem(code, message, Location(str(file), line, pointer))


def _artifact_refs(events: list[dict[str, Any]]) -> list[tuple[int, str, str]]:
    """``(seq, pointer, artifact id)`` for every artifact a canonical log refers to."""
    out = []
    for ev in events:
        data = ev.get("data") if isinstance(ev.get("data"), dict) else {}
        assert isinstance(data, dict)
        if ev.get("type") == "artifact_added" and isinstance(data.get("artifact_id"), str):
            out.append((ev.get("seq", -1), "/data/artifact_id", data["artifact_id"]))
        if ev.get("type") in ("sandbox_read", "sandbox_wrote") and isinstance(
            data.get("artifact"), str
        ):
            out.append((ev.get("seq", -1), "/data/artifact", data["artifact"]))
    return out


def validate_case(path: Path) -> list[Problem]:
    """Every problem of a case directory (not only the first):

    * symlinks and special files, unknown extra files, missing required files;
    * each file strictly read and checked against its schema: case.json
      (``case.schema.json``, ``format`` 1), model.json, stubs.json, sandbox.json, each log with
      the log reader of its dialect (:func:`~threads_cases.core.log.validate_log`), each expected
      file against ``state.schema.json`` ``$defs/state.<dialect>``;
    * every file canonical (spec/case-format.md 1.2);
    * cross-file: every artifact the logs and sandbox.json refer to is in ``artifacts/`` with
      matching bytes, ``at`` is in each log and is its last event, each log reduces to its
      expected file, the logs of the different dialects hold the same events;
    * the fingerprint (``fingerprint_stale``).
    """
    from ..core.dialects import get_dialect
    from ..core.log import read_log, reduce_log, validate_log
    from ..core.schemas import schema_problems

    problems: list[Problem] = []
    if not (path / "case.json").is_file():
        return [_problem("case_invalid", "not a case directory: case.json is missing", path)]
    files, walk_problems = walk_case(path)
    problems.extend(walk_problems)

    # case.json
    meta: dict[str, Any] | None = None
    try:
        value = _parse_json(files["case.json"], str(path / "case.json"))
        if isinstance(value, dict) and "format" in value and value.get("format") != CASE_FORMAT:
            problems.append(
                _problem(
                    "format_unsupported",
                    f"case format {value['format']!r} is "
                    f"not supported (this version reads {CASE_FORMAT})",
                    path / "case.json",
                    "/format",
                )
            )
        for pointer, message in schema_problems(value, "case.schema.json"):
            problems.append(
                _problem("case_invalid", f"schema: {message}", path / "case.json", pointer)
            )
        if isinstance(value, dict):
            meta = value
            if isinstance(value.get("name"), str) and re.fullmatch(
                r"[A-Za-z0-9._-]{1,64}", value["name"]
            ):
                try:
                    check_case_name(value["name"])  # the schema allows "..", "CON", ...
                except CaseError as err:
                    problems.append(
                        _problem("case_invalid", err.message, path / "case.json", "/name")
                    )
    except CaseError as err:
        problems.append(Problem("case_invalid", err.message, err.location))

    impls_raw = meta.get("implementations") if meta else None
    impls = [i for i in impls_raw if isinstance(i, str)] if isinstance(impls_raw, list) else []

    # which files belong
    allowed = {"case.json", *RECORDING_FILES}
    for impl in impls:
        allowed.update({f"log.{impl}.jsonl", f"expected.{impl}.json"})
    for rel in sorted(files):
        if rel in allowed:
            continue
        if rel.startswith("artifacts/") and _HEX64.match(rel.removeprefix("artifacts/")):
            continue
        hint = ""
        if _LOG.match(rel) or _EXPECTED.match(rel):
            if meta is None:
                continue  # case.json is unreadable: which logs belong is unknown
            hint = " (its implementation is not in case.json implementations)"
        problems.append(_problem("case_invalid", f"unknown file {rel}{hint}", path / rel))
    for rel in sorted(allowed - set(files) - ({"case.json"} if meta is None else set())):
        if (path / rel).is_symlink():
            continue
        problems.append(_problem("case_invalid", f"{rel} is missing", path / rel))

    # canonical form
    for rel, data in sorted(files.items()):
        if rel.startswith("artifacts/") or not rel.endswith((".json", ".jsonl")):
            continue
        try:
            if _canonical_bytes(rel, data, str(path / rel)) != data:
                problems.append(
                    _problem("case_invalid", "not canonical; run `threads-cases fmt`", path / rel)
                )
        except CaseError:
            pass  # reported below by the reader of that file

    # artifacts: bytes match their name
    for rel, data in sorted(files.items()):
        hexname = rel.removeprefix("artifacts/")
        if (
            rel.startswith("artifacts/")
            and _HEX64.match(hexname)
            and hashlib.sha256(data).hexdigest() != hexname
        ):
            problems.append(
                _problem(
                    "case_invalid", "artifact bytes do not match their sha256 name", path / rel
                )
            )

    def need_artifact(artifact: str, where: Path, pointer: str, line: int | None = None) -> None:
        hexname = artifact.removeprefix("sha256:")
        if f"artifacts/{hexname}" not in files:
            problems.append(
                _problem(
                    "case_invalid",
                    f"artifact {artifact} is not in artifacts/",
                    where,
                    pointer,
                    line,
                )
            )

    # recording files
    for rel in RECORDING_FILES:
        if rel not in files:
            continue
        try:
            doc = _parse_json(files[rel], str(path / rel))
        except CaseError as err:
            problems.append(Problem("case_invalid", err.message, err.location))
            continue
        schema = rel.replace(".json", ".schema.json")
        for pointer, message in schema_problems(doc, schema):
            problems.append(_problem("case_invalid", f"schema: {message}", path / rel, pointer))
        if rel == "sandbox.json" and isinstance(doc, dict) and isinstance(doc.get("reads"), list):
            for i, read in enumerate(doc["reads"]):
                if isinstance(read, dict) and isinstance(read.get("artifact"), str):
                    need_artifact(read["artifact"], path / rel, f"/reads/{i}/artifact")
                if isinstance(read, dict) and isinstance(read.get("path"), str):
                    # the schema checks the path's form; a Windows device name in any
                    # segment is refused too (case-format.md 2.2)
                    devices = [s for s in read["path"].split("/") if is_device_name(s)]
                    if devices:
                        problems.append(
                            _problem(
                                "case_invalid",
                                f"sandbox path {read['path']!r} names a device ({devices[0]})",
                                path / rel,
                                f"/reads/{i}/path",
                            )
                        )

    # logs and expected states
    at = meta.get("at") if meta else None
    logs: dict[str, list[dict[str, Any]]] = {}
    for impl in impls:
        log_path = path / f"log.{impl}.jsonl"
        exp_path = path / f"expected.{impl}.json"
        try:
            dialect = get_dialect(impl)
        except CaseError as err:
            problems.append(
                _problem("dialect_unknown", err.message, path / "case.json", "/implementations")
            )
            continue
        log_ok = False
        if log_path.name in files:
            log_problems = validate_log(log_path, dialect=dialect)
            problems.extend(log_problems)
            if not log_problems:
                events = list(read_log(log_path, dialect=dialect))
                logs[impl] = events
                log_ok = True
                ids = [e["event_id"] for e in events]
                if isinstance(at, str):
                    if at not in ids:
                        problems.append(
                            _problem(
                                "case_invalid", f"the fork point {at!r} is not in the log", log_path
                            )
                        )
                    elif ids[-1] != at:
                        problems.append(
                            _problem(
                                "case_invalid",
                                f"the fork point {at!r} is event {ids.index(at)}, "
                                f"not the last event of the log",
                                log_path,
                                line=ids.index(at) + 1,
                            )
                        )
                for seq, pointer, artifact in _artifact_refs(events):
                    need_artifact(artifact, log_path, pointer, seq + 1 if seq >= 0 else None)
        if exp_path.name not in files:
            continue
        try:
            expected = _parse_json(files[exp_path.name], str(exp_path))
        except CaseError as err:
            problems.append(Problem("case_invalid", err.message, err.location))
            continue
        schema_found = schema_problems(expected, "state.schema.json", f"state.{impl}")
        for pointer, message in schema_found:
            problems.append(_problem("case_invalid", f"schema: {message}", exp_path, pointer))
        if log_ok:
            try:
                state = dialect.encode_state(reduce_log(log_path, dialect=dialect))
            except CaseError as err:
                problems.append(err.problem())
                continue
            for d in diff_values(expected, state):
                problems.append(
                    _problem(
                        "state_mismatch",
                        f"the log reduces to another state: {d.render()}",
                        exp_path,
                        d.pointer,
                    )
                )

    # the logs of the different dialects hold the same events
    if len(logs) > 1:
        names = list(logs)
        base_name = CANONICAL_DIALECT if CANONICAL_DIALECT in logs else names[0]
        base = logs[base_name]
        for other in names:
            if other == base_name:
                continue
            evs = logs[other]
            where = path / f"log.{other}.jsonl"
            if len(evs) != len(base):
                problems.append(
                    _problem(
                        "case_invalid",
                        f"{len(evs)} events, where log.{base_name}.jsonl has {len(base)}",
                        where,
                    )
                )
            for i, (a, b) in enumerate(zip(base, evs, strict=False)):
                diffs = diff_values(a, b)
                if diffs:
                    shown = "; ".join(d.render() for d in diffs[:3])
                    more = f" (and {len(diffs) - 3} more)" if len(diffs) > 3 else ""
                    problems.append(
                        _problem(
                            "case_invalid",
                            f"event differs from log.{base_name}.jsonl: {shown}{more}",
                            where,
                            diffs[0].pointer,
                            i + 1,
                        )
                    )

    # the fingerprint
    if meta is not None and "case.json" in files:
        fp = computed_fingerprint(files)
        if fp is not None and fp != meta.get("fingerprint"):
            problems.append(
                _problem(
                    "fingerprint_stale",
                    f"the files give {fp}, case.json says "
                    f"{meta.get('fingerprint')}; run `threads-cases fmt`",
                    path / "case.json",
                    "/fingerprint",
                )
            )
    return problems


# --------------------------------------------------------------------------- diff


@dataclass(frozen=True)
class Change:
    """One semantic difference between two versions of a case (or of one file).

    ``kind`` is ``added``, ``removed`` or ``changed``; ``item`` names what changed inside
    the file (``must[0]``, ``seq 4 tool_result``, ``replies[1]``; empty for the file itself);
    ``pointer`` is a JSON pointer inside that item (or the file), ``None`` for whole items.
    """

    file: str
    kind: str
    item: str = ""
    pointer: str | None = None
    before: Any = None
    after: Any = None
    note: str = ""

    def to_json(self) -> dict[str, Any]:
        return {
            "file": self.file,
            "kind": self.kind,
            "item": self.item,
            "pointer": self.pointer,
            "before": self.before,
            "after": self.after,
            "note": self.note,
        }

    def render(self) -> str:
        mark = {"added": "+", "removed": "-", "changed": "~"}[self.kind]
        where = " ".join(p for p in (self.item, self.pointer or "") if p) or self.kind
        if not (self.item or self.pointer):
            return f"{mark} {where}" + (f": {self.note}" if self.note else "")
        if self.note:
            return f"{mark} {where}: {self.note}"
        if self.kind == "added":
            return f"{mark} {where}: {_render(self.after)}"
        if self.kind == "removed":
            return f"{mark} {where}: {_render(self.before)}"
        return f"{mark} {where}: {_render(self.before)} -> {_render(self.after)}"


def _value_changes(file: str, item: str, a: Any, b: Any, prefix: str = "") -> list[Change]:
    out = []
    for d in diff_values(a, b, prefix):
        if d.missing:
            out.append(Change(file, "removed", item, d.pointer, before=d.expected))
        elif d.extra:
            out.append(Change(file, "added", item, d.pointer, after=d.actual))
        else:
            out.append(Change(file, "changed", item, d.pointer, d.expected, d.actual))
    return out


def _list_changes(
    file: str, label: str, a: list[Any], b: list[Any], name: Callable[[Any], str] | None = None
) -> list[Change]:
    """Items added, removed or changed between two lists, aligned with difflib (so an
    insertion is one ``added``, not a cascade of changes); replaced items pair up by index
    and report their differences by pointer."""
    keys_a = [_render(x, 10**9) for x in a]
    keys_b = [_render(x, 10**9) for x in b]
    out: list[Change] = []

    def label_of(i: int, v: Any) -> str:
        return f"{label}[{i}]" + (f" {name(v)}" if name else "")

    sm = difflib.SequenceMatcher(a=keys_a, b=keys_b, autojunk=False)
    for op, i1, i2, j1, j2 in sm.get_opcodes():
        if op == "equal":
            continue
        pairs = min(i2 - i1, j2 - j1) if op == "replace" else 0
        for k in range(pairs):
            out.extend(_value_changes(file, label_of(j1 + k, b[j1 + k]), a[i1 + k], b[j1 + k]))
        for i in range(i1 + pairs, i2):
            out.append(Change(file, "removed", label_of(i, a[i]), None, before=a[i]))
        for j in range(j1 + pairs, j2):
            out.append(Change(file, "added", label_of(j, b[j]), None, after=b[j]))
    return out


def _event_label(ev: Any) -> str:
    if isinstance(ev, dict):
        return f"seq {ev.get('seq', '?')} {ev.get('type', '?')}"
    return "line"


def _log_changes(file: str, a: list[Any], b: list[Any]) -> list[Change]:
    """Events compared by seq (line order for lines without a seq)."""

    def keyed(events: list[Any]) -> dict[Any, Any]:
        out: dict[Any, Any] = {}
        for i, ev in enumerate(events):
            seq = ev.get("seq") if isinstance(ev, dict) else None
            key = seq if isinstance(seq, int) and seq not in out else ("line", i)
            out[key] = ev
        return out

    ka, kb = keyed(a), keyed(b)
    out: list[Change] = []
    for key in sorted(set(ka) | set(kb), key=lambda k: (isinstance(k, tuple), str(k).zfill(12))):
        if key not in kb:
            out.append(Change(file, "removed", _event_label(ka[key]), None, before=ka[key]))
        elif key not in ka:
            out.append(Change(file, "added", _event_label(kb[key]), None, after=kb[key]))
        elif not values_equal(ka[key], kb[key]):
            out.extend(_value_changes(file, _event_label(kb[key]), ka[key], kb[key]))
    return out


def _case_json_changes(file: str, a: Any, b: Any) -> list[Change]:
    if not (isinstance(a, dict) and isinstance(b, dict)):
        return _value_changes(file, "", a, b)
    out: list[Change] = []
    ea = a.get("expect") if isinstance(a.get("expect"), dict) else {}
    eb = b.get("expect") if isinstance(b.get("expect"), dict) else {}
    assert isinstance(ea, dict) and isinstance(eb, dict)
    for key in ("must", "expect"):
        la, lb = ea.get(key, []), eb.get(key, [])
        if isinstance(la, list) and isinstance(lb, list):
            out.extend(_list_changes(file, key, la, lb))
        else:
            out.extend(_value_changes(file, key, la, lb))
    rest_a = {k: v for k, v in a.items() if k != "expect"}
    rest_b = {k: v for k, v in b.items() if k != "expect"}
    rest_a["expect"] = {k: v for k, v in ea.items() if k not in ("must", "expect")}
    rest_b["expect"] = {k: v for k, v in eb.items() if k not in ("must", "expect")}
    # the fingerprint follows every other change: report it last
    changes = _value_changes(file, "", rest_a, rest_b)
    changes.sort(key=lambda c: c.pointer == "/fingerprint")
    return out + changes


def _recording_changes(file: str, a: Any, b: Any) -> list[Change]:
    key = _LIST_KEY[file.rsplit("/", 1)[-1]]
    if not (
        isinstance(a, dict)
        and isinstance(b, dict)
        and isinstance(a.get(key), list)
        and isinstance(b.get(key), list)
    ):
        return _value_changes(file, "", a, b)

    def name(v: Any) -> str:
        if not isinstance(v, dict):
            return ""
        if key == "replies":
            return str(v.get("stop_reason", ""))
        if key == "calls":
            return str(v.get("tool", ""))
        return str(v.get("path", ""))

    out = _list_changes(file, key, a[key], b[key], name)
    rest_a = {k: v for k, v in a.items() if k != key}
    rest_b = {k: v for k, v in b.items() if k != key}
    return out + _value_changes(file, "", rest_a, rest_b)


def _is_binary(data: bytes) -> bool:
    if b"\x00" in data:
        return True
    try:
        data.decode("utf-8")
    except UnicodeDecodeError:
        return True
    return False


def _size(data: bytes | None) -> str:
    return "absent" if data is None else f"{len(data)} bytes"


def diff_file(
    name: str, old: bytes | None, new: bytes | None, *, unified: bool = False
) -> list[Change] | list[str]:
    """The semantic changes of one file of a case (``name`` relative to the case).

    ``None`` stands for an absent file. JSON files are compared by pointer (case.json by
    matcher, the recording files by item), logs by event seq; other files (artifacts) by
    bytes. With ``unified`` a file that is not strict JSON gives unified-diff lines
    (``list[str]``) instead of one ``changed`` entry.
    """
    if old == new:
        return []
    base = name.rsplit("/", 1)[-1]
    artifact = name.startswith("artifacts/") or "/artifacts/" in name
    if old is None or new is None:
        return [
            Change(
                name,
                "added" if old is None else "removed",
                "",
                None,
                note=_size(new if old is None else old),
            )
        ]
    if not artifact and (name.endswith(".json") or name.endswith(".jsonl")):
        try:
            if name.endswith(".jsonl"):
                a: Any = _parse_jsonl(old, f"a/{name}", "json_invalid")
                b: Any = _parse_jsonl(new, f"b/{name}", "json_invalid")
                d = _dialect_of(base)
                if d is not None:
                    return _log_changes(name, _decode_events(a, d), _decode_events(b, d))
                return _log_changes(name, a, b)
            a = _parse_json(old, f"a/{name}", "json_invalid")
            b = _parse_json(new, f"b/{name}", "json_invalid")
        except CaseError as err:
            if unified:
                return _unified(name, old, new)
            return [
                Change(
                    name,
                    "changed",
                    "",
                    None,
                    note=f"not strict JSON ({err.render()}); bytes differ",
                )
            ]
        if base == "case.json":
            return _case_json_changes(name, a, b)
        if base in _LIST_KEY:
            return _recording_changes(name, a, b)
        if _EXPECTED.match(base):
            d = _dialect_of(base)
            return _value_changes(name, "", _decode_state(a, d), _decode_state(b, d))
        changes = _value_changes(name, "", a, b)
        if not changes:
            return [
                Change(
                    name, "changed", "", None, note="same value, different bytes (not canonical)"
                )
            ]
        return changes
    if unified and not _is_binary(old) and not _is_binary(new):
        return _unified(name, old, new)
    return [Change(name, "changed", "", None, note=f"{_size(old)} -> {_size(new)}")]


def _unified(name: str, old: bytes, new: bytes) -> list[str]:
    if _is_binary(old) or _is_binary(new):
        return [f"Binary files a/{name} and b/{name} differ"]
    a = old.decode("utf-8").splitlines(keepends=True)
    b = new.decode("utf-8").splitlines(keepends=True)
    return [
        line if line.endswith("\n") else line + "\n\\ No newline at end of file\n"
        for line in difflib.unified_diff(a, b, f"a/{name}", f"b/{name}")
    ]


def diff_case_files(a: dict[str, bytes], b: dict[str, bytes]) -> list[Change]:
    """Every semantic change from case files ``a`` to case files ``b`` (as read by
    :func:`walk_case`), ordered: case.json, logs, expected states, recordings, artifacts,
    other files. The changes of a non-canonical dialect's log (or expected state) that are
    exactly those of the threads-py one are folded into one line saying so."""

    def order(name: str) -> tuple[int, str]:
        if name == "case.json":
            return 0, name
        if _LOG.match(name):
            return (1 if name == f"log.{CANONICAL_DIALECT}.jsonl" else 2), name
        if _EXPECTED.match(name):
            return (3 if name == f"expected.{CANONICAL_DIALECT}.json" else 4), name
        if name in RECORDING_FILES:
            return 5 + RECORDING_FILES.index(name), name
        if name.startswith("artifacts/"):
            return 9, name
        return 10, name

    out: list[Change] = []
    canonical: dict[str, list[Change]] = {}
    for name in sorted(set(a) | set(b), key=order):
        changes = diff_file(name, a.get(name), b.get(name))
        assert all(isinstance(c, Change) for c in changes)
        typed = [c for c in changes if isinstance(c, Change)]
        kind = "log" if _LOG.match(name) else "expected" if _EXPECTED.match(name) else None
        if kind and _dialect_of(name) == CANONICAL_DIALECT:
            canonical[kind] = typed
        elif kind and typed and kind in canonical and name in a and name in b:
            same = [(c.kind, c.item, c.pointer, c.before, c.after) for c in typed] == [
                (c.kind, c.item, c.pointer, c.before, c.after) for c in canonical[kind]
            ]
            if same:
                ref = (
                    f"log.{CANONICAL_DIALECT}.jsonl"
                    if kind == "log"
                    else f"expected.{CANONICAL_DIALECT}.json"
                )
                out.append(
                    Change(
                        name, "changed", "", None, note=f"the same {len(typed)} change(s) as {ref}"
                    )
                )
                continue
        out.extend(typed)
    return out


# --------------------------------------------------------------------------- git


def _git(args: list[str], cwd: Path) -> subprocess.CompletedProcess[bytes]:
    try:
        return subprocess.run(["git", *args], cwd=cwd, capture_output=True, timeout=60, check=False)
    except FileNotFoundError:
        raise CaseError(
            "git_unavailable",
            "git is not installed",
            hint="install git, or compare two case directories",
        ) from None


def git_case_files(rev: str, case_path: Path) -> dict[str, bytes]:
    """Every file of the case at ``case_path`` as committed at ``rev`` (``git show
    REV:path``). Raises ``CaseError("git_unavailable")`` outside a git work tree (or without
    git) and ``CaseError("invalid_request")`` for an unknown revision or a case path that is
    not in it."""
    folder = case_path if case_path.is_dir() else case_path.parent
    if not folder.is_dir():
        folder = Path.cwd()
    top = _git(["rev-parse", "--show-toplevel"], folder)
    if top.returncode != 0:
        raise CaseError(
            "git_unavailable",
            "not in a git work tree",
            file=str(case_path),
            hint="run inside a git repository, or compare two case directories",
        )
    root = Path(top.stdout.decode().strip())
    if rev.startswith("-"):
        raise CaseError("invalid_request", f"{rev!r} is not a revision")
    if _git(["rev-parse", "--verify", "--quiet", f"{rev}^{{commit}}"], root).returncode != 0:
        raise CaseError(
            "invalid_request",
            f"unknown revision {rev!r}",
            hint="pass a commit, branch or tag, e.g. HEAD or HEAD~1",
        )
    try:
        rel = case_path.resolve().relative_to(root.resolve()).as_posix()
    except ValueError:
        raise CaseError(
            "git_unavailable", f"outside the git work tree {root}", file=str(case_path)
        ) from None
    listing = _git(["ls-tree", "-r", "-z", "--name-only", "--full-tree", rev, "--", rel], root)
    names = [n.decode() for n in listing.stdout.split(b"\0") if n]
    prefix = rel.rstrip("/") + "/"
    names = [n for n in names if n.startswith(prefix)]
    if listing.returncode != 0 or not names:
        raise CaseError(
            "invalid_request",
            f"not a case directory in {rev}",
            file=str(case_path),
            hint="check the path and the revision (git ls-tree REV -- PATH)",
        )
    files: dict[str, bytes] = {}
    for n in names:
        shown = _git(["show", f"{rev}:{n}"], root)
        if shown.returncode != 0:
            raise CaseError(
                "io_error",
                f"git show {rev}:{n} failed: {shown.stderr.decode(errors='replace').strip()}",
            )
        files[n[len(prefix) :]] = shown.stdout
    if "case.json" not in files:
        raise CaseError("invalid_request", f"no case.json in {rev}", file=str(case_path))
    return files


# --------------------------------------------------------------------------- stale


UNUSED_CODES = ("reply_unused", "stub_unused")


def stale_entries(results: list[dict[str, Any]], under: Path | None = None) -> list[dict[str, Any]]:
    """Cases whose recorded replies or stubs went unused in a report: one entry per case
    path, ``{"case", "path", "implementations", "codes", "details", "exists"}``, sorted by
    path; ``under`` keeps only cases inside that folder."""
    by_path: dict[str, dict[str, Any]] = {}
    root = under.resolve() if under is not None else None
    for r in results:
        checks = r.get("checks") if isinstance(r.get("checks"), list) else []
        assert isinstance(checks, list)
        hits = [c for c in checks if isinstance(c, dict) and c.get("code") in UNUSED_CODES]
        if not hits:
            continue
        path = str(r.get("path", ""))
        if root is not None:
            try:
                Path(path).resolve().relative_to(root)
            except ValueError:
                continue
        entry = by_path.setdefault(
            path,
            {
                "case": r.get("case", ""),
                "path": path,
                "implementations": [],
                "codes": [],
                "details": [],
                "exists": (Path(path) / "case.json").is_file(),
            },
        )
        impl = r.get("implementation")
        if impl not in entry["implementations"]:
            entry["implementations"].append(impl)
        for c in hits:
            if c["code"] not in entry["codes"]:
                entry["codes"].append(c["code"])
            detail = f"[{impl}] {c.get('detail', '')}"
            if detail not in entry["details"]:
                entry["details"].append(detail)
    return [by_path[p] for p in sorted(by_path)]


__all__ = [
    "Change",
    "FormatResult",
    "case_dirs_for",
    "case_summary",
    "diff_case_files",
    "diff_file",
    "format_case",
    "git_case_files",
    "short_fingerprint",
    "stale_entries",
    "validate_case",
    "walk_case",
    "write_formatted",
]


# --------------------------------------------------------------------------- show

#: The warning ``show --values`` prints once on stderr.
VALUES_WARNING = (
    "warning: a case holds the raw inputs and outputs of the turn, unredacted "
    "(user input, tool inputs and results, file contents); mind where you paste "
    "this output"
)


def _shape(value: Any) -> str:
    """What a value is, without the value: ``text, 27 chars``, ``3 blocks (text, tool_use)``."""
    if isinstance(value, str):
        return f"text, {len(value)} chars"
    if isinstance(value, list):
        kinds = [b.get("type", "?") if isinstance(b, dict) else type(b).__name__ for b in value]
        return f"{len(value)} block(s)" + (f" ({', '.join(dict.fromkeys(kinds))})" if kinds else "")
    if isinstance(value, dict):
        return f"object, {len(value)} key(s)"
    return type(value).__name__


def _content_text(value: Any, limit: int = 100) -> str:
    if isinstance(value, str):
        text = value
    elif isinstance(value, list):
        parts = []
        for b in value:
            if isinstance(b, dict) and isinstance(b.get("text"), str):
                parts.append(b["text"])
            elif isinstance(b, dict) and b.get("type") == "tool_use":
                parts.append(f"{b.get('name')}({_render(b.get('input'), limit)})")
            else:
                parts.append(_render(b, limit))
        text = " | ".join(parts)
    else:
        text = _render(value, limit)
    text = text.replace("\n", "\\n")
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _tool_uses(message: Any) -> list[str]:
    content = message.get("content") if isinstance(message, dict) else None
    if not isinstance(content, list):
        return []
    return [
        str(b.get("name")) for b in content if isinstance(b, dict) and b.get("type") == "tool_use"
    ]


def event_summary(ev: dict[str, Any], values: bool = False) -> str:
    """A one-line summary of a canonical event; values (text, tool inputs and results) only
    when ``values``."""
    t = ev.get("type")
    data = ev.get("data") if isinstance(ev.get("data"), dict) else {}
    assert isinstance(data, dict)
    short = short_fingerprint
    if t == "thread_started":
        agent = data.get("agent") if isinstance(data.get("agent"), dict) else {}
        assert isinstance(agent, dict)
        tools = [str(x.get("name")) for x in agent.get("tools", []) if isinstance(x, dict)]
        return f"agent {agent.get('name')} ({agent.get('model')}), tools: {', '.join(tools) or '-'}"
    if t == "user_message":
        return _content_text(data.get("content")) if values else _shape(data.get("content"))
    if t in ("turn_started",):
        return f"{data.get('turn_id')}"
    if t == "model_requested":
        return f"{data.get('model')} request {short(data.get('request_sha256'))}"
    if t == "model_responded":
        uses = _tool_uses(data.get("message"))
        out = f"stop_reason {data.get('stop_reason')}"
        if uses:
            out += f", tool_use: {', '.join(uses)}"
        if values:
            message = data.get("message")
            content = message.get("content") if isinstance(message, dict) else None
            out += f": {_content_text(content)}"
        return out
    if t == "tool_called":
        out = (
            f"{data.get('name')} ({data.get('kind')}, {data.get('effect')}) "
            f"{data.get('tool_use_id')}"
        )
        return out + (f" input {_render(data.get('input'))}" if values else "")
    if t == "tool_result":
        status = "error" if data.get("is_error") else "ok"
        out = f"{data.get('name')} {data.get('tool_use_id')} {status}"
        content = data.get("content")
        return out + (f": {_content_text(content)}" if values else f" ({_shape(content)})")
    if t in ("sandbox_read", "sandbox_wrote"):
        if t == "sandbox_wrote" and data.get("artifact") is None:
            return f"{data.get('path')} deleted"
        return f"{data.get('path')} {data.get('size')} bytes sha256 {short(data.get('sha256'))}"
    if t == "artifact_added":
        return f"{short(data.get('artifact_id'))} {data.get('media_type')} {data.get('size')} bytes"
    if t == "snapshot_taken":
        return f"snapshot {data.get('snapshot_id')}"
    if t == "restored":
        return f"restore {data.get('snapshot_id')} (epoch {ev.get('epoch')})"
    if t == "forked":
        return f"branch {ev.get('branch_id')} from {data.get('from_event_id')}"
    if t == "turn_completed":
        usage = data.get("usage") if isinstance(data.get("usage"), dict) else {}
        assert isinstance(usage, dict)
        return (
            f"{data.get('turn_id')} {data.get('stop_reason')} "
            f"({usage.get('input_tokens')} in, {usage.get('output_tokens')} out)"
        )
    if t == "turn_failed":
        err = data.get("error") if isinstance(data.get("error"), dict) else {}
        assert isinstance(err, dict)
        return f"{data.get('turn_id')} {err.get('code')}"
    keys = ", ".join(sorted(data)) or "no data"
    return f"extension ({keys})" + (f": {_render(data)}" if values else "")


def _row(table: Any, *cells: Any, style: str = "") -> None:
    """Add a row whose plain strings are text, never rich markup (values may hold ``[...]``)."""
    from rich.text import Text

    table.add_row(*(Text(c) if isinstance(c, str) else c for c in cells), style=style)


def render_case(
    path: Path, *, values: bool = False, all_events: bool = False, last: int = 20
) -> Any:
    """A rich renderable of a case: header (name, at, implementations, fingerprint), the
    input, must/expect matchers, the prefix timeline (last ``last`` events unless
    ``all_events``), model replies, stubs, sandbox reads and artifacts. Text, tool inputs and
    results are shown only with ``values``. Raises ``CaseError`` when case.json is unusable."""
    from rich.console import Group
    from rich.panel import Panel
    from rich.table import Table
    from rich.text import Text

    from ..case.directory import load_case
    from ..core.dialects import get_dialect
    from ..core.log import read_log

    case = load_case(path)
    meta = case.meta
    files, _ = walk_case(path)
    parts: list[Any] = []

    head = Table.grid(padding=(0, 2))
    head.add_column(style="bold")
    head.add_column()
    fp_ok = computed_fingerprint(files) == meta["fingerprint"]
    _row(head, "name", meta["name"])
    _row(head, "path", str(path))
    _row(head, "at", meta["at"])
    _row(head, "implementations", ", ".join(meta["implementations"]))
    _row(head, "portable", str(meta["portable"]).lower())
    _row(head, "external_effects", meta["external_effects"])
    agent = meta["agent"]
    _row(
        head,
        "agent",
        f"{agent['name'] or '-'} ({agent['model'] or '-'}), tools: "
        + (", ".join(f"{t['name']} [{t['kind']}/{t['effect']}]" for t in agent["tools"]) or "-"),
    )
    _row(
        head,
        "fingerprint",
        Text(
            short_fingerprint(meta["fingerprint"])
            + ("" if fp_ok else "  stale: files changed since saving"),
            style="" if fp_ok else "yellow",
        ),
    )
    _row(head, "input", _content_text(meta["input"], 400) if values else _shape(meta["input"]))
    parts.append(head)

    for key in ("must", "expect"):
        matchers = meta["expect"][key]
        t = Text(
            f"\n{key} ({len(matchers)})"
            + ("  any order" if key == "must" else "  ordered subsequence"),
            style="bold",
        )
        parts.append(t)
        for i, m in enumerate(matchers):
            parts.append(Text(f"  [{i}] {_render(m, 400)}"))
        if not matchers:
            parts.append(Text("  none", style="dim"))

    # timeline
    listed = meta["implementations"]
    impl = CANONICAL_DIALECT if CANONICAL_DIALECT in listed else listed[0]
    events: list[dict[str, Any]] = []
    error: str | None = None
    try:
        events = list(read_log(case.log_path(impl), dialect=get_dialect(impl)))
    except CaseError as err:
        error = err.render()
    shown = events if all_events else events[-last:]
    title = f"\nprefix log.{impl}.jsonl: {len(events)} event(s)"
    if len(shown) < len(events):
        title += f", the last {len(shown)} shown (--all for every event)"
    parts.append(Text(title, style="bold"))
    if error:
        parts.append(Text("  " + error, style="red"))
    table = Table(show_edge=False, header_style="bold", pad_edge=False)
    for col in ("seq", "type", "actor", "summary"):
        table.add_column(col, overflow="fold")
    for ev in shown:
        style = "bold cyan" if ev.get("event_id") == meta["at"] else ""
        _row(
            table,
            str(ev.get("seq")),
            str(ev.get("type")),
            str(ev.get("actor_kind")),
            event_summary(ev, values),
            style=style,
        )
    if shown:
        parts.append(table)

    def section(name: str, build: Callable[[Any], Any]) -> None:
        try:
            doc = case.read(name)
            parts.append(build(doc))
        except (CaseError, KeyError, TypeError, AttributeError) as err:
            msg = err.render() if isinstance(err, CaseError) else f"malformed {name}: {err}"
            parts.append(Text(f"\n{name}: {msg}", style="red"))

    def replies(doc: Any) -> Any:
        t = Table(title=None, show_edge=False, header_style="bold", pad_edge=False)
        for col in ("#", "stop_reason", "tool_use", "tokens", "request"):
            t.add_column(col, overflow="fold")
        if values:
            t.add_column("content", overflow="fold")
        for i, r in enumerate(doc["replies"]):
            usage = r.get("usage") or {}
            uses = ", ".join(_tool_uses(r.get("message"))) or "-"
            row = [
                str(i),
                str(r.get("stop_reason")),
                uses,
                f"{usage.get('input_tokens')}/{usage.get('output_tokens')}",
                short_fingerprint(r.get("request_sha256")),
            ]
            if values:
                row.append(_content_text((r.get("message") or {}).get("content"), 200))
            _row(t, *row)
        return Group(Text(f"\nmodel replies ({len(doc['replies'])})", style="bold"), t)

    def stubs(doc: Any) -> Any:
        t = Table(show_edge=False, header_style="bold", pad_edge=False)
        for col in ("#", "tool", "result"):
            t.add_column(col, overflow="fold")
        if values:
            t.add_column("input", overflow="fold")
            t.add_column("content", overflow="fold")
        for i, c in enumerate(doc["calls"]):
            result = c.get("result") or {}
            row = [str(i), str(c.get("tool")), "error" if result.get("is_error") else "ok"]
            if values:
                row += [_render(c.get("input"), 200), _content_text(result.get("content"), 200)]
            _row(t, *row)
        return Group(
            Text(
                f"\nstubs ({len(doc['calls'])})  external_effects {meta['external_effects']}",
                style="bold",
            ),
            t,
        )

    def sandbox(doc: Any) -> Any:
        out: list[Any] = [Text(f"\nsandbox reads ({len(doc['reads'])})", style="bold")]
        for r in doc["reads"]:
            art = r.get("artifact")
            present = art is None or f"artifacts/{str(art).removeprefix('sha256:')}" in files
            out.append(
                Text(
                    f"  {r.get('path')}  sha256 {short_fingerprint(r.get('sha256'))}"
                    + ("" if present else "  (artifact missing)"),
                    style="" if present else "red",
                )
            )
        return Group(*out)

    section("model.json", replies)
    section("stubs.json", stubs)
    section("sandbox.json", sandbox)
    arts = sorted(n for n in files if n.startswith("artifacts/"))
    parts.append(
        Text(
            f"\nartifacts ({len(arts)}): "
            + (
                ", ".join(
                    f"{short_fingerprint(n.removeprefix('artifacts/'))} {len(files[n])} B"
                    for n in arts
                )
                or "none"
            ),
            style="bold",
        )
    )
    return Panel(Group(*parts), title=f"case {meta['name']}", expand=False)
