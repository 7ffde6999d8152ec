"""The artifacts of a case and of a log: bytes by sha256 hex, named ``sha256:<hex>`` in the
events (spec/thread-log.md "artifacts", spec/case-format.md: a case's ``artifacts/`` folder).
"""

from __future__ import annotations

from .sandbox import sha256_hex


class ArtifactStore:
    """Bytes by sha256 hex: the artifacts a log refers to (``sha256:<hex>``)."""

    def __init__(self, blobs: dict[str, bytes] | None = None) -> None:
        self.blobs: dict[str, bytes] = dict(blobs or {})

    def put(self, data: bytes) -> str:
        h = sha256_hex(data)
        self.blobs.setdefault(h, bytes(data))
        return h

    def get(self, sha: str) -> bytes | None:
        return self.blobs.get(sha.removeprefix("sha256:"))
