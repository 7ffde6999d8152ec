"""Which files a case may be written with (spec/case-format.md 6.6): the checks every writer
makes before a byte reaches the disk, and the strict reading of a driver's artifacts
(spec/driver-protocol.md 2.6).

* Every path is relative and inside the case: segments of ASCII letters, digits, ``.``,
  ``_`` and ``-`` (1 to 255, not starting with ``.``: no ``..``, no hidden file) joined by
  ``/``, none of them a Windows device name (``CON``, ``NUL``, ``COM1``...).
* ``artifacts/<hex>`` holds the bytes whose SHA-256 is ``<hex>`` (64 lower-case hex
  digits): a file whose bytes do not match its name would be a corrupt case.
* A driver's ``thread.artifacts`` maps such a hex name to the base64 of its bytes (RFC 4648,
  standard alphabet, padded); anything else is ``invalid_request`` at its pointer.
"""

from __future__ import annotations

import base64
import hashlib
import re
from collections.abc import Mapping
from typing import Any

from ..core.errors import CaseError, pointer_join
from ..core.texts import quote
from .sandbox import is_device_name

_SEGMENT = re.compile(r"[A-Za-z0-9_-][A-Za-z0-9._-]{0,254}")
_HEX64 = re.compile(r"[0-9a-f]{64}")
#: RFC 4648 base64, standard alphabet, with its padding
_BASE64 = re.compile(r"(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?")
PATH_HINT = (
    "a case holds case.json, log.<dialect>.jsonl, expected.<dialect>.json, model.json, "
    "stubs.json, sandbox.json and artifacts/<sha256 hex> (spec/case-format.md 1.1)"
)


def check_case_paths(files: Mapping[str, bytes]) -> None:
    """Refuse, with ``CaseError("invalid_request")``, the first file (by path) whose path
    is not inside the case, holds a device name, or is an artifact whose bytes do not match
    its name."""
    for rel in sorted(files):
        segments = rel.split("/")
        if not all(_SEGMENT.fullmatch(s) for s in segments):
            raise CaseError(
                "invalid_request",
                f"case file {quote(rel)} is not a path inside the case (segments of ASCII "
                "letters, digits, '.', '_' or '-', not starting with '.', joined by '/')",
                hint=PATH_HINT,
            )
        if any(is_device_name(s) for s in segments):
            raise CaseError(
                "invalid_request",
                f"case file {quote(rel)} holds a Windows device name",
                hint=PATH_HINT,
            )
        if segments[0] == "artifacts":
            _check_artifact(rel, segments, files[rel])


def _check_artifact(rel: str, segments: list[str], data: bytes) -> None:
    if len(segments) != 2 or not _HEX64.fullmatch(segments[1]):
        raise CaseError(
            "invalid_request",
            f"case file {quote(rel)}: an artifact is named by the 64 lower-case hex digits of "
            "its sha256",
            hint=PATH_HINT,
        )
    actual = hashlib.sha256(data).hexdigest()
    if actual != segments[1]:
        raise CaseError(
            "invalid_request",
            f"case file {quote(rel)} holds bytes whose sha256 is {actual}: a corrupt case",
            hint="an artifact's file name is the sha256 of its bytes (spec/case-format.md 3.7)",
        )


def decode_artifacts(value: Any) -> dict[str, bytes]:
    """A driver request's ``thread.artifacts`` (``{sha256 hex: base64}``) as bytes by name.
    Raises ``CaseError("invalid_request")`` at ``/thread/artifacts[/<name>]`` for a value
    that is not such an object, a name that is not 64 lower-case hex digits, a value that is
    not padded base64, or bytes whose sha256 is not their name."""
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise CaseError(
            "invalid_request",
            "write_case: thread.artifacts must be {sha256 hex: base64}",
            pointer="/thread/artifacts",
        )
    out: dict[str, bytes] = {}
    for key in sorted(value):
        where = pointer_join(["thread", "artifacts", key])
        text = value[key]
        if not _HEX64.fullmatch(key):
            why = "is not a sha256 (64 lower-case hex digits)"
        elif not isinstance(text, str) or not _BASE64.fullmatch(text):
            why = "is not base64 (RFC 4648, standard alphabet, padded)"
        elif base64.b64encode(data := base64.b64decode(text)).decode("ascii") != text:
            why = "is not base64 (RFC 4648, standard alphabet, padded, zero unused bits)"
        else:
            actual = hashlib.sha256(data).hexdigest()
            if actual == key:
                out[key] = data
                continue
            why = f"holds bytes whose sha256 is {actual}"
        raise CaseError(
            "invalid_request", f"write_case: artifact {quote(key)} {why}", pointer=where
        )
    return out
