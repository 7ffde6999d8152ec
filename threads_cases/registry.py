"""Which implementations exist and how to start them (spec/driver-protocol.md, section 6)."""

from __future__ import annotations

from .errors import CaseError
from .implementations import Implementation


def open_implementation(name: str) -> Implementation:
    """Start the implementation ``name``. Raises ``CaseError("driver_unavailable")`` when it
    cannot be started, and ``CaseError("invalid_request")`` for an unknown name."""
    if name == "threads-py":
        from .implementations import PythonImplementation

        return PythonImplementation()
    raise CaseError("driver_unavailable", f"implementation {name!r} is not available")
