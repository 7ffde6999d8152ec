"""Generators for benchmark inputs: thread logs of a given size, written with orjson.

The logs are valid thread logs (spec/thread-log.md): turns with a user message, model
requests and replies, sandbox tool calls with reads and writes, and a ``restored`` back to an
early snapshot every ``restore_every`` turns, so the *state* stays bounded while the *log*
grows (the reducer's memory tracks the state; see spec/reducer.md).
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import orjson

HEX = hashlib.sha256(b"bench").hexdigest()


def events(
    target_events: int | None = None, target_bytes: int | None = None, restore_every: int = 50
) -> Iterator[dict[str, Any]]:
    seq = 0
    epoch = 0
    size = 0

    def ev(etype: str, actor: str, data: dict[str, Any], critical: bool = False) -> dict[str, Any]:
        nonlocal seq, size
        e = {
            "event_id": f"e{seq}",
            "thread_id": "bench",
            "seq": seq,
            "type": etype,
            "actor_kind": actor,
            "epoch": epoch,
            "branch_id": "main",
            "critical": critical,
            "ts": (
                f"2026-11-29T20:{(seq // 60000) % 60:02d}:"
                f"{(seq // 1000) % 60:02d}.{seq % 1000:03d}Z"
            ),
            "data": data,
        }
        seq += 1
        return e

    def done() -> bool:
        return (target_events is not None and seq >= target_events) or (
            target_bytes is not None and size >= target_bytes
        )

    tools = [
        {
            "name": "read_file",
            "description": "Read a file.",
            "input_schema": {"type": "object"},
            "kind": "sandbox",
            "effect": "read",
        },
        {
            "name": "write_file",
            "description": "Write a file.",
            "input_schema": {"type": "object"},
            "kind": "sandbox",
            "effect": "write",
        },
    ]
    first = ev(
        "thread_started",
        "system",
        {
            "agent": {"name": "bench", "model": "m", "system": "s" * 200, "tools": tools},
            "metadata": {},
        },
    )
    yield first
    aid = "sha256:" + HEX
    yield ev(
        "artifact_added", "sandbox", {"artifact_id": aid, "media_type": "text/plain", "size": 120}
    )
    yield ev("snapshot_taken", "system", {"snapshot_id": "base"})
    turn = 0
    while not done():
        turn += 1
        tid = f"t{turn}"
        out = [
            ev(
                "user_message",
                "user",
                {"content": f"Please update file {turn % 7}.txt with the new numbers."},
            ),
            ev("turn_started", "system", {"turn_id": tid}),
            ev("model_requested", "system", {"turn_id": tid, "model": "m", "request_sha256": HEX}),
            ev(
                "model_responded",
                "model",
                {
                    "turn_id": tid,
                    "message": {
                        "role": "assistant",
                        "content": [
                            {"type": "text", "text": "I will read the file first."},
                            {
                                "type": "tool_use",
                                "id": f"tu{turn}a",
                                "name": "read_file",
                                "input": {"path": f"{turn % 7}.txt"},
                            },
                        ],
                    },
                    "stop_reason": "tool_use",
                    "usage": {"input_tokens": 812, "output_tokens": 64},
                },
            ),
            ev(
                "tool_called",
                "model",
                {
                    "turn_id": tid,
                    "tool_use_id": f"tu{turn}a",
                    "name": "read_file",
                    "input": {"path": f"{turn % 7}.txt"},
                    "kind": "sandbox",
                    "effect": "read",
                },
            ),
            ev(
                "sandbox_read",
                "sandbox",
                {"path": f"{turn % 7}.txt", "sha256": HEX, "size": 120, "artifact": aid},
            ),
            ev(
                "tool_result",
                "tool",
                {
                    "turn_id": tid,
                    "tool_use_id": f"tu{turn}a",
                    "name": "read_file",
                    "content": "numbers: 1 2 3 4 5 6 7 8 9 10 " * 3,
                    "is_error": False,
                },
            ),
            ev("model_requested", "system", {"turn_id": tid, "model": "m", "request_sha256": HEX}),
            ev(
                "model_responded",
                "model",
                {
                    "turn_id": tid,
                    "message": {
                        "role": "assistant",
                        "content": [
                            {"type": "text", "text": "Updated the numbers as asked. Anything else?"}
                        ],
                    },
                    "stop_reason": "end_turn",
                    "usage": {"input_tokens": 905, "output_tokens": 31},
                },
            ),
            ev(
                "turn_completed",
                "system",
                {
                    "turn_id": tid,
                    "stop_reason": "end_turn",
                    "usage": {"input_tokens": 1717, "output_tokens": 95},
                },
            ),
        ]
        for e in out:
            size += 300
            yield e
        if turn % restore_every == 0:
            epoch += 1
            yield ev("restored", "system", {"snapshot_id": "base"})


def write_log(path: Path, **kw: Any) -> tuple[int, int]:
    """Write a generated log; returns (events, bytes)."""
    n = 0
    size = 0
    with open(path, "wb") as fh:
        buf = []
        for e in events(**kw):
            line = orjson.dumps(e) + b"\n"
            buf.append(line)
            size += len(line)
            n += 1
            if len(buf) >= 10000:
                fh.write(b"".join(buf))
                buf.clear()
        fh.write(b"".join(buf))
    return n, size
