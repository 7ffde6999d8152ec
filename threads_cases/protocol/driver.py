"""The driver entry point: ``python -m threads_cases.protocol.driver`` serves the Python
implementation over stdin/stdout (spec/driver-protocol.md).

The two halves of the protocol live in :mod:`.client` (``DriverImplementation``, the
``Implementation`` type) and :mod:`.server` (``serve``, ``handle_request``,
``PythonImplementation``); the names below are re-exported for code written before the split.
The client's names load on first use: a driver process only serves.
"""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING, Any

from .server import serve

if TYPE_CHECKING:
    from .client import MAX_LINE, MAX_RESTARTS, PROTOCOL, DriverImplementation, Implementation

__all__ = [
    "MAX_LINE",
    "MAX_RESTARTS",
    "PROTOCOL",
    "DriverImplementation",
    "Implementation",
    "serve",
]


def __getattr__(name: str) -> Any:
    if name in __all__:
        from . import client

        return getattr(client, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def main() -> int:
    """Serve on stdin/stdout; ``THREADS_CASES_ISOLATION=none`` turns the egress guard off."""
    import os

    if os.environ.get("THREADS_CASES_ISOLATION") == "none":
        from ..reference.egress import unguarded

        with unguarded():
            return serve()
    return serve()


if __name__ == "__main__":
    sys.exit(main())
