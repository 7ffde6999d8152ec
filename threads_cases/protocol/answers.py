"""What a driver's answer must hold before the harness reads it (spec/driver-protocol.md).

A driver is another program: its ``ok`` answers are checked for the fields and types the
runner reads, always (cheaply, without the full schemas of ``--validate-protocol``), and its
``error`` answers for a known reason code. Either failure is ``protocol_error`` for the
request that got the answer, so one misbehaving driver costs one case, never the run.

:func:`check_ok` checks the body of an ``ok`` answer; :func:`error_of` turns an ``error``
answer into the ``CaseError`` to raise.
"""

from __future__ import annotations

import functools
import re
from typing import Any

from ..core.errors import CaseError
from ..core.resources import spec_dir


@functools.cache
def known_codes() -> frozenset[str]:
    """Every reason code of spec/reason-codes.md (shipped with the package): the first
    column of its tables. The spec is the one list, so a new code needs no change here."""
    text = (spec_dir() / "reason-codes.md").read_text("utf-8")
    return frozenset(re.findall(r"^\| `([a-z][a-z0-9_]*)`", text, re.MULTILINE))


#: codes a driver may not claim for itself: they describe the driver, from the outside
HARNESS_ONLY = frozenset({"driver_crashed", "driver_timeout", "driver_unavailable"})


def _is_int(v: Any) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


def _need(ok: bool, cmd: str, pointer: str, what: str) -> None:
    if not ok:
        raise CaseError("protocol_error", f"the {cmd!r} answer's {pointer} must be {what}")


def _check_stop(stop: Any) -> None:
    if stop is None:
        return
    _need(isinstance(stop, dict), "replay", "/stop", "null or an object")
    for key in ("code", "stop_key", "message"):
        _need(isinstance(stop.get(key), str), "replay", f"/stop/{key}", "a string")


def _check_replay(body: dict[str, Any]) -> None:
    events = body.get("events")
    if not isinstance(events, list):
        raise CaseError("protocol_error", "the 'replay' answer's /events must be a list")
    for i, e in enumerate(events):
        _need(isinstance(e, dict), "replay", f"/events/{i}", "an object")
        _need(isinstance(e.get("type"), str), "replay", f"/events/{i}/type", "a string")
        _need(isinstance(e.get("data"), dict), "replay", f"/events/{i}/data", "an object")
    _check_stop(body.get("stop"))
    requests = body.get("requests", [])
    _need(
        isinstance(requests, list) and all(isinstance(r, str) for r in requests),
        "replay",
        "/requests",
        "a list of strings",
    )
    consumed = body.get("consumed", {})
    _need(isinstance(consumed, dict), "replay", "/consumed", "an object")
    if "replies" in consumed:
        _need(_is_int(consumed["replies"]), "replay", "/consumed/replies", "an integer")
    stubs = consumed.get("stubs", [])
    _need(
        isinstance(stubs, list) and all(isinstance(s, bool) for s in stubs),
        "replay",
        "/consumed/stubs",
        "a list of booleans",
    )
    provenance = body.get("provenance", {"model": [], "tools": []})  # optional (2.5)
    _need(isinstance(provenance, dict), "replay", "/provenance", "an object")
    for key in ("model", "tools"):
        values = provenance.get(key, [])
        _need(
            isinstance(values, list) and all(v in ("recorded", "supplied", "live") for v in values),
            "replay",
            f"/provenance/{key}",
            "a list of recorded, supplied or live",
        )


def check_ok(cmd: str, body: dict[str, Any]) -> None:
    """Check the body of an ``ok`` answer to ``cmd`` for what the harness reads.

    Raises ``CaseError("protocol_error")`` naming the JSON pointer and what it must be."""
    if cmd == "hello":
        info = body.get("implementation")
        _need(isinstance(info, dict), cmd, "/implementation", "an object")
        _need(_is_int(body.get("protocol")), cmd, "/protocol", "an integer")
    elif cmd == "reduce":
        _need(isinstance(body.get("state"), dict), cmd, "/state", "an object")
    elif cmd == "replay":
        _check_replay(body)
    elif cmd == "match":
        _need(isinstance(body.get("matched"), bool), cmd, "/matched", "a boolean")
    elif cmd == "canonicalize":
        for key in ("text", "document"):
            _need(isinstance(body.get(key), str), cmd, f"/{key}", "a string")
    elif cmd == "write_case":
        files = body.get("files")
        _need(
            isinstance(files, dict) and all(isinstance(v, str) for v in files.values()),
            cmd,
            "/files",
            "an object of base64 strings",
        )


def error_of(name: str, answer: dict[str, Any]) -> CaseError:
    """The ``CaseError`` an ``error`` answer stands for: its code when it is a reason code a
    driver may answer with, else ``protocol_error`` quoting what the driver said."""
    failure = answer.get("error")
    failure = failure if isinstance(failure, dict) else {}
    code = failure.get("code")
    message = failure.get("message")
    text = message if isinstance(message, str) else ""
    if isinstance(code, str) and code in known_codes() and code not in HARNESS_ONLY:
        pointer, hint = failure.get("pointer"), failure.get("hint")
        return CaseError(
            code,
            f"{name}: {text}",
            pointer=pointer if isinstance(pointer, str) else None,
            hint=hint if isinstance(hint, str) else None,
        )
    shown = code if isinstance(code, str) else repr(code)
    return CaseError(
        "protocol_error",
        f"{name} answered an error with code {shown[:80]!r}, which is not a reason code "
        f"(spec/reason-codes.md): {text[:2000]}",
    )
