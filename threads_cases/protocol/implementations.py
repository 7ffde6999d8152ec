"""Re-exports for code written before the protocol split: the ``Implementation`` type is in
:mod:`.client`, the request handler and ``PythonImplementation`` in :mod:`.server`.
"""

from __future__ import annotations

from .client import Implementation
from .server import CAPABILITIES, PythonImplementation, handle_request, write_case_files

__all__ = [
    "CAPABILITIES",
    "Implementation",
    "PythonImplementation",
    "handle_request",
    "write_case_files",
]
