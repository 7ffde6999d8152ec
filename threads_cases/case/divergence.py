"""The first divergence between a recorded turn and its replay (spec/reports.md section 7).

A ``drifted`` or ``fail`` verdict says *that* a replay departed from the recording; the
divergence says *where*: the first model request whose hash differs (and, from the request
records of ``model.json``, the JSON pointer inside the request and both values), else the
first failing or warning check (the state, a stop, a matcher, an unused recording).

JSON shape (``divergence`` of a report's result line, ``schemas/report.schema.json``)::

    {"kind": "request" | "state" | "stop" | "matcher" | "recording",
     "call": int | null,            # model call index, from 0 (request, model-reply stops)
     "event_index": int | null,     # index in the replayed turn's events (0 = user_message)
     "event_type": str | null,
     "seq": int | null, "event_id": str | null,   # that event as the log numbers it
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
from typing import Any, cast

from ..core.canonical import canonical_line
from ..core.matchers import name_event as _name_event
from ..core.reducer import Reducer
from ..core.shapes import DivergenceRecord


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
    #: how the summary names the event: as a matcher's sentence names it (``seq 13
    #: tool_result (e13)``, the seq and event id of the log's files), one number per event
    event: str = ""
    seq: int | None = None
    event_id: str | None = None
    #: the noun before each value in the summary (``input`` for a missing stub)
    what: str = ""

    @property
    def line(self) -> int | None:
        return _line_of(self.recorded, self.replayed)

    def where(self) -> str:
        """``KIND (model call N[, model.json /replies/N]) on seq S TYPE (ID) at POINTER``:
        model calls counted from 0 as model.json's replies, ``model:<n>`` keys and ``show``
        count them; the event by its seq and event id, never by its index in the turn."""
        head = self.kind
        if self.call is not None:
            file = f", model.json /replies/{self.call}" if self.kind == "request" else ""
            head += f" (model call {self.call}{file})"
        if self.event:
            head += f" on {self.event}"
        elif self.event_type:
            head += f" on {self.event_type}"
        line = f" line {self.line}" if self.line is not None else ""
        return f"{head} at {self.pointer or '/'}{line}"

    def summary(self, width: int = SHORT) -> str:
        """One line: ``request (model call 1, model.json /replies/1) on seq 9 model_requested
        (main.9) at /system line 3: recorded "..." != replayed "..."``."""
        a, b = self.recorded, self.replayed
        line = self.line
        if line is not None:  # show the differing line, not the start of the text
            a = a.split("\n")[line - 1] if line <= a.count("\n") + 1 else ABSENT
            b = b.split("\n")[line - 1] if line <= b.count("\n") + 1 else ABSENT
        # a matcher's value is what the case expects, not something recorded
        side = "expected (by the matcher)" if self.kind == "matcher" else "recorded"
        what = f" {self.what}" if self.what else ""
        other = "live" if self.kind == "reply" else "replayed"  # a live turn's reply (11.6)
        text = (
            f"{self.where()}: {side}{what} {shorten(a, width)} != {other}{what} {shorten(b, width)}"
        )
        return text + (f" ({self.note})" if self.note else "")

    def to_json(self) -> DivergenceRecord:
        out: dict[str, Any] = {
            "kind": self.kind,
            "call": self.call,
            "event_index": self.event_index,
            "event_type": self.event_type,
            "seq": self.seq,
            "event_id": self.event_id,
            "pointer": self.pointer,
            "line": self.line,
            "summary": self.summary(),
        }
        if self.recorded is not ABSENT:
            out["recorded"] = self.recorded
        if self.replayed is not ABSENT:
            out["replayed"] = self.replayed
        return cast(DivergenceRecord, out)


def at_event(events: Sequence[dict[str, Any]], index: int | None, etype: str) -> dict[str, Any]:
    """The keyword arguments of :class:`Divergence` naming ``events[index]``: its index in
    the replayed turn, type, seq and event id, and its name ``seq S TYPE (ID)``; only the type
    when ``index`` is ``None`` or past the events."""
    if index is None or not 0 <= index < len(events):
        return {"event_type": etype}
    ev = events[index]
    seq, eid = ev.get("seq"), ev.get("event_id")
    return {
        "event_index": index,
        "event_type": ev.get("type", etype),
        "seq": seq if isinstance(seq, int) else None,
        "event_id": eid if isinstance(eid, str) else None,
        "event": _name_event(index, ev),
    }


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
        where = {"call": n, **at_event(events, idx, "model_requested")}
        a = recorded[n] if n < len(recorded) else None
        b = replayed[n] if n < len(replayed) else None
        if a is None or b is None:
            note = "the case holds no request record to compare" if a is None else ""
            return Divergence("request", "/request_sha256", want, got, note=note, **where)
        hit = first_difference(a, b)
        if hit is None:
            note = "the requests are equal; the recorded request_sha256 is not their hash"
            return Divergence("request", "/request_sha256", want, got, note=note, **where)
        return Divergence("request", hit[0], hit[1], hit[2], **where)
    return None


def replayed_requests(
    prefix: Sequence[dict[str, Any]],
    events: Sequence[dict[str, Any]],
    agent: dict[str, Any] | None = None,
    *,
    start: Reducer | None = None,
) -> list[dict[str, Any] | None]:
    """The request of each model call of a replay, rebuilt from the prefix and the replayed
    events (``agent``: the JSON of the user's own agent, the replay answer's ``agent``, when
    the replay used one; ``start``: a reducer in the prefix's state, ``Case.fork``). Empty
    when the events do not reduce (an implementation that recorded something invalid)."""
    from ..core.errors import CaseError
    from .requests import turn_requests

    try:
        return list(turn_requests(prefix, events, agent, start=start))
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
    from .requests import expand_records

    replies = case.read("model.json")["replies"]
    events = out["events"]
    sha = list(out.get("requests", []))
    if any(a != b["request_sha256"] for a, b in zip(sha, replies, strict=False)):
        # the loader's canonical events of the log and its reduction of them (issue 33)
        prefix = list(case.logs[impl.dialect])
        got = replayed_requests(prefix, events, out.get("agent"), start=case.fork(impl.dialect))
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
            named = {} if near is None else at_event(events, idx, str(near.get("type")))
            return Divergence("matcher", d.pointer, a, b, **named)
        return Divergence("state", d.pointer, a, b)
    if c.matcher is not None:  # nothing came near the matcher
        return Divergence("matcher", "", c.matcher, ABSENT)
    if c.id == "stop" and stop:
        key = str(stop.get("stop_key", ""))
        if stop.get("code") == "missing_stub" and key.startswith("tool:"):
            hit = stub_divergence(case.read("stubs.json")["calls"], events, key[5:])
            if hit is not None:
                return hit
        call = int(key[6:]) if key.startswith("model:") and key[6:].isdigit() else None
        named = at_event(events, len(events) - 1, "turn_failed")
        return Divergence("stop", f"/{escape(key)}", ABSENT, stop.get("message", ""), call, **named)
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


def stub_divergence(
    stubs: Sequence[dict[str, Any]], events: Sequence[dict[str, Any]], tool: str
) -> Divergence | None:
    """The divergence of a ``missing_stub`` stop (spec/reports.md 7.1): the input of the
    turn's last ``tool_called`` of ``tool`` (the call no stub answered) against the input of
    the first stub of that tool the replay left unused (replay.md 3.5: earlier calls use
    stubs in file order), both whole, at the first pointer inside them where they differ.
    ``recorded`` is absent when every stub of the tool was used (or it has none). ``None``
    when the events hold no such call."""
    calls = [i for i, e in enumerate(events) if e["type"] == "tool_called"]
    calls = [i for i in calls if events[i]["data"].get("name") == tool]
    if not calls:
        return None
    used: set[int] = set()
    for i in calls[:-1]:  # the calls a stub answered, as the replay matched them
        line = canonical_line(events[i]["data"].get("input"))
        for n, st in enumerate(stubs):
            if n not in used and st["tool"] == tool and canonical_line(st["input"]) == line:
                used.add(n)
                break
    left = [n for n, st in enumerate(stubs) if st["tool"] == tool and n not in used]
    got = events[calls[-1]]["data"].get("input")
    named = at_event(events, calls[-1], "tool_called")
    if not left:
        note = f"missing_stub: no unused stub of {canonical_line(tool).decode('utf-8')} is left"
        return Divergence("stop", "", ABSENT, got, note=note, what="input", **named)
    want = stubs[left[0]]["input"]
    hit = first_difference(want, got)
    pointer = "" if hit is None else hit[0]
    note = f"missing_stub: stubs.json /calls/{left[0]} is the first unused stub of " + (
        canonical_line(tool).decode("utf-8")
    )
    return Divergence("stop", pointer, want, got, note=note, what="input", **named)
