"""Saving a turn as a case (spec/case-format.md, section 3): ``save_case`` and its refusals.

The case is the log up to and including the fork point ``at``, the next user input after it
and the turn that input started. A refusal never raises: it comes back as
``SaveResult(ok=False, error=SaveError(code, message))`` with one of the codes
``invalid_request``, ``event_not_found``, ``no_turn_after_fork``, ``turn_incomplete``,
``egress_policy_unsupported``, ``case_exists``, ``log_invalid``, ``unsafe_value``,
``secret_detected``, ``case_too_large``, ``replay_failed``.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .._version import __version__
from ..core.dialects import get_dialect
from ..core.errors import CaseError
from ..core.log import encode_log
from ..core.reducer import Reducer
from ..core.strictjson import canonical_document
from ..core.texts import quote
from ..core.timestamps import check_fork_room
from ..reference.runtime import ArtifactStore
from ..reference.sandbox import SandboxProvider
from .directory import (
    CASE_FORMAT,
    DEFAULT_IMPLEMENTATIONS,
    CaseExpectation,
    check_case_name,
    finish_case_files,
)
from .requests import delta_records, turn_requests
from .writer import write_case_dir

TERMINAL = ("turn_completed", "turn_failed")
MAX_CASE_BYTES = 512 * 1024 * 1024
SECRETS_MODES = ("refuse", "redact", "allow")
NOT_VERIFIED_WARNING = (
    "warning: --no-verify: the case was not replayed before it was written; its first run may fail"
)


@dataclass(frozen=True)
class SavedCase:
    """Where a case was saved: ``path``, ``portable``, ``fingerprint`` ("sha256:<hex>") and
    ``outcome`` ("created", "unchanged" or "replaced")."""

    path: Path
    portable: bool
    fingerprint: str
    outcome: str = "created"
    #: False when the save was asked not to replay the case first (``verify=False``)
    verified: bool = True
    #: model requests of the turn whose recorded request_sha256 is not the hash of the
    #: request the reducer builds: ``{"event_id", "index", "recorded", "computed"}``
    request_mismatches: tuple[dict[str, Any], ...] = ()


@dataclass(frozen=True)
class SaveError:
    """A refusal: ``code`` (a reason code), ``message`` (one sentence, never a secret value)
    and ``hint`` (one line saying what to do)."""

    code: str
    message: str
    hint: str = ""


@dataclass(frozen=True)
class SaveResult:
    """``ok`` and either ``value`` (:class:`SavedCase`) or ``error`` (:class:`SaveError`)."""

    ok: bool
    value: SavedCase | None = None
    error: SaveError | None = None
    #: lines for the user (drafted matchers, a skipped verification, request mismatches)
    warnings: tuple[str, ...] = ()

    def to_json(self) -> dict[str, Any]:
        if self.ok and self.value is not None:
            return {
                "ok": True,
                "path": str(self.value.path),
                "portable": self.value.portable,
                "fingerprint": self.value.fingerprint,
                "outcome": self.value.outcome,
                "verified": self.value.verified,
                "request_mismatches": list(self.value.request_mismatches),
                "warnings": list(self.warnings),
            }
        assert self.error is not None
        return {"ok": False, "code": self.error.code, "message": self.error.message}


def _expectation(expect: Any) -> CaseExpectation:
    from ..core.matchers import validate_matcher

    if expect is None:
        return CaseExpectation()
    if isinstance(expect, dict):
        expect = CaseExpectation(list(expect.get("must", [])), list(expect.get("expect", [])))
    if not isinstance(expect, CaseExpectation):
        raise CaseError(
            "invalid_request", "expect must be a CaseExpectation(must=[...], expect=[...])"
        )
    must = [validate_matcher(m, pointer=f"/must/{i}") for i, m in enumerate(expect.must)]
    exp = [validate_matcher(m, pointer=f"/expect/{i}") for i, m in enumerate(expect.expect)]
    return CaseExpectation(must, exp)


def _implementations(implementations: Any) -> list[str]:
    """The case's implementations: a non-empty list of distinct dialect names (case.json
    requires minItems 1 and uniqueItems; a case without them could never be loaded)."""
    if isinstance(implementations, str) or not isinstance(implementations, Sequence):
        raise CaseError("invalid_request", "implementations must be a list of names")
    impls = list(implementations)
    if not impls:
        raise CaseError("invalid_request", "implementations must name at least one implementation")
    if len(set(impls)) != len(impls):
        raise CaseError("invalid_request", f"implementations {quote(impls)} repeat a name")
    for impl in impls:
        if not isinstance(impl, str):
            raise CaseError("invalid_request", f"implementation {quote(impl)} is not a name")
        get_dialect(impl)
    return impls


def _split_turn(events: Sequence[dict[str, Any]], at: str) -> tuple[int, list[dict[str, Any]]]:
    """Index of ``at`` and the turn events after it (user_message .. terminal event)."""
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


def build_case_files(
    *,
    events: Sequence[dict[str, Any]],
    name: str,
    expect: CaseExpectation,
    at: str,
    external_effects: str,
    portable: bool,
    store: ArtifactStore,
    implementations: Sequence[str] = DEFAULT_IMPLEMENTATIONS,
) -> tuple[dict[str, bytes], dict[str, Any]]:
    """Every file of a case, as canonical bytes, and its case.json (spec/case-format.md).

    ``events`` are canonical envelopes (already checked). Raises ``CaseError`` with the
    refusal codes of this module.
    """
    from ..core.matchers import explain, find_all

    idx, turn = _split_turn(events, at)
    check_fork_room(events[idx]["ts"], at)
    end = turn[-1]
    if end["type"] == "turn_failed" and end["data"]["error"].get("code") == "unsafe_value":
        # the runtime stopped the turn on a value a log cannot hold: the recording is
        # missing that value, so the case could never replay the turn
        raise CaseError(
            "unsafe_value",
            f"the turn after {quote(at)} stopped on a value that cannot "
            f"be recorded: {end['data']['error'].get('message', '')}",
        )
    prefix = list(events[: idx + 1])
    reducer = Reducer()
    for e in prefix:
        reducer.apply(e)
    state = reducer.state
    if state["pending_tool_calls"]:
        raise CaseError(
            "turn_incomplete",
            f"tool calls are in flight at {quote(at)}: {quote(state['pending_tool_calls'])}",
        )
    rec = recorded_parts(turn, state["agent"])
    # the turn's events with its extension events, so the reducer sees every seq
    last_i = next(i for i, e in enumerate(events) if e["event_id"] == turn[-1]["event_id"])
    raw_turn = list(events[idx + 1 : last_i + 1])
    for reply, record in zip(
        rec["replies"], delta_records(turn_requests(prefix, raw_turn)), strict=False
    ):
        reply["request"] = record  # what a run compares a diverged request with
    if external_effects == "forbid" and rec["calls"]:
        names = sorted({c["tool"] for c in rec["calls"]})
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
    files: dict[str, bytes] = {}
    for impl in implementations:
        d = get_dialect(impl)
        files[f"log.{impl}.jsonl"] = encode_log(prefix, dialect=d)
        files[f"expected.{impl}.json"] = canonical_document(d.encode_state(state))
    model_doc: dict[str, Any] = {"format": CASE_FORMAT, "replies": rec["replies"]}
    interruption = interruption_of(turn)
    if interruption is not None:
        model_doc["interruption"] = interruption
    files["model.json"] = canonical_document(model_doc)
    files["stubs.json"] = canonical_document({"format": CASE_FORMAT, "calls": rec["calls"]})
    files["sandbox.json"] = canonical_document({"format": CASE_FORMAT, "reads": rec["reads"]})
    for aid in sorted(_artifact_ids(prefix, rec["reads"])):
        data = store.get(aid)
        if data is None:
            raise CaseError(
                "invalid_request",
                f"artifact {aid} referred to by the log is not available",
                hint="pass the folder holding the artifacts with --artifacts DIR",
            )
        files[f"artifacts/{aid.removeprefix('sha256:')}"] = data
    for aid in sorted(_hash_only_ids(state, rec["reads"])):
        data = store.get(aid)
        if data is not None:
            files[f"artifacts/{aid.removeprefix('sha256:')}"] = data
    agent = state["agent"] or {"name": "", "model": "", "system": "", "tools": []}
    meta = {
        "format": CASE_FORMAT,
        "name": name,
        "input": turn[0]["data"]["content"],
        "expect": expect.to_json(),
        "at": at,
        "external_effects": external_effects,
        "implementations": list(implementations),
        "portable": portable,
        "agent": {
            "name": agent["name"],
            "model": agent["model"],
            "system_sha256": hashlib.sha256(agent["system"].encode("utf-8")).hexdigest(),
            "tools": [
                {"name": t["name"], "kind": t["kind"], "effect": t["effect"]}
                for t in agent["tools"]
            ],
        },
        "created_with": {"tool": "threads-cases", "version": __version__},
    }
    files = finish_case_files(meta, files)
    from ..core.strictjson import parse

    return files, parse(files["case.json"])


def _refuse_secrets(files: dict[str, bytes], *, redacted: bool = False) -> None:
    from .secrets import scan_files

    found = scan_files(files)
    if found:
        where = "; ".join(f"{f.kind} at {f.where()}" for f in found[:5])
        more = f" (and {len(found) - 5} more)" if len(found) > 5 else ""
        what = "redaction would leave" if redacted else "the case would hold"
        raise CaseError(
            "secret_detected",
            f"{what} values that look like credentials: {where}{more}",
            hint="pass --redact to replace them with stable placeholders, or --allow-secrets "
            "to save them knowingly"
            if not redacted
            else "a redaction is all or nothing: remove these values by hand (they may sit "
            "in --expect), or pass --allow-secrets",
        )


def check_case_files(files: dict[str, bytes], secrets: str) -> None:
    """The last save checks, in order (spec/case-format.md 7): ``case_too_large`` when the
    files hold more than 512 MiB, then ``secret_detected`` unless ``secrets`` is
    ``"allow"`` (after a redaction, any value left is refused: all or nothing)."""
    total = sum(len(b) for b in files.values())
    if total > MAX_CASE_BYTES:
        raise CaseError(
            "case_too_large",
            f"the case would hold {total} bytes; at most {MAX_CASE_BYTES} (512 MiB)",
            hint="save a turn with smaller inputs, or fork later in the thread",
        )
    if secrets != "allow":
        _refuse_secrets(files, redacted=secrets == "redact")


def check_secrets_mode(secrets: Any) -> str:
    if secrets not in SECRETS_MODES:
        raise CaseError(
            "invalid_request",
            f"secrets must be one of {', '.join(SECRETS_MODES)}, not {quote(secrets)}",
        )
    return str(secrets)


def save_case(
    events: Sequence[dict[str, Any]],
    *,
    sandbox: SandboxProvider,
    store: ArtifactStore,
    name: str,
    expect: CaseExpectation | dict[str, Any] | None,
    at: str,
    dir: str | os.PathLike[str],
    external_effects: str = "stub",
    overwrite: bool = False,
    implementations: Sequence[str] = DEFAULT_IMPLEMENTATIONS,
    secrets: str = "refuse",
    verify: bool = True,
    sandbox_dir: str | os.PathLike[str] | None = None,
) -> SaveResult:
    """Save the turn after ``at`` as ``dir/name`` (spec/case-format.md, section 3).

    ``verify`` (the default) replays the built case on the Python reference implementation
    before it is moved into place, as ``run`` would, and refuses a case whose first run
    would not pass with ``replay_failed`` (case-format.md 5.10). ``sandbox_dir`` is a folder
    holding sandbox files the log knows by sha256 only (``"artifact": null``): their bytes
    are taken from ``sandbox_dir/<path>``, and a file whose bytes do not match the recorded
    sha256 is refused with ``invalid_request`` (5.9). Files neither the log nor
    ``sandbox_dir`` holds are saved hash-only; a replay that reads one stops with
    ``sandbox_content_missing``.

    ``secrets`` decides what happens to values that look like credentials
    (threads_cases.case.secrets): ``"refuse"`` (the default) refuses with ``secret_detected``
    naming the file and JSON pointer, never the value; ``"redact"`` replaces each with
    ``[REDACTED:<16 hex>]`` everywhere so the case still replays (and refuses with
    ``secret_detected`` if any value would be left: all or nothing); ``"allow"`` saves
    them knowingly. A case over 512 MiB is refused with ``case_too_large``.

    Returns ``SaveResult(ok=True, value=SavedCase(path, portable, fingerprint, outcome))`` or
    ``SaveResult(ok=False, error=SaveError(code, message))``; it never raises for a refusal.
    """
    try:
        check_case_name(name)
        if external_effects not in ("stub", "forbid"):
            raise CaseError(
                "invalid_request",
                f"external_effects must be 'stub' or 'forbid', not {quote(external_effects)}",
            )
        if not isinstance(at, str) or not at:
            raise CaseError("invalid_request", "at must be an event_id")
        exp = _expectation(expect)
        implementations = _implementations(implementations)
        if not sandbox.blocks_egress:
            raise CaseError(
                "egress_policy_unsupported",
                f"the thread's sandbox ({type(sandbox).__name__}) cannot block network access, "
                "and a replay must never reach the outside world",
            )
        check_secrets_mode(secrets)
        if sandbox_dir is not None:
            from .sandbox_files import supply_sandbox_bytes

            store = supply_sandbox_bytes(events, at, store, Path(sandbox_dir))
        if secrets == "redact":  # after every artifact is in the store, so all are redacted
            from .redact import redact_events

            events, store = redact_events(events, store)
        files, meta = build_case_files(
            events=events,
            name=name,
            expect=exp,
            at=at,
            external_effects=external_effects,
            portable=bool(sandbox.portable),
            store=store,
            implementations=implementations,
        )
        check_case_files(files, secrets)
        from .verify import request_mismatches, verify_case_dir

        check = (lambda p: verify_case_dir(p, implementations)) if verify else None
        outcome = write_case_dir(Path(dir), name, files, overwrite=overwrite, verify=check)
        turn_ids = {e["event_id"] for e in _split_turn(events, at)[1]}
        mismatches = tuple(m for m in request_mismatches(events) if m["event_id"] in turn_ids)
    except CaseError as err:
        code = "invalid_request" if err.code == "dialect_unknown" else err.code
        if secrets != "allow":  # a message never shows a secret (spec/reason-codes.md 1.1)
            from .secrets import redact_text

            err = CaseError(err.code, redact_text(err.message), hint=err.hint)
        return SaveResult(False, error=SaveError(code, err.message, err.hint))
    except OSError as exc:
        return SaveResult(
            False,
            error=SaveError(
                "io_error",
                f"cannot write the case: {exc}",
                "check that --dir is a folder you can write to",
            ),
        )
    warnings = [] if verify else [NOT_VERIFIED_WARNING]
    warnings += [
        f"warning: line {m['line']} ({m['event_id']}): the recorded request_sha256 is not the "
        "hash of the request the reducer builds; the case will drift on request_diverged"
        for m in mismatches
    ]
    saved = SavedCase(
        Path(dir) / name, meta["portable"], meta["fingerprint"], outcome, verify, mismatches
    )
    return SaveResult(True, value=saved, warnings=tuple(warnings))
