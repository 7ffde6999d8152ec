"""The ``threads-cases`` command line: a thin layer over the library API.

Each command module registers its commands on :data:`app`; :func:`main` runs it and turns a
:class:`~threads_cases.core.errors.CaseError` into ``error[code]: location: message`` plus a hint on
stderr and the exit status of the code, never a traceback.

Importing this package is cheap: the command modules (and typer) load on the first use of
:data:`app` or :func:`main`, and ``threads-cases --version`` loads none of them. :func:`main`
loads only the module of the command named on the command line (:data:`COMMANDS`); help,
completion and a name it does not know load every module.
"""

from __future__ import annotations

import sys
from types import ModuleType
from typing import Any

__all__ = ["COMMANDS", "app", "main"]

#: command name -> the module that registers it (a start-up shortcut only: a command missing
#: here still works, every module is then loaded; tests/test_fast_start.py keeps it true)
COMMANDS: dict[str, str] = {
    "accept": "accept_commands",
    "save": "case_commands",
    "init": "case_commands",
    "run": "run_commands",
    "conformance": "conformance_commands",
    "coverage": "coverage_commands",
    "implementations": "conformance_commands",
    "import": "import_commands",
    "turns": "import_commands",
    "draft": "import_commands",
    "supply": "supply_commands",
    "reduce": "log_commands",
    "validate": "log_commands",
    "show": "review_commands",
    "diff": "diff_commands",
    "fmt": "review_commands",
    "list": "review_commands",
    "stale": "review_commands",
    "report": "report_commands",
    "baseline": "baseline_commands",
}


def _load(only: str | None = None) -> Any:
    """Import the ``*_commands`` module ``only``, or every one of this package (each
    registers its commands on :data:`app`)."""
    import importlib

    from .app import app

    if only is not None:
        importlib.import_module(f"{__name__}.{only}")
        # importing the submodule .app bound the package's `app` to it: unbind it, so that
        # `threads_cases.cli.app` stays the Typer object with every command (__getattr__)
        if isinstance(globals().get("app"), ModuleType):
            del globals()["app"]
        return app
    import pkgutil

    for module in sorted(m.name for m in pkgutil.iter_modules(__path__)):
        if module.endswith("_commands"):
            importlib.import_module(f"{__name__}.{module}")
    globals()["app"] = app  # the Typer object, not the submodule of the same name
    return app


def _command_module(argv: list[str]) -> str | None:
    """The module of the command ``argv`` names, or None (help, completion, an unknown
    name: every module is needed)."""
    import os

    if any(k.startswith("_") and k.endswith("_COMPLETE") for k in os.environ):
        return None  # shell completion lists every command
    words = [a for a in argv if not a.startswith("-")]
    if not words or any(a in ("-h", "--help") for a in argv[: argv.index(words[0])]):
        return None
    return COMMANDS.get(words[0])


def main() -> None:
    """Console-script entry point."""
    if sys.argv[1:] == ["--version"]:  # the one answer that needs no command module
        from .._version import __version__

        print(f"threads-cases {__version__}")
        return
    _load(_command_module(sys.argv[1:]))
    from .app import main as run

    run()


def __getattr__(name: str) -> Any:
    if name == "app":
        return _load()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
