"""The files of a case, built from a recorded thread (spec/case-format.md section 3): the
turn after the fork point, the recording parts the replay consumes (model replies with their
request records, stubs, sandbox reads, an interruption), the logs and expected states in each
dialect, and case.json with its fingerprint, all as canonical bytes. :mod:`.save` checks and
writes them.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from typing import Any

from .._version import __version__
from ..core.canonical import canonical_document, canonical_line
from ..core.dialects import get_dialect
from ..core.errors import CaseError
from ..core.files import check_recording_bytes, check_recording_entries
from ..core.log import encode_log
from ..core.reducer import Reducer
from ..core.texts import quote
from ..core.timestamps import check_fork_room
from .artifacts import ArtifactStore
from .directory import (
    CASE_FORMAT,
    DEFAULT_DIALECTS,
    RECORDING_FORMAT,
    CaseExpectation,
    finish_case_files,
)
from .requests import delta_records, turn_requests

TERMINAL = ("turn_completed", "turn_failed")


def split_turn(events: Sequence[dict[str, Any]], at: str) -> tuple[int, list[dict[str, Any]]]:
    """Index of ``at`` and the turn events after it (user_message .. terminal event).
    Raises ``event_not_found``, ``no_turn_after_fork``, ``turn_incomplete``."""
    idx = next((i for i, e in enumerate(events) if e["event_id"] == at), None)
    if idx is None:
        raise CaseError("event_not_found", f"event {quote(at)} is not in the log")
    rest = [e for e in events[idx + 1 :] if not e["type"].startswith("x_")]
    if not rest or rest[0]["type"] != "user_message":
        what = f"the next event is {rest[0]['type']}" if rest else "the log ends there"
        raise CaseError("no_turn_after_fork", f"no user input follows {quote(at)}: {what}")
    turn: list[dict[str, Any]] = [rest[0]]
    turn_id = None
    for e in rest[1:]:
        if turn_id is None:
            if e["type"] != "turn_started":
                raise CaseError(
                    "turn_incomplete",
                    f"the user input after {quote(at)} starts no turn (next: {e['type']})",
                )
            turn_id = e["data"]["turn_id"]
        turn.append(e)
        if e["type"] in TERMINAL and e["data"].get("turn_id") == turn_id:
            return idx, turn
    raise CaseError(
        "turn_incomplete", f"the turn after {quote(at)} has no turn_completed or turn_failed"
    )


INTERRUPTION_POINTS = (
    "turn_started",
    "model_requested",
    "model_responded",
    "tool_called",
    "tool_result",
)


def interruption_of(turn: list[dict[str, Any]]) -> dict[str, Any] | None:
    """model.json's ``interruption`` for a turn that ended in ``turn_failed``
    (case-format.md 3.4.1): ``{"after": <type>, "index": n, "error": {code, message}}``
    where the last event of the turn before its end whose type is one of
    :data:`INTERRUPTION_POINTS` is the ``n``-th (from 0) of its type in the turn. ``None``
    for a completed turn."""
    end = turn[-1]
    if end["type"] != "turn_failed":
        return None
    last = next(e for e in reversed(turn[:-1]) if e["type"] in INTERRUPTION_POINTS)
    index = sum(1 for e in turn if e["type"] == last["type"]) - 1  # it is the last of its type
    error = end["data"]["error"]
    return {
        "after": last["type"],
        "index": index,
        "error": {"code": error["code"], "message": error.get("message", "")},
    }


def recorded_parts(turn: Sequence[dict[str, Any]], agent: dict[str, Any] | None) -> dict[str, Any]:
    """model.json replies, stubs.json calls and sandbox.json reads of a turn (canonical events
    from its user_message on): ``{"replies", "calls", "reads"}``. Also used by ``accept``,
    which rebuilds them from a replayed turn."""
    replies, calls, reads = [], [], []
    last_sha = None
    external = {t["name"] for t in (agent or {}).get("tools", []) if t["kind"] == "external"}
    called: dict[str, dict[str, Any]] = {}
    written: set[str] = set()
    seen_reads: set[tuple[str, str]] = set()
    for e in turn:
        t, d = e["type"], e["data"]
        if t == "model_requested":
            last_sha = d["request_sha256"]
        elif t == "model_responded":
            replies.append(
                {
                    "request_sha256": last_sha or "0" * 64,
                    "message": d["message"],
                    "stop_reason": d["stop_reason"],
                    "usage": d["usage"],
                }
            )
        elif t == "tool_called":
            called[d["tool_use_id"]] = d
        elif t == "tool_result":
            call = called.get(d["tool_use_id"])
            if call is not None and call["kind"] == "external" and call["name"] in external:
                calls.append(
                    {
                        "tool": call["name"],
                        "input": call["input"],
                        "result": {"content": d["content"], "is_error": d["is_error"]},
                    }
                )
        elif t == "sandbox_wrote":
            written.add(d["path"])
        elif t == "sandbox_read" and d["path"] not in written:
            key = (d["path"], d["sha256"])
            if key not in seen_reads:
                seen_reads.add(key)
                reads.append({"path": d["path"], "sha256": d["sha256"], "artifact": d["artifact"]})
    return {"replies": replies, "calls": calls, "reads": reads}


def _artifact_ids(events: Sequence[dict[str, Any]], reads: list[dict[str, Any]]) -> set[str]:
    ids = {r["artifact"] for r in reads if r["artifact"]}
    for e in events:
        d = e["data"]
        if e["type"] == "artifact_added":
            ids.add(d["artifact_id"])
        elif e["type"] in ("sandbox_read", "sandbox_wrote") and d.get("artifact"):
            ids.add(d["artifact"])
    return ids


def _hash_only_ids(state: dict[str, Any], reads: list[dict[str, Any]]) -> set[str]:
    """The sandbox files a replay starts with (prefix files and the turn's reads) that the
    log knows by sha256 only: their bytes go into artifacts/ when known (case-format.md
    3.7), else the replay holds them as hash-only entries (replay.md 2.3)."""
    shas = {sha for sha in state["sandbox"]["files"].values() if sha}
    shas |= {r["sha256"] for r in reads if r["artifact"] is None}
    return {"sha256:" + sha for sha in shas}


def _check_turn_end(end: dict[str, Any], at: str) -> None:
    """Refuse a turn the runtime stopped on a value a log cannot hold: the recording is
    missing that value, so the case could never replay the turn (``unsafe_value``)."""
    if end["type"] == "turn_failed" and end["data"]["error"].get("code") == "unsafe_value":
        raise CaseError(
            "unsafe_value",
            f"the turn after {quote(at)} stopped on a value that cannot "
            f"be recorded: {end['data']['error'].get('message', '')}",
        )


def _prefix_state(prefix: Sequence[dict[str, Any]], at: str) -> dict[str, Any]:
    """The reduced state at the fork point; ``turn_incomplete`` with tool calls in flight."""
    reducer = Reducer()
    for e in prefix:
        reducer.apply(e)
    state = reducer.state
    if state["pending_tool_calls"]:
        raise CaseError(
            "turn_incomplete",
            f"tool calls are in flight at {quote(at)}: {quote(state['pending_tool_calls'])}",
        )
    return state


def _attach_requests(
    rec: dict[str, Any],
    events: Sequence[dict[str, Any]],
    prefix: list[dict[str, Any]],
    idx: int,
    turn: list[dict[str, Any]],
) -> None:
    """Give each recorded reply the request record a run compares a diverged request with."""
    # the turn's events with its extension events, so the reducer sees every seq
    last_i = next(i for i, e in enumerate(events) if e["event_id"] == turn[-1]["event_id"])
    raw_turn = list(events[idx + 1 : last_i + 1])
    for reply, record in zip(
        rec["replies"], delta_records(turn_requests(prefix, raw_turn)), strict=False
    ):
        reply["request"] = record


def _check_expectations(
    expect: CaseExpectation, turn: list[dict[str, Any]], calls: list[Any], external_effects: str
) -> None:
    """``invalid_request`` when the recorded turn could not pass its own case."""
    from ..core.matchers import explain, find_all

    if external_effects == "forbid" and calls:
        names = sorted({c["tool"] for c in calls})
        raise CaseError(
            "invalid_request",
            f"external_effects is 'forbid' but the turn called external tools: {quote(names)}",
        )
    hits = find_all(expect.must, turn)
    for i, hit in enumerate(hits):
        if hit is None:
            raise CaseError(
                "invalid_request", f"must[{i}] cannot pass: {explain(expect.must[i], turn)}"
            )


def _dialect_files(
    files: dict[str, bytes],
    prefix: list[dict[str, Any]],
    state: dict[str, Any],
    dialects: Sequence[str],
) -> None:
    """``log.<dialect>.jsonl`` and ``expected.<dialect>.json`` for each dialect."""
    for dialect in dialects:
        d = get_dialect(dialect)
        files[f"log.{dialect}.jsonl"] = encode_log(prefix, dialect=d)
        files[f"expected.{dialect}.json"] = canonical_document(d.encode_state(state))


def _recording_files(
    files: dict[str, bytes], rec: dict[str, Any], turn: list[dict[str, Any]]
) -> None:
    """model.json, stubs.json and sandbox.json; ``case_too_large`` past 100,000 entries (8.4)."""
    model_doc: dict[str, Any] = {"format": RECORDING_FORMAT, "replies": rec["replies"]}
    interruption = interruption_of(turn)
    if interruption is not None:
        model_doc["interruption"] = interruption
    recordings = {
        "model.json": model_doc,
        "stubs.json": {"format": RECORDING_FORMAT, "calls": rec["calls"]},
        "sandbox.json": {"format": RECORDING_FORMAT, "reads": rec["reads"]},
    }
    for rel, doc in recordings.items():
        check_recording_entries(rel, doc)
        files[rel] = canonical_document(doc)
        check_recording_bytes(rel, files[rel])  # before the artifacts are read (8.4)


def _artifact_files(
    files: dict[str, bytes],
    prefix: list[dict[str, Any]],
    state: dict[str, Any],
    reads: list[dict[str, Any]],
    store: ArtifactStore,
) -> None:
    """``artifacts/<hex>``: every artifact the log refers to (``invalid_request`` when one
    is not in ``store``), and the bytes of hash-only files when known."""
    for aid in sorted(_artifact_ids(prefix, reads)):
        data = store.get(aid)
        if data is None:
            raise CaseError(
                "invalid_request",
                f"artifact {aid} referred to by the log is not available",
                hint="pass the folder holding the artifacts with --artifacts DIR",
            )
        files[f"artifacts/{aid.removeprefix('sha256:')}"] = data
    for aid in sorted(_hash_only_ids(state, reads)):
        data = store.get(aid)
        if data is not None:
            files[f"artifacts/{aid.removeprefix('sha256:')}"] = data


def _case_meta(
    *,
    name: str,
    turn: list[dict[str, Any]],
    expect: CaseExpectation,
    at: str,
    external_effects: str,
    dialects: Sequence[str],
    portable: bool,
    agent_doc: dict[str, Any] | None,
) -> dict[str, Any]:
    """case.json without its fingerprint (spec/case-format.md 3.1)."""
    return {
        "format": CASE_FORMAT,
        "name": name,
        "input": turn[0]["data"]["content"],
        "expect": expect.to_json(),
        "at": at,
        "external_effects": external_effects,
        "dialects": list(dialects),
        "portable": portable,
        "agent": agent_summary(agent_doc),
        "created_with": {"tool": "threads-cases", "version": __version__},
    }


def agent_summary(agent: dict[str, Any] | None) -> dict[str, Any]:
    """case.json's ``agent`` (spec/case-format.md 3.1) for an agent JSON ``{name, model,
    system, tools}`` (``None``: no agent): its name and model, the SHA-256 of its system
    prompt, and each tool's name, kind, effect and the SHA-256 of its definition."""
    agent = agent or {"name": "", "model": "", "system": "", "tools": []}
    return {
        "name": agent["name"],
        "model": agent["model"],
        "system_sha256": hashlib.sha256(agent["system"].encode("utf-8")).hexdigest(),
        "tools": [
            {
                "name": t["name"],
                "kind": t["kind"],
                "effect": t["effect"],
                # the tool's definition, never its code (spec/case-format.md 3.1)
                "sha256": hashlib.sha256(canonical_line(t)).hexdigest(),
            }
            for t in agent["tools"]
        ],
    }


def build_case_files(
    *,
    events: Sequence[dict[str, Any]],
    name: str,
    expect: CaseExpectation,
    at: str,
    external_effects: str,
    portable: bool,
    store: ArtifactStore,
    dialects: Sequence[str] = DEFAULT_DIALECTS,
) -> tuple[dict[str, bytes], dict[str, Any]]:
    """Every file of a case, as canonical bytes, and its case.json (spec/case-format.md).

    ``events`` are canonical envelopes (already checked). Raises ``CaseError`` with the
    refusal codes of this module.
    """
    idx, turn = split_turn(events, at)
    check_fork_room(events[idx]["ts"], at)
    _check_turn_end(turn[-1], at)
    prefix = list(events[: idx + 1])
    state = _prefix_state(prefix, at)
    rec = recorded_parts(turn, state["agent"])
    _attach_requests(rec, events, prefix, idx, turn)
    _check_expectations(expect, turn, rec["calls"], external_effects)
    files: dict[str, bytes] = {}
    _dialect_files(files, prefix, state, dialects)
    _recording_files(files, rec, turn)
    _artifact_files(files, prefix, state, rec["reads"], store)
    meta = _case_meta(
        name=name,
        turn=turn,
        expect=expect,
        at=at,
        external_effects=external_effects,
        dialects=dialects,
        portable=portable,
        agent_doc=state["agent"],
    )
    files = finish_case_files(meta, files)
    from ..core.strictjson import parse

    return files, parse(files["case.json"])
