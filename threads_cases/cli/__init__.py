"""The ``threads-cases`` command line: a thin layer over the library API.

Each command module registers its commands on :data:`app`; :func:`main` runs it and turns a
:class:`~threads_cases.core.errors.CaseError` into ``error[code]: location: message`` plus a hint on
stderr and the exit status of the code, never a traceback.
"""

from __future__ import annotations

from . import accept_commands as _accept_commands  # noqa: F401 - registers commands
from . import case_commands as _case_commands  # noqa: F401
from . import conformance_commands as _conformance_commands  # noqa: F401
from . import import_commands as _import_commands  # noqa: F401
from . import log_commands as _log_commands  # noqa: F401
from . import report_commands as _report_commands  # noqa: F401
from . import review_commands as _review_commands  # noqa: F401
from . import run_commands as _run_commands  # noqa: F401
from .app import app, main

__all__ = ["app", "main"]
