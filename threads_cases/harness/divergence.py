"""The first divergence between a recorded turn and its replay (spec/reports.md section 7).

A ``drifted`` or ``fail`` verdict says *that* a replay departed from the recording; the
divergence says *where*: the first model request whose hash differs (and, from the request
records of ``model.json``, the JSON pointer inside the request and both values), else the
first failing or warning check (the state, a stop, a matcher, an unused recording).

JSON shape (``divergence`` of a report's result line, ``schemas/report.schema.json``)::

    {"kind": "request" | "state" | "stop" | "matcher" | "recording",
     "call": int | null,            # model call index (request, model-reply stops)
     "event_index": int | null,     # index in the replayed turn's events (0 = user_message)
     "event_type": str | null,
     "pointer": str,                # RFC 6901, inside the request / state / event / file
     "recorded": any, "replayed": any,   # each left out when absent on that side
     "line": int | null,            # for two multi-line strings: first differing line (1-based)
     "summary": str}                # one line, values shortened

The rules are language-neutral (spec/reports.md 7.4) and pinned by the data-only tests of
spec/conformance/divergence/, which ``ts/src/case/divergence.ts`` passes byte for byte:
object keys are walked in UTF-16 code-unit order (the order of canonical JSON), scalars are
equal when their canonical JSON texts are, and a value is shortened by code points.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from ..core.canonical import canonical_line
from ..core.matchers import name_event as _name_event


def _utf16(key: str) -> bytes:
    return key.encode("utf-16-be", "surrogatepass")


#: marks a value absent on one side
ABSENT: Any = type("Absent", (), {"__repr__": lambda self: "<absent>"})()
SHORT = 60


def escape(key: str) -> str:
    """One RFC 6901 reference token."""
    return key.replace("~", "~0").replace("/", "~1")


def first_difference(
    recorded: Any, replayed: Any, pointer: str = ""
) -> tuple[str, Any, Any] | None:
    """The first place where two JSON values differ, in document order (object keys in
    UTF-16 code-unit order, as canonical JSON writes them): ``(pointer, recorded value,
    replayed value)`` with :data:`ABSENT` for a missing key or item, or ``None`` when they
    are equal. Two values that are not both objects or both arrays differ when their
    canonical JSON texts do (so ``1`` and ``1.0`` are equal, ``1`` and ``true`` are not)."""
    if isinstance(recorded, dict) and isinstance(replayed, dict):
        for key in sorted(set(recorded) | set(replayed), key=_utf16):
            p = f"{pointer}/{escape(key)}"
            if key not in recorded:
                return p, ABSENT, replayed[key]
            if key not in replayed:
                return p, recorded[key], ABSENT
            hit = first_difference(recorded[key], replayed[key], p)
            if hit is not None:
                return hit
        return None
    if isinstance(recorded, list) and isinstance(replayed, list):
        for i, (a, b) in enumerate(zip(recorded, replayed, strict=False)):
            hit = first_difference(a, b, f"{pointer}/{i}")
            if hit is not None:
                return hit
        n = min(len(recorded), len(replayed))
        if len(recorded) != len(replayed):
            a = recorded[n] if n < len(recorded) else ABSENT
            b = replayed[n] if n < len(replayed) else ABSENT
            return f"{pointer}/{n}", a, b
        return None
    if canonical_line(recorded) != canonical_line(replayed):
        return pointer, recorded, replayed
    return None


def shorten(value: Any, width: int = SHORT) -> str:
    """A value as one line of at most ``width`` code points (compact JSON, cut to
    ``width - 3`` code points and ``...``)."""
    if value is ABSENT:
        return "(absent)"
    text = canonical_line(value).decode("utf-8")
    return text if len(text) <= width else text[: width - 3] + "..."


def _line_of(a: Any, b: Any) -> int | None:
    if not (isinstance(a, str) and isinstance(b, str)) or ("\n" not in a and "\n" not in b):
        return None
    for i, (x, y) in enumerate(zip(a.split("\n"), b.split("\n"), strict=False)):
        if x != y:
            return i + 1
    return min(a.count("\n"), b.count("\n")) + 2


@dataclass(frozen=True)
class Divergence:
    """Where a replay first departed from its recording (module docstring)."""

    kind: str
    pointer: str
    recorded: Any
    replayed: Any
    call: int | None = None
    event_index: int | None = None
    event_type: str | None = None
    note: str = ""
    #: how the summary names the event, when not by its index: a matcher's nearest event as
    #: the matcher's own sentence names it (``seq 13 tool_result (e13)``), one number per event
    event: str = ""

    @property
    def line(self) -> int | None:
        return _line_of(self.recorded, self.replayed)

    def where(self) -> str:
        parts = []
        if self.call is not None:
            parts.append(f"model call {self.call}")
        if self.event:  # named as the matcher's sentence names it, not by a second number
            pass
        elif self.event_index is not None:
            parts.append(f"event {self.event_index} {self.event_type}")
        elif self.event_type:
            parts.append(self.event_type)
        head = f"{self.kind}" + (f" ({', '.join(parts)})" if parts else "")
        head += f" on {self.event}" if self.event else ""
        line = f" line {self.line}" if self.line is not None else ""
        return f"{head} at {self.pointer or '/'}{line}"

    def summary(self, width: int = SHORT) -> str:
        """One line: ``request (model call 1, event 7 model_requested) at /system line 3:
        recorded "..." != replayed "..."``."""
        a, b = self.recorded, self.replayed
        line = self.line
        if line is not None:  # show the differing line, not the start of the text
            a = a.split("\n")[line - 1] if line <= a.count("\n") + 1 else ABSENT
            b = b.split("\n")[line - 1] if line <= b.count("\n") + 1 else ABSENT
        # a matcher's value is what the case expects, not something recorded
        side = "expected (by the matcher)" if self.kind == "matcher" else "recorded"
        other = "live" if self.kind == "reply" else "replayed"  # a live turn's reply (11.6)
        text = f"{self.where()}: {side} {shorten(a, width)} != {other} {shorten(b, width)}"
        return text + (f" ({self.note})" if self.note else "")

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "kind": self.kind,
            "call": self.call,
            "event_index": self.event_index,
            "event_type": self.event_type,
            "pointer": self.pointer,
            "line": self.line,
            "summary": self.summary(),
        }
        if self.recorded is not ABSENT:
            out["recorded"] = self.recorded
        if self.replayed is not ABSENT:
            out["replayed"] = self.replayed
        return out


def request_divergence(
    recorded: Sequence[dict[str, Any] | None],
    recorded_sha: Sequence[str],
    replayed: Sequence[dict[str, Any] | None],
    replayed_sha: Sequence[str],
    events: Sequence[dict[str, Any]],
) -> Divergence | None:
    """The first model call whose replayed request hash differs from the recorded one, with
    the first differing pointer inside the two requests. ``recorded``/``replayed`` hold the
    whole requests (``None`` where unknown), ``events`` the replayed turn (canonical)."""
    calls = [i for i, e in enumerate(events) if e["type"] == "model_requested"]
    for n, (want, got) in enumerate(zip(recorded_sha, replayed_sha, strict=False)):
        if want == got:
            continue
        idx = calls[n] if n < len(calls) else None
        where = {"call": n, "event_index": idx, "event_type": "model_requested"}
        a = recorded[n] if n < len(recorded) else None
        b = replayed[n] if n < len(replayed) else None
        if a is None or b is None:
            note = "the case holds no request record to compare" if a is None else ""
            return Divergence("request", "/request_sha256", want, got, note=note, **where)  # type: ignore[arg-type]
        hit = first_difference(a, b)
        if hit is None:
            note = "the requests are equal; the recorded request_sha256 is not their hash"
            return Divergence("request", "/request_sha256", want, got, note=note, **where)  # type: ignore[arg-type]
        return Divergence("request", hit[0], hit[1], hit[2], **where)  # type: ignore[arg-type]
    return None


def replayed_requests(
    prefix: Sequence[dict[str, Any]], events: Sequence[dict[str, Any]], agent: Any = None
) -> list[dict[str, Any] | None]:
    """The request of each model call of a replay, rebuilt from the prefix and the replayed
    events (``agent``: the user's own :class:`AgentSpec`, when the replay used one). Empty
    when the events do not reduce (an implementation that recorded something invalid)."""
    from ..case.requests import turn_requests
    from ..core.errors import CaseError

    try:
        return list(turn_requests(prefix, events, None if agent is None else agent.to_json()))
    except (CaseError, KeyError, TypeError):
        return []


def find_divergence(
    case: Any, impl: Any, checks: Sequence[Any], out: dict[str, Any]
) -> Divergence | None:
    """The first divergence of one run: a diverged request first (the earliest cause), else
    the first failing check, else the first warning check. ``out`` is the replay answer with
    canonical ``events``; ``None`` when every check passed."""
    if all(c.result in ("pass", "skip") for c in checks):
        return None
    from ..case.requests import expand_records
    from ..core.log import read_log

    replies = case.read("model.json")["replies"]
    events = out["events"]
    sha = list(out.get("requests", []))
    if any(a != b["request_sha256"] for a, b in zip(sha, replies, strict=False)):
        prefix = list(read_log(case.log_path(impl.dialect), dialect=impl.dialect))
        got = replayed_requests(prefix, events, getattr(impl, "agent", None))
        hit = request_divergence(
            expand_records(replies), [r["request_sha256"] for r in replies], got, sha, events
        )
        if hit is not None:
            return hit
    for wanted in ("fail", "warn"):
        for c in checks:
            if c.result == wanted:
                return _from_check(c, case, events, out.get("stop"))
    return None


def _from_check(c: Any, case: Any, events: Sequence[dict[str, Any]], stop: Any) -> Divergence:
    if c.differences:
        d = c.differences[0]
        a = ABSENT if d.extra else d.expected
        b = ABSENT if d.missing else d.actual
        if c.matcher is not None:
            near = c.nearest_event
            idx = next((i for i, e in enumerate(events) if e is near or e == near), None)
            etype = None if near is None else near.get("type")
            name = "" if near is None else _name_event(idx or 0, near)
            return Divergence(
                "matcher", d.pointer, a, b, event_index=idx, event_type=etype, event=name
            )
        return Divergence("state", d.pointer, a, b)
    if c.matcher is not None:  # nothing came near the matcher
        return Divergence("matcher", "", c.matcher, ABSENT)
    if c.id == "stop" and stop:
        last = len(events) - 1
        key = str(stop.get("stop_key", ""))
        call = int(key[6:]) if key.startswith("model:") and key[6:].isdigit() else None
        recorded: Any = ABSENT
        if stop.get("code") == "missing_stub":
            tool = key.removeprefix("tool:")
            recorded = [s["input"] for s in case.read("stubs.json")["calls"] if s["tool"] == tool]
        return Divergence(
            "stop", f"/{escape(key)}", recorded, stop.get("message", ""), call, last, "turn_failed"
        )
    if c.code == "reply_unused":
        replies = case.read("model.json")["replies"]
        used = sum(1 for e in events if e["type"] == "model_responded")
        first = replies[used]["message"] if used < len(replies) else ABSENT
        return Divergence("recording", f"/replies/{used}/message", first, ABSENT, call=used)
    if c.code == "stub_unused":
        calls = case.read("stubs.json")["calls"]
        i = int(c.detail.split("#", 1)[1].split()[0]) if "#" in c.detail else 0
        return Divergence(
            "recording", f"/calls/{i}", calls[i] if i < len(calls) else ABSENT, ABSENT
        )
    return Divergence("recording", "", c.detail, ABSENT)
