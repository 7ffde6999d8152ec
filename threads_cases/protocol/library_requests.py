"""The driver requests of the runtime library's own APIs (spec/driver-protocol.md 2.8-2.12,
capability ``"library"``): ``secrets`` (find and redact credentials), ``open_case`` (the case
loader's first problem), ``draft`` (the drafted matchers of a turn), ``thread_program`` (turns,
forks, snapshots and restores through the Thread API) and ``save_case`` (the save API writing a
case folder). Each takes a request already checked against its schema and gives the body of its
``ok`` answer; a refusal raises ``CaseError`` with the refusal's code and hint.
"""

from __future__ import annotations

import base64
import hashlib
from pathlib import Path
from typing import Any

from ..core.errors import CaseError
from ..core.log import encode_log

#: The commands of this module, in the order of driver-protocol.md section 2.
LIBRARY_COMMANDS = ("secrets", "open_case", "draft", "thread_program", "save_case")


def secrets_request(message: dict[str, Any]) -> dict[str, Any]:
    """``{"text"}``: ``{"findings": [kind, ...], "redacted": str}``; ``{"value"}``:
    ``{"findings": [{"kind", "pointer"}], "redacted": value}``; ``{"bytes_base64"}``:
    ``{"findings": [{"kind", "view"}], "redacted_base64"}`` (case-format.md section 10)."""
    from ..case import secrets
    from .request_values import decode_base64

    if "text" in message:
        text = message["text"]
        return {"findings": secrets.kinds_in(text), "redacted": secrets.redact_text(text)}
    if "value" in message:
        value = message["value"]
        found = [{"kind": k, "pointer": p} for k, p in secrets.find_in_value(value)]
        return {"findings": found, "redacted": secrets.redact_value(value)}
    data = decode_base64(message["bytes_base64"], "/bytes_base64")
    views = [{"kind": k, "view": v} for v, k in secrets.scan_bytes(data)]
    out = base64.b64encode(secrets.redact_bytes(data)).decode()
    return {"findings": views, "redacted_base64": out}


def open_case_request(message: dict[str, Any]) -> dict[str, Any]:
    """``{"name", "problem": null}`` for a case that opens, else ``{"name": null, "problem":
    {"code", "message", "hint", "file", "line", "pointer"}}``: the first problem that stops it
    (case-format.md section 8), ``file`` as the loader names it (under ``path``)."""
    from ..case.loader import open_case

    try:
        case = open_case(message["path"])
    except CaseError as err:
        if err.code not in ("case_invalid", "format_unsupported", "dialect_unknown", "log_invalid"):
            raise
        loc = err.location
        problem = {
            "code": err.code,
            "message": err.message,
            "hint": err.hint,
            "file": loc.file,
            "line": loc.line,
            "pointer": loc.pointer,
        }
        return {"name": None, "problem": problem}
    return {"name": case.name, "problem": None}


def draft_request(message: dict[str, Any]) -> dict[str, Any]:
    """``{"saved": {"must", "expect"}, "warnings": [line, ...]}``: what a save of the turn
    ``events`` with the matchers ``given`` and ``draft`` (null: left out) writes and says
    (case-format.md 5.12)."""
    from ..case.directory import CaseExpectation
    from ..case.save import drafted

    given = message["given"]
    exp, notes = drafted(
        message["events"],
        CaseExpectation(given.get("must", []), given.get("expect", [])),
        message.get("draft"),
    )
    return {"saved": {"must": exp.must, "expect": exp.expect}, "warnings": notes}


def thread_program_request(message: dict[str, Any]) -> dict[str, Any]:
    """``{"threads": [{"event_ids", "log_sha256"}, ...]}``: the program ``ops`` recorded
    through the Thread API (thread-log.md 9.2; conformance.md 2.9), the first thread made by
    ``create`` and each fork appended; a ``snapshot`` op answers ``snapshot_ids`` in order."""
    from ..reference.agent import AgentSpec
    from ..reference.model import ScriptedModel
    from ..reference.runtime import Clock
    from ..reference.sandbox import FakeSandbox
    from ..reference.thread import Thread

    threads = [
        Thread.create(
            agent=AgentSpec.from_json(message["agent"]),
            sandbox=FakeSandbox(message["files"]),
            thread_id=message["thread_id"],
            clock=Clock(message["clock_start_ms"]),
        )
    ]
    snapshots: list[str] = []
    for i, op in enumerate(message["ops"]):
        if not 0 <= op["thread"] < len(threads):
            raise CaseError("invalid_request", "no such thread", pointer=f"/ops/{i}/thread")
        t = threads[op["thread"]]
        if op["op"] == "turn":
            t.run_turn(op["text"], ScriptedModel(op["replies"]))
        elif op["op"] == "fork":
            threads.append(t.fork(op["at"], branch_id=op["branch_id"]))
        elif op["op"] == "snapshot":
            snapshots.append(t.snapshot())
        else:
            t.restore(op["snapshot_id"])
    out = [
        {
            "event_ids": [e["event_id"] for e in t.events],
            "log_sha256": hashlib.sha256(encode_log(t.events)).hexdigest(),
        }
        for t in threads
    ]
    return {"threads": out, "snapshot_ids": snapshots}


def save_case_request(message: dict[str, Any]) -> dict[str, Any]:
    """``{"path", "warnings"}``: the save API (case-format.md section 5) writing the turn
    after ``at`` of ``thread.log`` as ``dir/name``, unverified, with the options given (each
    absent one at its default). A refusal raises its ``CaseError`` (code and hint)."""
    from ..case.artifacts import ArtifactStore
    from ..case.layout import decode_artifacts
    from ..case.save import save_case
    from ..reference.sandbox import FakeSandbox

    thread = message["thread"]
    options = {k: message[k] for k in ("external_effects", "dialects", "secrets") if k in message}
    r = save_case(
        thread["log"],
        sandbox=FakeSandbox({}),
        store=ArtifactStore(decode_artifacts(thread.get("artifacts"))),
        name=message["name"],
        expect=message.get("expect"),
        at=message["at"],
        dir=Path(message["dir"]),
        verify=False,
        draft=message.get("draft"),
        **options,
    )
    if not r.ok:
        assert r.error is not None
        raise CaseError(r.error.code, r.error.message, hint=r.error.hint)
    assert r.value is not None
    return {"path": str(r.value.path), "warnings": list(r.warnings)}


HANDLERS = {
    "secrets": secrets_request,
    "open_case": open_case_request,
    "draft": draft_request,
    "thread_program": thread_program_request,
    "save_case": save_case_request,
}
