"""What the model said in a live turn (spec/replay.md 11.6, spec/reports.md 7.5): the replies
of a live result in the failure panel (cut to a stated size), and the first live reply that
differs from the recorded turn.

The report keeps them whole: a live result line's ``live_replies`` is every reply the turn
got, in call order, each ``{index, provenance, reply: {message, stop_reason, usage},
request_sha256}`` (:class:`~.desk.CaseLedger` collects them). The panel shows each reply on
one line: its call, provenance and stop reason, each text block quoted and cut to
:data:`PANEL_TEXT` code points, each tool call as its name and canonical input cut to
:data:`PANEL_INPUT` code points (a cut value ends ``... (+N)``, N the code points left out),
a thinking block as its length. A reused reply is the recorded one and is only named.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ...core.canonical import canonical_line
from ...core.texts import quote
from ..check.divergence import ABSENT, Divergence, first_difference

#: code points of a reply's text block shown in the panel
PANEL_TEXT = 300
#: code points of a tool call's input (canonical JSON) shown in the panel
PANEL_INPUT = 200


def _cut(text: str, width: int) -> tuple[str, str]:
    if len(text) <= width:
        return text, ""
    return text[:width], f"... (+{len(text) - width})"


def _block(b: dict[str, Any]) -> str:
    kind = b.get("type")
    if kind == "text":
        text, more = _cut(str(b.get("text", "")), PANEL_TEXT)
        return quote(text) + more
    if kind == "tool_use":
        inp = canonical_line(b.get("input", {})).decode("utf-8")
        inp, more = _cut(inp, PANEL_INPUT)
        return f"tool {b.get('name', '?')} {inp}{more}"
    if kind == "thinking":
        return f"(thinking, {len(str(b.get('thinking', '')))} characters)"
    return f"({kind} block)"


def reply_line(entry: dict[str, Any]) -> str:
    """One reply of a live result (``{index, provenance, reply}``) as one panel line."""
    head = f"model:{entry['index']} {entry['provenance']}"
    if entry["provenance"] == "reused":
        return f"{head}: the recorded reply"
    reply = entry["reply"]
    blocks = reply.get("message", {}).get("content") or []
    said = "; ".join(_block(b) for b in blocks if isinstance(b, dict)) or "(no content)"
    return f"{head}, {reply.get('stop_reason')}: {said}"


def panel_lines(replies: Sequence[dict[str, Any]] | None) -> list[str]:
    """The panel's lines for a live result's replies (empty when it got none)."""
    if not replies:
        return []
    head = (
        f"live replies (text cut to {PANEL_TEXT} and tool inputs to {PANEL_INPUT} "
        "characters; whole in the JSON report):"
    )
    return [head, *(f"  {reply_line(e)}" for e in replies)]


def _comparable(reply: dict[str, Any]) -> dict[str, Any]:
    """A reply as compared: its message and stop reason, tool-use ids left out (a live reply
    brings new ids), usage left out."""
    message = dict(reply.get("message") or {})
    content = message.get("content")
    if isinstance(content, list):
        message["content"] = [
            {k: v for k, v in b.items() if k != "id"}
            if isinstance(b, dict) and b.get("type") == "tool_use"
            else b
            for b in content
        ]
    return {"message": message, "stop_reason": reply.get("stop_reason")}


def reply_divergence(
    recorded: Sequence[dict[str, Any]], replies: Sequence[dict[str, Any]]
) -> Divergence | None:
    """The first reply of a live turn (``replies``, the ledger's, in call order) that differs
    from the recorded reply of the same call (``recorded``, model.json's ``replies``), as a
    divergence of kind ``reply``: the call, the JSON pointer inside the reply and both values
    (the recorded side absent when the recording has no reply for that call). Reused replies
    are the recording's and never differ. A difference inside two content blocks of different
    types is the two whole blocks. None when every reply equals its recorded one."""
    for entry in replies:
        n = entry["index"]
        if entry["provenance"] == "reused":
            continue
        got = _comparable(entry["reply"])
        note = f"a {entry['provenance']} reply"
        where = {"call": n, "event_type": "model_responded", "note": note}
        if n >= len(recorded):
            return Divergence("reply", "", ABSENT, got, **where)
        want = _comparable(recorded[n])
        hit = first_difference(want, got)
        if hit is not None:
            pointer, a, b = _widened(hit, want, got)
            return Divergence("reply", pointer, a, b, **where)
    return None


def _widened(
    hit: tuple[str, Any, Any], want: dict[str, Any], got: dict[str, Any]
) -> tuple[str, Any, Any]:
    """A difference inside two content blocks of different types, as the two whole blocks
    (a text where a tool call was is one difference, not a missing ``input``)."""
    parts = hit[0].split("/")
    if len(parts) > 4 and parts[1:3] == ["message", "content"] and parts[3].isdigit():
        i = int(parts[3])
        a, b = want["message"]["content"][i], got["message"]["content"][i]
        if isinstance(a, dict) and isinstance(b, dict) and a.get("type") != b.get("type"):
            return f"/message/content/{i}", a, b
    return hit
