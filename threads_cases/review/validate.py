"""``validate``: every problem of a case directory, not only the first.

Reason codes: ``case_invalid``, ``format_unsupported``, ``log_invalid``, ``state_mismatch``,
``fingerprint_stale``, ``dialect_unknown`` (spec/case-format.md, spec/reason-codes.md).
"""

from __future__ import annotations

import hashlib
import re
from pathlib import Path
from typing import Any

from ..case.directory import CASE_FORMAT, check_case_name, computed_fingerprint, is_hex64
from ..core.errors import CaseError, Location, Problem
from ..core.matchers import diff_values
from ..reference.sandbox import is_device_name
from .files import (
    _EXPECTED,
    _LOG,
    CANONICAL_DIALECT,
    RECORDING_FILES,
    _parse_json,
    canonical_bytes,
    walk_case,
)


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
    if not (path / "case.json").is_file():
        return [_problem("case_invalid", "not a case directory: case.json is missing", path)]
    files, walk_problems = walk_case(path)
    check = _Check(path, files, list(walk_problems))
    meta = check.case_json()
    impls_raw = meta.get("implementations") if meta else None
    impls = [i for i in impls_raw if isinstance(i, str)] if isinstance(impls_raw, list) else []
    check.membership(meta, impls)
    check.canonical_form()
    check.artifact_names()
    check.recordings()
    logs: dict[str, list[dict[str, Any]]] = {}
    at = meta.get("at") if meta else None
    for impl in impls:
        events = check.log_and_expected(impl, at)
        if events is not None:
            logs[impl] = events
    check.logs_agree(logs)
    check.fingerprint(meta)
    return check.problems


class _Check:
    """The checks of :func:`validate_case`, each appending to ``problems``."""

    def __init__(self, path: Path, files: dict[str, bytes], problems: list[Problem]) -> None:
        self.path = path
        self.files = files
        self.problems = problems

    def add(
        self,
        code: str,
        message: str,
        file: Path | str,
        pointer: str | None = None,
        line: int | None = None,
    ) -> None:
        self.problems.append(_problem(code, message, file, pointer, line))

    def case_json(self) -> dict[str, Any] | None:
        """case.json read strictly, its format, schema and name checked; ``None`` when it is
        not a readable object."""
        from ..core.schemas import schema_problems

        where = self.path / "case.json"
        try:
            value = _parse_json(self.files["case.json"], str(where))
        except CaseError as err:
            self.problems.append(Problem("case_invalid", err.message, err.location))
            return None
        if isinstance(value, dict) and "format" in value and value.get("format") != CASE_FORMAT:
            self.add(
                "format_unsupported",
                f"case format {value['format']!r} is "
                f"not supported (this version reads {CASE_FORMAT})",
                where,
                "/format",
            )
        for pointer, message in schema_problems(value, "case.schema.json"):
            self.add("case_invalid", f"schema: {message}", where, pointer)
        if not isinstance(value, dict):
            return None
        name = value.get("name")
        if isinstance(name, str) and re.fullmatch(r"[A-Za-z0-9._-]{1,64}", name):
            try:
                check_case_name(name)  # the schema allows "..", "CON", ...
            except CaseError as err:
                self.add("case_invalid", err.message, where, "/name")
        return value

    def membership(self, meta: dict[str, Any] | None, impls: list[str]) -> None:
        """Unknown files and missing required files."""
        allowed = {"case.json", *RECORDING_FILES}
        for impl in impls:
            allowed.update({f"log.{impl}.jsonl", f"expected.{impl}.json"})
        for rel in sorted(self.files):
            if rel in allowed:
                continue
            if rel.startswith("artifacts/") and is_hex64(rel.removeprefix("artifacts/")):
                continue
            hint = ""
            if _LOG.match(rel) or _EXPECTED.match(rel):
                if meta is None:
                    continue  # case.json is unreadable: which logs belong is unknown
                hint = " (its implementation is not in case.json implementations)"
            self.add("case_invalid", f"unknown file {rel}{hint}", self.path / rel)
        for rel in sorted(allowed - set(self.files) - ({"case.json"} if meta is None else set())):
            if (self.path / rel).is_symlink():
                continue
            self.add("case_invalid", f"{rel} is missing", self.path / rel)

    def canonical_form(self) -> None:
        for rel, data in sorted(self.files.items()):
            if rel.startswith("artifacts/") or not rel.endswith((".json", ".jsonl")):
                continue
            try:
                if canonical_bytes(rel, data, str(self.path / rel)) != data:
                    self.add(
                        "case_invalid", "not canonical; run `threads-cases fmt`", self.path / rel
                    )
            except CaseError:
                pass  # reported by the reader of that file

    def artifact_names(self) -> None:
        """Each artifact's bytes match its sha256 name."""
        for rel, data in sorted(self.files.items()):
            hexname = rel.removeprefix("artifacts/")
            if (
                rel.startswith("artifacts/")
                and is_hex64(hexname)
                and hashlib.sha256(data).hexdigest() != hexname
            ):
                self.add(
                    "case_invalid", "artifact bytes do not match their sha256 name", self.path / rel
                )

    def need_artifact(
        self, artifact: str, where: Path, pointer: str, line: int | None = None
    ) -> None:
        hexname = artifact.removeprefix("sha256:")
        if f"artifacts/{hexname}" not in self.files:
            self.add(
                "case_invalid", f"artifact {artifact} is not in artifacts/", where, pointer, line
            )

    def recordings(self) -> None:
        """model.json, stubs.json and sandbox.json against their schemas; sandbox reads name
        present artifacts and no device."""
        from ..core.schemas import schema_problems

        for rel in RECORDING_FILES:
            if rel not in self.files:
                continue
            try:
                doc = _parse_json(self.files[rel], str(self.path / rel))
            except CaseError as err:
                self.problems.append(Problem("case_invalid", err.message, err.location))
                continue
            schema = rel.replace(".json", ".schema.json")
            for pointer, message in schema_problems(doc, schema):
                self.add("case_invalid", f"schema: {message}", self.path / rel, pointer)
            if (
                rel == "sandbox.json"
                and isinstance(doc, dict)
                and isinstance(doc.get("reads"), list)
            ):
                for i, read in enumerate(doc["reads"]):
                    if isinstance(read, dict):
                        self.sandbox_read(read, i)

    def sandbox_read(self, read: dict[str, Any], i: int) -> None:
        where = self.path / "sandbox.json"
        if isinstance(read.get("artifact"), str):
            self.need_artifact(read["artifact"], where, f"/reads/{i}/artifact")
        if isinstance(read.get("path"), str):
            # the schema checks the path's form; a Windows device name in any segment is
            # refused too (case-format.md 2.2)
            devices = [s for s in read["path"].split("/") if is_device_name(s)]
            if devices:
                self.add(
                    "case_invalid",
                    f"sandbox path {read['path']!r} names a device ({devices[0]})",
                    where,
                    f"/reads/{i}/path",
                )

    def log_and_expected(self, impl: str, at: Any) -> list[dict[str, Any]] | None:
        """One dialect's log (read, fork point, artifacts) and expected state (schema, and
        what the log reduces to); the log's canonical events when it reads cleanly."""
        from ..core.dialects import get_dialect
        from ..core.log import read_log, validate_log

        log_path = self.path / f"log.{impl}.jsonl"
        try:
            dialect = get_dialect(impl)
        except CaseError as err:
            self.add("dialect_unknown", err.message, self.path / "case.json", "/implementations")
            return None
        events: list[dict[str, Any]] | None = None
        if log_path.name in self.files:
            log_problems = validate_log(log_path, dialect=dialect)
            self.problems.extend(log_problems)
            if not log_problems:
                events = list(read_log(log_path, dialect=dialect))
                self.fork_point(events, at, log_path)
                for seq, pointer, artifact in _artifact_refs(events):
                    self.need_artifact(artifact, log_path, pointer, seq + 1 if seq >= 0 else None)
        self.expected(impl, log_path if events is not None else None)
        return events

    def fork_point(self, events: list[dict[str, Any]], at: Any, log_path: Path) -> None:
        if not isinstance(at, str):
            return
        ids = [e["event_id"] for e in events]
        if at not in ids:
            self.add("case_invalid", f"the fork point {at!r} is not in the log", log_path)
        elif ids[-1] != at:
            self.add(
                "case_invalid",
                f"the fork point {at!r} is event {ids.index(at)}, not the last event of the log",
                log_path,
                line=ids.index(at) + 1,
            )

    def expected(self, impl: str, log_path: Path | None) -> None:
        """expected.<impl>.json against its schema and against what a clean log reduces to."""
        from ..core.dialects import get_dialect
        from ..core.log import reduce_log
        from ..core.schemas import schema_problems

        exp_path = self.path / f"expected.{impl}.json"
        if exp_path.name not in self.files:
            return
        try:
            expected = _parse_json(self.files[exp_path.name], str(exp_path))
        except CaseError as err:
            self.problems.append(Problem("case_invalid", err.message, err.location))
            return
        for pointer, message in schema_problems(expected, "state.schema.json", f"state.{impl}"):
            self.add("case_invalid", f"schema: {message}", exp_path, pointer)
        if log_path is None:
            return
        dialect = get_dialect(impl)
        try:
            state = dialect.encode_state(reduce_log(log_path, dialect=dialect))
        except CaseError as err:
            self.problems.append(err.problem())
            return
        for d in diff_values(expected, state):
            self.add(
                "state_mismatch",
                f"the log reduces to another state: {d.render()}",
                exp_path,
                d.pointer,
            )

    def logs_agree(self, logs: dict[str, list[dict[str, Any]]]) -> None:
        """The logs of the different dialects hold the same canonical events."""
        if len(logs) < 2:
            return
        names = list(logs)
        base_name = CANONICAL_DIALECT if CANONICAL_DIALECT in logs else names[0]
        base = logs[base_name]
        for other in names:
            if other == base_name:
                continue
            evs = logs[other]
            where = self.path / f"log.{other}.jsonl"
            if len(evs) != len(base):
                self.add(
                    "case_invalid",
                    f"{len(evs)} events, where log.{base_name}.jsonl has {len(base)}",
                    where,
                )
            for i, (a, b) in enumerate(zip(base, evs, strict=False)):
                diffs = diff_values(a, b)
                if diffs:
                    shown = "; ".join(d.render() for d in diffs[:3])
                    more = f" (and {len(diffs) - 3} more)" if len(diffs) > 3 else ""
                    self.add(
                        "case_invalid",
                        f"event differs from log.{base_name}.jsonl: {shown}{more}",
                        where,
                        diffs[0].pointer,
                        i + 1,
                    )

    def fingerprint(self, meta: dict[str, Any] | None) -> None:
        if meta is None or "case.json" not in self.files:
            return
        fp = computed_fingerprint(self.files)
        if fp is not None and fp != meta.get("fingerprint"):
            self.add(
                "fingerprint_stale",
                f"the files give {fp}, case.json says "
                f"{meta.get('fingerprint')}; run `threads-cases fmt`",
                self.path / "case.json",
                "/fingerprint",
            )
