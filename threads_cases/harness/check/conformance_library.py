"""The conformance areas of the runtime library's own APIs, sent as the requests of
driver-protocol.md 2.8-2.13 to an implementation announcing ``"library"``
(spec/conformance.md 2.6, 2.7, 2.8, 2.9, 2.11, 2.15): ``secrets/``, ``case-errors/``,
``thread-api/``, ``save-errors/``, ``drafts/`` and ``divergence/``.

Each runner takes a test (a file's document, or an entry of a listed file), the implementation
and the test file's path, and gives one :class:`~threads_cases.harness.run.runner.Check`
(``outcome_differs`` when the answer is not the test's); an implementation without the
capability, or a driver failure, raises ``CaseError`` (the test is then ``error``).
"""

from __future__ import annotations

import os
import re
import shutil
import tempfile
from pathlib import Path
from typing import Any

from ...core.canonical import canonical_line
from ...core.errors import CaseError
from ...core.strictjson import parse
from ...protocol.client import Implementation
from .checks import Check
from .conformance_turns import DRIVER_FAULTS


def need_capability(impl: Implementation, capability: str, cmd: str) -> None:
    """Raise ``CaseError("invalid_request")`` unless ``impl`` announces ``capability``: the
    test is then ``error`` and ``cmd`` is never sent (spec/conformance.md 5.1)."""
    if capability not in (impl.hello().get("capabilities") or []):
        raise CaseError(
            "invalid_request",
            f"{impl.name} does not announce the {capability} capability (driver-protocol.md "
            f"section 2), so it is not sent {cmd!r}",
        )


def _ask(impl: Implementation, message: dict[str, Any]) -> dict[str, Any]:
    """Send a library request to a driver announcing its capability: ``replay`` for
    ``open_case`` (a replayer's case loader), ``library`` for the others."""
    cmd = message["cmd"]
    need_capability(impl, "replay" if cmd == "open_case" else "library", cmd)
    return impl.request(message)


def _same(check: str, got: Any, want: Any) -> Check:
    """``pass`` when ``got`` and ``want`` are the same canonical JSON, else ``outcome_differs``."""
    if canonical_line(got) == canonical_line(want):
        return Check(check, "pass")
    shown = (
        f"got {canonical_line(got).decode()[:900]}, expected {canonical_line(want).decode()[:900]}"
    )
    return Check(check, "fail", shown, "outcome_differs")


def secrets_test(doc: dict[str, Any], impl: Implementation, _path: Path) -> Check:
    """A ``secrets/`` test: the findings and the redaction of its text, value or bytes (the
    redaction is all or nothing: redacting the redacted finds nothing more)."""
    key = next(k for k in ("text", "value", "bytes_base64") if k in doc)
    out = _ask(impl, {"cmd": "secrets", key: doc[key]})
    redacted = "redacted_base64" if key == "bytes_base64" else "redacted"
    got = {"findings": out["findings"], redacted: out.get(redacted)}
    check = _same("secrets", got, {"findings": doc["findings"], redacted: doc[redacted]})
    if check.result != "pass":
        return check
    again = _ask(impl, {"cmd": "secrets", key: doc[redacted]})
    return _same("secrets", again["findings"], [])


def build_case(doc: dict[str, Any], suite: Path, root: Path) -> Path:
    """A case-errors test's case directory under ``root``: its base case from ``cases/`` with
    the files replaced (a string), removed (null) or made a folder or a symlink."""
    path: Path = root / str(doc["base"])
    shutil.copytree(suite / "cases" / path.name, path)
    for rel, body in doc["files"].items():
        if isinstance(body, dict):
            (path / rel).unlink(missing_ok=True)
            if body["kind"] == "folder":
                (path / rel).mkdir()
            else:
                os.symlink(body["target"], path / rel)
        elif body is None:
            (path / rel).unlink()
        else:
            (path / rel).parent.mkdir(parents=True, exist_ok=True)
            (path / rel).write_bytes(body.encode("utf-8"))
    return path


def case_errors_test(doc: dict[str, Any], impl: Implementation, path: Path) -> Check:
    """A ``case-errors/`` test: the first problem opening the case gives (code, file relative
    to the case, line, pointer; message and hint where the test pins them), or none."""
    want = doc["error"]
    with tempfile.TemporaryDirectory(prefix="threads-cases-case-errors-") as tmp:
        try:
            case = build_case(doc, path.parent.parent, Path(tmp))
        except OSError as exc:  # a symlink this system will not make (Windows, no privilege)
            raise CaseError("io_error", f"cannot build the test's case here: {exc}") from None
        out = _ask(impl, {"cmd": "open_case", "path": str(case)})
        if "replay_refused_in" in doc:
            replayed = _replay_refusal(doc, impl, case)
            if replayed.result != "pass":
                return replayed
        problem = out["problem"]
        if problem is None:
            return _same("problem", None if out["name"] == doc["base"] else out, want)
        file = problem["file"]
        rel = Path(file).relative_to(case).as_posix() if file else None
        got = {"code": problem["code"], "file": "" if rel == "." else rel}
        got.update(line=problem["line"], pointer=problem["pointer"])
        if want is not None and "message" in want:
            got.update(message=problem["message"], hint=problem["hint"])
        return _same("problem", got, want)


def _replay_refusal(doc: dict[str, Any], impl: Implementation, case: Path) -> Check:
    """A case-errors test's ``replay_refused_in`` (spec/conformance.md 2.7): a ``replay`` of
    the case by an implementation of a listed dialect is refused with the test's code; by one
    of another dialect it is not refused (only its own log is checked: replay.md 2.1 step 1)."""
    want = doc["error"]["code"] if impl.dialect in doc["replay_refused_in"] else None
    try:
        impl.request({"cmd": "replay", "case": {"path": str(case)}})
        got = None
    except CaseError as err:
        got = err.code
    return _same("replay", got, want)


def thread_api_test(doc: dict[str, Any], impl: Implementation, path: Path) -> Check:
    """A ``thread-api/`` entry: the event ids and log hash of every thread its program makes,
    and the id of each snapshot it takes."""
    agent = parse(path.read_bytes())["agent"]
    keys = ("thread_id", "clock_start_ms", "files")
    # a snapshot op's snapshot_id is what the test expects it to give: answered, not sent
    ops = [
        {k: v for k, v in op.items() if op["op"] != "snapshot" or k != "snapshot_id"}
        for op in doc["ops"]
    ]
    message = {"cmd": "thread_program", "agent": agent, "ops": ops, **{k: doc[k] for k in keys}}
    out = _ask(impl, message)
    snaps = [op["snapshot_id"] for op in doc["ops"] if op["op"] == "snapshot"]
    got = {"threads": out["threads"], "snapshot_ids": out["snapshot_ids"]}
    return _same("threads", got, {"threads": doc["threads"], "snapshot_ids": snaps})


def _save(doc: dict[str, Any], work: Path, options: dict[str, Any]) -> dict[str, Any]:
    message = {
        "cmd": "save_case",
        "thread": {"log": doc["log"], "artifacts": doc["artifacts"]},
        "name": doc["name"],
        "at": doc["at"],
        "dir": str(work / "cases"),
        **options,
    }
    return message


def save_errors_test(doc: dict[str, Any], impl: Implementation, _path: Path) -> Check:
    """A ``save-errors/`` test: the save refused with the test's code and hint (after a first
    save with no options when ``existing``)."""
    need_capability(impl, "library", "save_case")  # before the refusals are read as the test's
    with tempfile.TemporaryDirectory(prefix="threads-cases-save-errors-") as tmp:
        if doc["existing"]:
            _ask(impl, _save(doc, Path(tmp), {}))  # must succeed: a refusal is the test's error
        try:
            out = _ask(impl, _save(doc, Path(tmp), dict(doc["options"])))
        except CaseError as err:
            if err.code in DRIVER_FAULTS:
                raise
            return _same("error", {"code": err.code, "hint": err.hint}, doc["error"])
    return Check("error", "fail", f"saved as {out['path']}, expected a refusal", "not_refused")


def drafts_test(doc: dict[str, Any], impl: Implementation, _path: Path) -> Check:
    """A ``drafts/`` entry: the expectation saved and the lines said, ``{skip}`` in a line
    standing for the language's spelling of draft false (any text without a space)."""
    out = _ask(
        impl,
        {"cmd": "draft", "events": doc["events"], "given": doc["given"], "draft": doc["draft"]},
    )
    check = _same("saved", out["saved"], doc["saved"])
    if check.result != "pass":
        return check
    lines = out["warnings"]
    patterns = [
        re.compile("".join(re.escape(p) if p != "{skip}" else r"\S.*?" for p in _parts(w)))
        for w in doc["warnings"]
    ]
    if len(lines) == len(patterns) and all(
        p.fullmatch(x) for p, x in zip(patterns, lines, strict=True)
    ):
        return Check("warnings", "pass")
    return Check(
        "warnings", "fail", f"said {lines!r}, expected {doc['warnings']!r}", "outcome_differs"
    )


def _parts(line: str) -> list[str]:
    return [p for p in re.split(r"(\{skip\})", line) if p]


def divergence_test(doc: dict[str, Any], impl: Implementation, _path: Path) -> Check:
    """A ``divergence/`` test: the first divergence of its replay (prefix, replayed events and
    request hashes) from its recorded replies, the same canonical JSON as the test's (null
    when the replay asks what was recorded; reports.md 7.4)."""
    out = _ask(
        impl,
        {
            "cmd": "divergence",
            "prefix": doc["prefix"],
            "events": doc["events"],
            "replies": doc["replies"],
            "requests": doc["requests"],
        },
    )
    return _same("divergence", out["divergence"], doc["divergence"])
