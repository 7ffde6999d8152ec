"""The conformance area of saves sent as ``write_case`` requests (spec/conformance.md 2.10):
``sandbox-bytes/``, a log knowing sandbox files by sha256 only saved with ``sandbox_dir`` a
folder built from the test, and the artifacts the case then holds, the files it leaves
hash-only, or the refusal (code, the end of its message, its hint: driver-protocol.md 1.3).

The runner takes a test's document, the implementation and the test file's path and gives one
:class:`~threads_cases.harness.run.runner.Check`; a driver that cannot carry the request out raises
``CaseError`` (the test is then ``error``).
"""

from __future__ import annotations

import base64
import os
import tempfile
from pathlib import Path
from typing import Any

from ...core.errors import CaseError
from ...core.strictjson import parse
from ...protocol.client import Implementation
from .checks import Check
from .conformance_library import need_capability
from .conformance_turns import DRIVER_FAULTS


def entry_bytes(entry: dict[str, str]) -> bytes:
    """A folder entry's bytes: ``{"text"}`` (UTF-8) or ``{"base64"}``."""
    return entry["text"].encode() if "text" in entry else base64.b64decode(entry["base64"])


def lay_out(doc: dict[str, Any], work: Path) -> Path:
    """``work/box`` holding the test's folder (not made when ``folder`` is null), and its
    ``outside`` files in ``work`` beside it; returns ``work/box``."""
    box = work / "box"
    for name, entry in doc["outside"].items():
        (work / name).write_bytes(entry_bytes(entry))
    if doc["folder"] is None:
        return box
    box.mkdir()
    for rel, entry in doc["folder"].items():
        target = box / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        if "symlink" in entry:
            os.symlink(entry["symlink"], target)
        else:
            target.write_bytes(entry_bytes(entry))
    return box


def stored(files: dict[str, bytes]) -> dict[str, Any]:
    """What a saved case's files hold: its artifacts (sha256 hex, sorted), and the paths of
    the files the replay starts with (the expected state's files and ``sandbox.json``'s reads)
    whose bytes it lacks (sorted)."""
    arts = sorted(p.split("/", 1)[1] for p in files if p.startswith("artifacts/"))
    state = parse(files["expected.threads-py.json"])
    reads = parse(files["sandbox.json"])["reads"]
    pairs = list(state["sandbox"]["files"].items()) + [(r["path"], r["sha256"]) for r in reads]
    return {"artifacts": arts, "hash_only": sorted({p for p, sha in pairs if sha not in arts})}


def sandbox_bytes_outcome(doc: dict[str, Any], impl: Implementation) -> dict[str, Any]:
    """``{"saved": stored(files)}`` or ``{"error": {"code", "message", "hint"}}``: the test's
    thread written as case ``c`` by a ``write_case`` request with ``sandbox_dir`` its folder
    (driver-protocol.md 2.6)."""
    need_capability(impl, "write_case", "write_case")  # before refusals count as the test's
    with tempfile.TemporaryDirectory(prefix="threads-cases-sandbox-bytes-") as tmp:
        box = lay_out(doc, Path(tmp))
        message = {
            "cmd": "write_case",
            "thread": {"log": doc["log"], "artifacts": doc["artifacts"]},
            "name": "c",
            "at": doc["at"],
            "expect": {},
            "external_effects": "stub",
            "secrets": doc["secrets"],
            "sandbox_dir": str(box),
        }
        try:
            answer = impl.request(message)
        except CaseError as err:
            if err.code in DRIVER_FAULTS:
                raise
            return {"error": {"code": err.code, "message": err.message, "hint": err.hint}}
    files = {k: base64.b64decode(v) for k, v in answer["files"].items()}
    return {"saved": stored(files)}


def sandbox_bytes_test(doc: dict[str, Any], impl: Implementation, _path: Path) -> Check:
    """A ``sandbox-bytes/`` test: what is stored, or the refusal's code, message end, hint."""
    got = sandbox_bytes_outcome(doc, impl)
    if "saved" in doc:
        if got == {"saved": doc["saved"]}:
            return Check("saved", "pass")
        return Check(
            "saved", "fail", f"got {got!r}, expected {doc['saved']!r}"[:2000], "outcome_differs"
        )
    want = doc["error"]
    err = got.get("error")
    if (
        err is not None
        and err["code"] == want["code"]
        and err["message"].endswith(want["message_end"])
        and err["hint"] == want["hint"]
    ):
        return Check("error", "pass", f"refused with {want['code']}")
    return Check(
        "error", "fail", f"got {got!r}, expected the refusal {want!r}"[:2000], "outcome_differs"
    )
