"""OpenHands' on-disk event store read as one event list (spec/importers.md section 12.3).

A conversation folder holds ``events/`` (one JSON file per event: ``event-<n>-<id>.json`` as
the software-agent SDK writes them, ``<n>.json`` in older OpenHands) and, from the SDK,
``base_state.json`` (its ``agent.llm.model`` is the model). The path given may be the
conversation folder or its ``events/`` folder. Files are read in the order of their index
``n``; other names are ignored.

* a file that is not one JSON value is skipped with ``import_skipped`` (reason
  ``invalid_line``, the message naming the file, line and column); the last one, when its
  text stops in the middle of a value (:func:`.cutjson.read_document`), is an event cut
  short while it was written: dropped with ``import_repaired`` (reason ``cut_record``) and
  the source marked cut;
* a missing index (``event-3`` after ``event-1``) is warned ``import_repaired`` (reason
  ``missing_event``);
* ``strict`` refuses each of these with ``import_invalid`` naming the file; a folder with no
  event file is refused always.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import orjson

from ..core.errors import CaseError
from ..core.files import MAX_LOG_BYTES, read_regular
from .common import Stats
from .cutjson import NotJson, read_document

#: an event file's name: its index, then (from the SDK) the event id
EVENT_FILE = re.compile(r"^(?:event-)?(\d+)(?:-[0-9A-Za-z-]+)?\.json$")


@dataclass
class Folder:
    """The events of a folder in order, the file each came from, the model, whether cut."""

    events: list[Any] = field(default_factory=list)
    names: list[str] = field(default_factory=list)
    model: str = ""
    cut: bool = False


def _model(conversation: Path) -> str:
    """``agent.llm.model`` of the folder's ``base_state.json``, ``""`` when there is none."""
    state = conversation / "base_state.json"
    if not state.is_file():
        return ""
    try:
        doc = orjson.loads(read_regular(state, code="io_error", limit=MAX_LOG_BYTES))
    except orjson.JSONDecodeError:
        return ""
    agent = doc.get("agent") if isinstance(doc, dict) else None
    llm = agent.get("llm") if isinstance(agent, dict) else None
    model = llm.get("model") if isinstance(llm, dict) else None
    return model if isinstance(model, str) else ""


def read_folder(
    path: Path, *, strict: bool, stats: Stats, refuse: Callable[[str], CaseError]
) -> Folder:
    """The events of the conversation folder ``path`` (module docstring); ``refuse`` builds
    the ``import_invalid`` error for a message."""
    root = path / "events" if (path / "events").is_dir() else path
    files = sorted(
        (int(m.group(1)), p.name, p)
        for p in root.iterdir()
        if (m := EVENT_FILE.match(p.name)) and p.is_file()
    )
    if not files:
        raise refuse(f"no event file in {root} (events/event-<n>-<id>.json or events/<n>.json)")
    out = Folder(model=_model(root.parent if root.name == "events" else root))
    rel = f"{root.name}/" if root != path else ""
    expected = files[0][0]
    for k, (idx, name, p) in enumerate(files):
        where = f"{rel}{name}"
        if idx != expected:
            why = f"{where}: events {expected} to {idx - 1} are missing"
            if strict:
                raise refuse(why)
            stats.warn(k + 1, "import_repaired", "missing_event", why)
        expected = idx + 1
        try:
            read = read_document(read_regular(p, code="io_error", limit=MAX_LOG_BYTES), where)
            why = read.stops  # "" for a whole file
        except NotJson as exc:
            read, why = None, exc.message
        if read is None or why:
            # the last file cut short is the event being written when the writer stopped
            last = read is not None and k == len(files) - 1
            if strict:
                raise refuse(why) from None
            if last:
                why += ": the event is dropped, the folder read to the event before"
            code, reason = (
                ("import_repaired", "cut_record") if last else ("import_skipped", "invalid_line")
            )
            stats.warn(k + 1, code, reason, why)
            out.cut = out.cut or last
            continue
        out.events.append(read.value)
        out.names.append(where)
    return out
