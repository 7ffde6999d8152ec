"""Sandbox bytes a log knows only by hash, supplied from a folder (``save --sandbox DIR``).

A log may record a sandbox file by its sha256 alone (``sandbox_read``/``sandbox_wrote`` with
``"artifact": null``). The case then holds it hash-only (spec/replay.md 2.3) unless the
bytes are given: :func:`supply_sandbox_bytes` reads ``DIR/<path>`` for each such file the
replay starts with (the prefix state's files and the turn's reads) and adds the bytes to the
artifact store, after checking them against the recorded sha256 (spec/case-format.md 5.9).
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from ..core.errors import CaseError
from ..core.reducer import Reducer
from .artifacts import ArtifactStore
from .sandbox import check_path


def _wanted(events: Sequence[dict[str, Any]], at: str) -> list[tuple[str, str]]:
    """``(path, sha256)`` of the prefix state's files (by path, in code point order: the
    state's own order is not one every language keeps), then of the turn's reads before any
    write of the same path, in log order, up to the turn's end."""
    idx = next((i for i, e in enumerate(events) if e["event_id"] == at), None)
    if idx is None:
        return []
    reducer = Reducer()
    for e in events[: idx + 1]:
        reducer.apply(e)
    out = [(p, sha) for p, sha in sorted(reducer.state["sandbox"]["files"].items()) if sha]
    written: set[str] = set()
    for e in events[idx + 1 :]:
        d = e["data"]
        if e["type"] == "sandbox_wrote":
            written.add(d["path"])
        elif e["type"] == "sandbox_read" and d["path"] not in written and d["sha256"]:
            out.append((d["path"], d["sha256"]))
        elif e["type"] in ("turn_completed", "turn_failed"):
            break
    return out


def supply_sandbox_bytes(
    events: Sequence[dict[str, Any]], at: str, store: ArtifactStore, directory: Path
) -> ArtifactStore:
    """A store holding ``store``'s bytes plus, for each file the replay of the turn after
    ``at`` starts with whose bytes ``store`` lacks, the bytes of ``directory/<path>`` when
    that file exists.

    Raises ``CaseError("invalid_request")`` when ``directory`` is not a folder, or when a
    file's bytes do not hash to the recorded sha256 (naming the path and both hashes).
    """
    if not directory.exists():
        raise CaseError("invalid_request", f"--sandbox folder {directory} does not exist")
    if not directory.is_dir():
        raise CaseError(
            "invalid_request",
            f"--sandbox {directory} is not a folder",
            hint="pass the folder holding the sandbox's files, not one of the files",
        )
    root = directory.resolve()
    out = ArtifactStore(dict(store.blobs))
    for path, sha in _wanted(events, at):
        if out.get(sha) is not None:
            continue
        target = (root / check_path(path)).resolve()
        if not target.is_relative_to(root) or not target.is_file():
            continue
        data = target.read_bytes()
        got = hashlib.sha256(data).hexdigest()
        if got != sha:
            raise CaseError(
                "invalid_request",
                f"--sandbox {directory}: {path} has sha256 {got}, but the log recorded {sha}",
                file=str(target),
                hint="give the folder holding the files as they were when the turn ran",
            )
        out.put(data)
    return out
