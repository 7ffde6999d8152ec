"""``import auto``: which format a file is, from its first lines (spec/importers.md section 7).

:func:`detect_format` reads at most :data:`HEAD_BYTES` of the file (gunzipped when its first
bytes say it is gzipped) and tries, in order:

* ``inspect-ai`` -- a zip archive holding ``header.json`` or ``samples/`` members (a
  ``.eval`` log), or a JSON object starting ``{"version": N, "status": ...`` (a ``.json``
  eval log);
* ``openhands`` -- a JSON list of events (or ``{"trajectory": [...]}``) whose first event has
  a ``source`` of ``user``, ``agent`` or ``environment`` and an ``action`` or
  ``observation`` (older events) or a V1 event ``kind`` (``MessageEvent``, ``ActionEvent``...);
  a folder is ``openhands`` when it (or its ``events/``) holds event files;
* ``vcr`` -- YAML whose top level has an ``interactions:`` key (a VCR cassette);
* ``swe-agent`` -- a JSON object whose first key is ``trajectory``, ``history``, ``info``,
  ``environment`` or ``replay_config`` (a ``.traj`` file);
* ``claude-code`` -- JSON lines of a known Claude Code line type or with ``uuid`` /
  ``parentUuid`` / ``sessionId``;
* ``codex`` -- JSON lines of a rollout file (``{timestamp, type, payload}`` of a rollout
  type) or of a ``codex exec --json`` stream;
* ``threads`` -- a ``threads export`` file: a header line with ``threads_export`` or event
  lines with ``prev_hash`` (tried before the thread-log refusal, which it resembles).

The first format one of the first :data:`HEAD_LINES` records shows wins. A file none fits is
refused with ``import_invalid``, the message naming each format tried and why it did not
fit (an empty file: ``the file is empty``; bytes that are not text: the offset of the first
one); a thread log (``event_id`` and ``thread_id``) is refused with the hint that it needs no
import.
"""

from __future__ import annotations

import os
import re
import zlib
from pathlib import Path
from typing import Any

import orjson

from ..core.errors import CaseError
from ..core.files import MAX_LOG_BYTES, open_regular
from .claude_code import LINE_TYPES
from .codex import EXEC_TYPES, ROLLOUT_TYPES
from .openhands_store import EVENT_FILE
from .threads_export import is_export_line

HEAD_BYTES = 1 << 20
HEAD_LINES = 20
#: the formats ``auto`` tries, in order
TRIED = ("inspect-ai", "openhands", "vcr", "swe-agent", "claude-code", "codex", "threads")
_TOP_INTERACTIONS = re.compile(rb"^interactions:", re.MULTILINE)
_INSPECT_JSON = re.compile(rb'^\s*\{\s*"version"\s*:\s*\d+\s*,\s*"status"\s*:')
_INSPECT_MEMBER = re.compile(rb"header\.json|_journal/start\.json|samples/[^/]+_epoch_\d+\.json")
_OPENHANDS_START = re.compile(rb'^\s*(?:\[|\{\s*"trajectory"\s*:\s*\[)\s*\{')
_OPENHANDS_SOURCE = re.compile(rb'"source"\s*:\s*"(?:user|agent|environment)"')
_OPENHANDS_EVENT = re.compile(rb'"(?:action|observation)"\s*:\s*"')
_OPENHANDS_KIND = re.compile(
    rb'"kind"\s*:\s*"(?:MessageEvent|ActionEvent|ObservationEvent|SystemPromptEvent'
    rb'|ConversationStateUpdateEvent|AgentErrorEvent|UserRejectObservation)"'
)
_TRAJ_START = re.compile(rb'^\s*\{\s*"(trajectory|history|info|environment|replay_config)"\s*:')
AUTO_HINT = (
    "name the format: `threads-cases import "
    "claude-code|codex|vcr|swe-agent|inspect-ai|openhands|threads FILE -o LOG` "
    "(spec/importers.md lists what each reads)"
)


def _head(path: Path) -> bytes:
    with open_regular(path, code="io_error", limit=MAX_LOG_BYTES) as fh:
        data = fh.read(HEAD_BYTES)
    if data[:2] == b"\x1f\x8b":
        try:  # the start of the gzip stream is enough
            return zlib.decompressobj(16 + zlib.MAX_WBITS).decompress(data, HEAD_BYTES)
        except zlib.error:
            return b""
    return data


def _records(head: bytes) -> list[Any]:
    out = []
    for line in head.splitlines()[: HEAD_LINES * 4]:
        line = line.strip(b"\x00 \t\r")
        if not line:
            continue
        try:
            out.append(orjson.loads(line))
        except orjson.JSONDecodeError:
            continue
        if len(out) >= HEAD_LINES:
            break
    return out


def _kind(rec: Any) -> str | None:
    if not isinstance(rec, dict):
        return None
    t = rec.get("type")
    if is_export_line(rec):
        return "threads"
    if ("event_id" in rec and "thread_id" in rec) or "eventId" in rec:
        return "thread-log"
    if (t in ROLLOUT_TYPES and "payload" in rec) or t in EXEC_TYPES:
        return "codex"
    if t in LINE_TYPES or {"uuid", "parentUuid", "sessionId"} & rec.keys():
        return "claude-code"
    return None


def is_event_store(path: Path) -> bool:
    """Whether the folder ``path`` is an OpenHands event store (or its ``events/``)."""
    root = path / "events" if (path / "events").is_dir() else path
    return any(EVENT_FILE.match(p.name) for p in root.iterdir())


def detect_format(path: str | os.PathLike[str]) -> str:
    """The format of the file at ``path`` (one of :data:`TRIED`). Raises
    ``CaseError("import_invalid")`` naming the formats tried when none fits, and
    ``CaseError("io_error")`` when the file cannot be read."""
    path = Path(path)
    if path.is_dir():
        if is_event_store(path):
            return "openhands"
        raise CaseError(
            "import_invalid",
            "a folder fits no format: tried openhands (an event store: events/event-<n>-<id>"
            ".json or events/<n>.json files)",
            file=str(path),
            hint=AUTO_HINT,
        )
    head = _head(path)
    if (head[:4] == b"PK\x03\x04" and _INSPECT_MEMBER.search(head[:4096])) or _INSPECT_JSON.match(
        head
    ):
        return "inspect-ai"
    start = head[:65536]
    if (
        _OPENHANDS_START.match(head)
        and _OPENHANDS_SOURCE.search(start)
        and (_OPENHANDS_EVENT.search(start) or _OPENHANDS_KIND.search(start))
    ):
        return "openhands"
    if _TOP_INTERACTIONS.search(head):
        return "vcr"
    if _TRAJ_START.match(head):
        return "swe-agent"
    records = _records(head)
    for rec in records:
        kind = _kind(rec)
        if kind == "thread-log":
            raise CaseError(
                "import_invalid",
                "this is a thread log already (its lines have event_id and thread_id): "
                "it needs no import",
                file=str(path),
                hint="pass it to `threads-cases turns`, `draft` or `save` as it is",
            )
        if kind is not None:
            return kind
    if not head.strip():
        empty = "the file holds only blank lines" if head else "the file is empty"
        raise CaseError("import_invalid", empty, file=str(path), hint=AUTO_HINT)
    from .wrong_format import not_text

    binary = None if records else not_text(head)
    if binary is not None:  # the byte that is not text, not a list of formats tried
        raise CaseError("import_invalid", binary, file=str(path), hint=AUTO_HINT)
    seen = f"{len(records)} JSON line(s) of no known type" if records else "no JSON line"
    raise CaseError(
        "import_invalid",
        f"no format fits: tried vcr (no top-level `interactions:` key), swe-agent (not a JSON "
        f"object starting with trajectory, history or info), claude-code (no line "
        f"of type {', '.join(LINE_TYPES[:3])}... or with uuid/sessionId), codex (no rollout "
        f"or `codex exec --json` line), inspect-ai (not a .eval archive or a JSON object "
        f"starting with version and status), openhands (not a JSON list of OpenHands "
        f"events), threads (no `threads export` header or prev_hash); the file holds {seen}",
        file=str(path),
        hint=AUTO_HINT,
    )
