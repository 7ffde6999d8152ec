"""Dialects: how each implementation spells the envelope and the state (spec/dialects.md).

A dialect is data, ``spec/dialects/<name>.json``::

    {"name": "threads-ts", "language": "typescript", "format": 1,
     "envelope": {"<canonical key>": "<dialect key>", ...},
     "state":    {"<canonical key>": "<dialect key>", ...}}

Only the top-level keys of an event envelope and of a state are renamed; ``data`` and every
state value are identical in all dialects. One generic codec (:class:`Dialect`) reads every
file, so adding a language means adding a file.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from functools import cache
from typing import Any

from .errors import CaseError
from .resources import spec_dir
from .shapes import JsonObject, JsonValue
from .strictjson import read_json_file
from .texts import quote

CANONICAL = "threads-py"


@dataclass(frozen=True)
class Dialect:
    """A key-renaming codec between the canonical spelling and one implementation's."""

    name: str
    envelope: dict[str, str]
    state: dict[str, str]

    def _encode(self, value: Mapping[str, Any], table: dict[str, str]) -> dict[str, Any]:
        if not table:
            return value if isinstance(value, dict) else dict(value)
        return {table.get(k, k): v for k, v in value.items()}

    def _decode(self, value: dict[str, Any], table: dict[str, str], what: str) -> dict[str, Any]:
        if not table:
            return value
        reverse = {v: k for k, v in table.items()}
        out: dict[str, Any] = {}
        for k, v in value.items():
            if k in table and k not in reverse:
                raise CaseError(
                    "log_invalid",
                    f"{what} key {quote(k)} is not spelled that way in dialect {self.name}; "
                    f"it is {quote(table[k])}",
                    pointer="/" + k,
                    hint=f"the file is in another dialect than {self.name}; check --dialect",
                )
            out[reverse.get(k, k)] = v
        return out

    def encode_event(self, event: JsonObject) -> JsonObject:
        """Canonical envelope ``{event_id, thread_id, ...}`` -> this dialect's envelope."""
        return self._encode(event, self.envelope)

    def decode_event(self, event: JsonObject) -> JsonObject:
        """This dialect's envelope -> canonical. Raises ``log_invalid`` for a key spelled as
        another dialect spells it."""
        return self._decode(event, self.envelope, "envelope")

    def encode_state(self, state: Mapping[str, JsonValue]) -> JsonObject:
        """Canonical state ``{thread_id, last_seq, ...}`` -> this dialect's state."""
        return self._encode(state, self.state)

    def decode_state(self, state: JsonObject) -> JsonObject:
        """This dialect's state -> canonical (``log_invalid`` on a wrongly spelled key)."""
        return self._decode(state, self.state, "state")


def dialect_names() -> list[str]:
    """Names of the dialects shipped under spec/dialects/, sorted."""
    return sorted(p.stem for p in (spec_dir() / "dialects").glob("*.json"))


@cache
def get_dialect(name: str) -> Dialect:
    """Load ``spec/dialects/<name>.json``. Raises ``CaseError("dialect_unknown")``."""
    if name not in dialect_names():
        raise CaseError(
            "dialect_unknown",
            f"unknown dialect {quote(name)}; known: {', '.join(dialect_names())}",
        )
    raw = read_json_file(spec_dir() / "dialects" / f"{name}.json")
    return Dialect(
        name=raw["name"],
        envelope=dict(raw.get("envelope", {})),
        state=dict(raw.get("state", {})),
    )
