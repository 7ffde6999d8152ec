"""The ``threads-cases`` command line: a thin layer over the library API.

Each command module registers its commands on :data:`app`; :func:`main` runs it and turns a
:class:`~threads_cases.core.errors.CaseError` into ``error[code]: location: message`` plus a hint on
stderr and the exit status of the code, never a traceback.

Importing this package is cheap: the command modules (and typer) load on the first use of
:data:`app` or :func:`main`, and ``threads-cases --version`` loads none of them.
"""

from __future__ import annotations

import sys
from typing import Any

__all__ = ["app", "main"]


def _load() -> Any:
    """Import every ``*_commands`` module of this package (each registers its commands)."""
    import importlib
    import pkgutil

    from .app import app

    for module in sorted(m.name for m in pkgutil.iter_modules(__path__)):
        if module.endswith("_commands"):
            importlib.import_module(f"{__name__}.{module}")
    globals()["app"] = app  # the Typer object, not the submodule of the same name

    return app


def main() -> None:
    """Console-script entry point."""
    if sys.argv[1:] == ["--version"]:  # the one answer that needs no command module
        from .._version import __version__

        print(f"threads-cases {__version__}")
        return
    _load()
    from .app import main as run

    run()


def __getattr__(name: str) -> Any:
    if name == "app":
        return _load()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
