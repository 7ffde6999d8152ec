"""Redacting a thread before it is saved (spec/case-format.md, "Secrets").

:func:`redact_events` returns the events and artifacts with every credential replaced by its
stable placeholder (threads_cases.case.secrets): in user input, model replies, tool inputs and
results alike, so the stubs and model replies of the case hold the same placeholders the
replayed events will. Artifacts holding credentials are rewritten too, and every reference
to them (artifact ids, sandbox sha256 and sizes) follows, so the sandbox restores
consistently. ``model_requested.request_sha256`` is recomputed from the redacted state when
the log's hashes were the ones its state asks for, so a redacted case still replays as
``pass``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ..core.reducer import Reducer
from ..core.request import build_request, request_sha256
from .artifacts import ArtifactStore
from .sandbox import sha256_hex
from .secrets import redact_bytes, redact_value


def redact_events(
    events: Sequence[dict[str, Any]], store: ArtifactStore
) -> tuple[list[dict[str, Any]], ArtifactStore]:
    """Redacted copies of ``events`` (canonical envelopes) and of the artifact store."""
    remap: dict[str, tuple[str, int]] = {}
    blobs = dict(store.blobs)
    for sha, data in store.blobs.items():
        raw = redact_bytes(data)  # every view of the bytes (UTF-8 or Latin-1, UTF-16)
        if raw != data:
            remap[sha] = (sha256_hex(raw), len(raw))
            blobs[remap[sha][0]] = raw
    out: list[dict[str, Any]] = []
    before = Reducer()
    after = Reducer()
    for ev in events:
        data = redact_value(ev["data"])
        etype = ev["type"]
        if etype == "artifact_added":
            old = data["artifact_id"].removeprefix("sha256:")
            if old in remap:
                data["artifact_id"] = "sha256:" + remap[old][0]
                data["size"] = remap[old][1]
        elif etype in ("sandbox_read", "sandbox_wrote") and data.get("sha256") in remap:
            new_sha, size = remap[data["sha256"]]
            data["sha256"] = new_sha
            data["size"] = size
            if data.get("artifact"):
                data["artifact"] = "sha256:" + new_sha
        elif etype == "model_requested" and data["request_sha256"] == request_sha256(
            build_request(before.state)
        ):
            data["request_sha256"] = request_sha256(build_request(after.state))
        new_ev = {**ev, "data": data}
        before.apply(ev)
        after.apply(new_ev)
        out.append(new_ev)
    return out, ArtifactStore(blobs)
