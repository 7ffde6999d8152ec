"""The conformance areas of whole turns sent as ``replay`` requests (spec/conformance.md
2.16, 2.17): ``live/`` (a live replay whose model calls the harness answers from the test,
driver-protocol.md 2.5.1) and ``provenance/`` (a replay of a cut copy of a case with answers
supplied, replay.md 11.11).

Each runner takes a test entry, the implementation and the test file's path (its suite is the
folder above the area's) and gives one :class:`~threads_cases.harness.run.runner.Check`; a driver
that cannot carry the request out raises ``CaseError`` (the test is then ``error``).
"""

from __future__ import annotations

import hashlib
import json
import shutil
import tempfile
from pathlib import Path
from typing import Any

from ...core.canonical import canonical_line
from ...core.dialects import get_dialect
from ...core.errors import CaseError
from ...protocol.client import Implementation
from .checks import Check

#: Codes that say the driver failed, not the test: never a test's answer (conformance.md 3.2).
DRIVER_FAULTS = frozenset(
    {"driver_crashed", "driver_timeout", "driver_unavailable", "protocol_error", "internal_error"}
)


def _compare(check: str, got: dict[str, Any], want: dict[str, Any], code: str) -> Check:
    """``pass`` when ``got`` equals ``want`` key by key, else a failure naming the keys."""
    bad = [k for k in want if got.get(k) != want[k]]
    if not bad:
        return Check(check, "pass")
    shown = "; ".join(f"{k}: got {got.get(k)!r}, expected {want[k]!r}" for k in bad)
    return Check(check, "fail", shown[:2000], code)


def live_outcome(doc: dict[str, Any], impl: Implementation, suite: Path) -> dict[str, Any]:
    """What a live test's turn gives on ``impl``: ``{"requests", "stop", "event_types",
    "events_sha256"}`` (spec/conformance.md 2.17). Model call ``n`` is answered with
    ``answers[n]``, any further call with the stop ``then`` (its ``stop_key`` ``model:<n>``);
    the events are hashed as canonical lines of their threads-py spelling.
    Raises ``CaseError("invalid_request")`` for an implementation without ``live``."""
    if "live" not in (impl.hello().get("capabilities") or []):
        raise CaseError(
            "invalid_request",
            f"{impl.name} does not announce the live capability (driver-protocol.md 2.5.1)",
        )
    asked: list[str] = []

    def ask(index: int, _request: dict[str, Any], sha: str) -> dict[str, Any]:
        asked.append(sha)
        if index < len(doc["answers"]):
            return dict(doc["answers"][index])
        return {"stop": {**doc["then"], "stop_key": f"model:{index}"}}

    message = {
        "cmd": "replay",
        "case": {"path": str(suite / "cases" / doc["case"])},
        "live": doc["live"],
    }
    out = impl.request(message, on_model_call=ask)
    dialect = get_dialect(impl.dialect)
    events = [dialect.decode_event(e) for e in out["events"]]
    lines = b"".join(canonical_line(e) + b"\n" for e in events)
    return {
        "requests": asked,
        "stop": out["stop"],
        "event_types": [e["type"] for e in events],
        "events_sha256": hashlib.sha256(lines).hexdigest(),
    }


def live_test(doc: dict[str, Any], impl: Implementation, path: Path) -> Check:
    """A ``live/`` entry: the asked request hashes, the stop and the recorded events."""
    want = {k: doc[k] for k in ("requests", "stop", "event_types", "events_sha256")}
    return _compare("live", live_outcome(doc, impl, path.parent.parent), want, "outcome_differs")


def cut_copy(doc: dict[str, Any], source: Path, folder: Path) -> Path:
    """A copy of the case directory ``source`` in ``folder``, cut as a provenance or replay
    stop test says (spec/conformance.md 2.14, 2.16): ``model.json``'s first ``keep_replies``
    replies kept (all when null), ``stubs.json`` emptied when ``drop_stubs``."""
    case = folder / source.name
    shutil.copytree(source, case)
    if doc["keep_replies"] is not None:
        model = json.loads((case / "model.json").read_text("utf-8"))
        model["replies"] = model["replies"][: doc["keep_replies"]]
        (case / "model.json").write_text(json.dumps(model), "utf-8")
    if doc["drop_stubs"]:
        (case / "stubs.json").write_text('{"calls": [], "format": 1}\n', "utf-8")
    return case


def prepared(doc: dict[str, Any], suite: Path, folder: Path) -> Path:
    """A provenance test's copy of ``cases/<case>`` in ``folder``, cut (:func:`cut_copy`)."""
    return cut_copy(doc, suite / "cases" / doc["case"], folder)


def replay_stop_test(doc: dict[str, Any], impl: Implementation, path: Path) -> Check:
    """A ``replay/NNN-slug.json`` stop test: the cut copy of ``replay/<case>`` replayed, and
    its stop (code, stop key, message), event types, request hashes and consumption."""
    with tempfile.TemporaryDirectory(prefix="threads-cases-replay-stop-") as tmp:
        case = cut_copy(doc, path.parent / doc["case"], Path(tmp))
        out = impl.request({"cmd": "replay", "case": {"path": str(case)}})
    dialect = get_dialect(impl.dialect)
    got = {
        "stop": out["stop"],
        "event_types": [dialect.decode_event(e)["type"] for e in out["events"]],
        "requests": out["requests"],
        "consumed": out["consumed"],
    }
    want = {k: doc[k] for k in got}
    return _compare("stop", got, want, "outcome_differs")


def provenance_outcome(doc: dict[str, Any], impl: Implementation, suite: Path) -> dict[str, Any]:
    """``{"provenance", "stop": <stop code or null>}`` of a provenance test on ``impl``."""
    with tempfile.TemporaryDirectory(prefix="threads-cases-provenance-") as tmp:
        case = prepared(doc, suite, Path(tmp))
        out = impl.request(
            {"cmd": "replay", "case": {"path": str(case), "supply": {"calls": doc["supply"]}}}
        )
    stop = out["stop"]
    return {"provenance": out.get("provenance"), "stop": None if stop is None else stop["code"]}


def provenance_test(doc: dict[str, Any], impl: Implementation, path: Path) -> Check:
    """A ``provenance/`` entry: where each answer came from, and the stop's code."""
    want = {"provenance": doc["provenance"], "stop": doc["stop"]}
    got = provenance_outcome(doc, impl, path.parent.parent)
    return _compare("provenance", got, want, "outcome_differs")
