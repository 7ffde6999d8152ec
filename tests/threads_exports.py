"""``threads export`` files written for the tests (spec/importers.md section 9: the
project's reading of the format; every id, name and text invented): a header line, the
events chained by ``prev_hash``, the head checkpoint."""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any

from threads_cases.core.canonical import canonical_line
from threads_cases.core.dialects import get_dialect

THREAD = "th-weather-1"
TS = "2026-03-01T10:00:{:02d}.000Z"
SHA = "0" * 64


def _env(seq: int, etype: str, data: dict[str, Any], actor: str = "system") -> dict[str, Any]:
    return {
        "event_id": f"ev{seq}",
        "thread_id": THREAD,
        "seq": seq,
        "type": etype,
        "actor_kind": actor,
        "epoch": 0,
        "branch_id": "main",
        "critical": etype in ("tool_result", "sandbox_wrote"),
        "ts": TS.format(seq),
        "data": data,
    }


def _turn(turn_id: str, prompt: str, tool: str, inp: dict[str, Any], out: str, answer: str):
    call = {"turn_id": turn_id, "tool_use_id": f"{turn_id}-c1", "name": tool}
    use = {"type": "tool_use", "id": f"{turn_id}-c1", "name": tool, "input": inp}
    usage = {"input_tokens": 10, "output_tokens": 5}
    return [
        ("user_message", {"content": prompt}, "user"),
        ("turn_started", {"turn_id": turn_id}, "system"),
        ("model_requested", {"turn_id": turn_id, "model": "m-1", "request_sha256": SHA}, "system"),
        (
            "model_responded",
            {
                "turn_id": turn_id,
                "message": {"role": "assistant", "content": [use]},
                "stop_reason": "tool_use",
                "usage": usage,
            },
            "model",
        ),
        ("tool_called", {**call, "input": inp, "kind": "external", "effect": "read"}, "model"),
        ("tool_result", {**call, "content": out, "is_error": False}, "tool"),
        ("model_requested", {"turn_id": turn_id, "model": "m-1", "request_sha256": SHA}, "system"),
        (
            "model_responded",
            {
                "turn_id": turn_id,
                "message": {"role": "assistant", "content": [{"type": "text", "text": answer}]},
                "stop_reason": "end_turn",
                "usage": usage,
            },
            "model",
        ),
        (
            "turn_completed",
            {"turn_id": turn_id, "stop_reason": "end_turn", "usage": usage},
            "system",
        ),
    ]


def events() -> list[dict[str, Any]]:
    """A thread of two completed turns with a snapshot, a sandbox read and a type of the
    runtime's own between them, and a third turn cut after its tool call."""
    agent = {
        "name": "weather-bot",
        "model": "m-1",
        "system": "You answer weather questions.",
        "tools": [
            {
                "name": "get_weather",
                "description": "Weather for a city",
                "input_schema": {"type": "object"},
                "kind": "external",
                "effect": "read",
            }
        ],
    }
    spec: list[tuple[str, dict[str, Any], str]] = [
        ("thread_started", {"agent": agent, "metadata": {"project": "demo"}}, "system"),
        *_turn("t1", "Weather in Oslo?", "get_weather", {"city": "Oslo"}, "rain, 4C", "Rainy."),
        ("snapshot_taken", {"snapshot_id": "s1"}, "system"),
        ("checkpoint_written", {"bytes": 1200}, "system"),
        (
            "sandbox_read",
            {"path": "notes.txt", "sha256": SHA, "size": 0, "artifact": None},
            "sandbox",
        ),
        *_turn("t2", "And Bergen?", "get_weather", {"city": "Bergen"}, "sun, 9C", "Sunny."),
    ]
    return [_env(i, t, d, a) for i, (t, d, a) in enumerate(spec)]


def export_lines(evs: list[dict[str, Any]], *, dialect: str = "threads-py") -> list[bytes]:
    """The lines of the export of ``evs`` (canonical envelopes): header, chained events,
    head."""
    header: dict[str, Any] = {"threads_export": 1, "thread_id": THREAD, "runtime": "threads 0.9"}
    if dialect != "threads-py":
        header["dialect"] = dialect
    lines = [canonical_line(header)]
    codec = get_dialect(dialect)
    for ev in evs:
        prev = hashlib.sha256(lines[-1]).hexdigest()
        lines.append(canonical_line({**codec.encode_event(ev), "prev_hash": prev}))
    last = hashlib.sha256(lines[-1]).hexdigest()
    head = {"events": len(evs), "seq": len(evs) - 1, "sha256": last}
    lines.append(canonical_line({"head": head}))
    return lines


def write_export(path: Path, lines: list[bytes], *, newline_at_end: bool = True) -> Path:
    path.write_bytes(b"\n".join(lines) + (b"\n" if newline_at_end else b""))
    return path
