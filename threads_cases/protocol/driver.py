"""The driver entry point: ``python -m threads_cases.protocol.driver`` serves the Python
implementation over stdin/stdout (spec/driver-protocol.md).

The two halves of the protocol live in :mod:`.client` (``DriverImplementation``, the
``Implementation`` type) and :mod:`.server` (``serve``, ``handle_request``,
``PythonImplementation``); a driver process loads only the server.
"""

from __future__ import annotations

import sys

from .server import serve


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
