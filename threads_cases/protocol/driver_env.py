"""The environment a driver process starts with (spec/driver-protocol.md 5.6): an
allow-list, never the harness's whole environment.

A replay runs the user's tool code (and, where a driver loads it, the user's own agent
module) inside the driver, so a variable the driver inherits is a variable replayed code
can read. Provider keys (``ANTHROPIC_API_KEY``, ``OPENAI_API_KEY``: the harness makes a
live run's model calls itself, spec/replay.md 11.2), tokens and passwords therefore stay
out: a driver gets only the variables named in :data:`ALLOWED` or starting with one of
:data:`ALLOWED_PREFIXES` that are set in the harness's environment, then the names the
user passes on purpose (``pass_env`` in the settings, :func:`check_pass_env`), then the
variables this tool sets itself (``THREADS_CASES_ISOLATION``), live run or not.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Mapping

from ..core.resources import data_root

#: variables a driver keeps when they are set: where programs and files are, the locale,
#: the interpreters' own settings, and the Windows system folders a process needs
ALLOWED = (
    "PATH",
    "HOME",
    "USER",
    "LOGNAME",
    "SHELL",
    "LANG",
    "LANGUAGE",
    "TZ",
    "TERM",
    "NO_COLOR",
    "TMPDIR",
    "TMP",
    "TEMP",
    "SOURCE_DATE_EPOCH",
    "LD_LIBRARY_PATH",
    "PYTHONPATH",
    "PYTHONHOME",
    "PYTHONHASHSEED",
    "PYTHONDONTWRITEBYTECODE",
    "PYTHONPYCACHEPREFIX",
    "PYTHONIOENCODING",
    "PYTHONSAFEPATH",
    "PYTHONUTF8",
    "VIRTUAL_ENV",
    "NODE_PATH",
    "NODE_OPTIONS",
    "NODE_V8_COVERAGE",
    "SYSTEMROOT",
    "SYSTEMDRIVE",
    "WINDIR",
    "COMSPEC",
    "PATHEXT",
    "USERPROFILE",
    "APPDATA",
    "LOCALAPPDATA",
)
#: prefixes a driver keeps: the locale categories, this tool's own variables, and the
#: coverage tools' (coverage.py, pytest-cov), which measure drivers in the test suite
ALLOWED_PREFIXES = ("LC_", "THREADS_CASES_", "COVERAGE_", "COV_CORE_")
#: a name ``pass_env`` accepts: a variable name, or a prefix ending in ``*``
PASS_ENV_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\*?")


def _wanted(name: str, extra: Iterable[str]) -> bool:
    if name in ALLOWED or name.startswith(ALLOWED_PREFIXES):
        return True
    return any(w == name or (w.endswith("*") and name.startswith(w[:-1])) for w in extra)


def driver_environment(
    pass_env: Iterable[str] = (), base: Mapping[str, str] | None = None
) -> dict[str, str]:
    """The variables of ``base`` (default: this process's environment) a driver starts
    with: those :data:`ALLOWED` or under :data:`ALLOWED_PREFIXES`, and those ``pass_env``
    names (``NAME``, or ``PREFIX*`` for every name starting with ``PREFIX``). A name the
    harness does not have is not invented. Comparisons are exact (case-sensitive), also on
    Windows."""
    extra = tuple(pass_env)
    source = os.environ if base is None else base
    return {k: v for k, v in source.items() if _wanted(k, extra)}


def client_environment(
    pass_env: Iterable[str] = (), extra: Mapping[str, str] | None = None
) -> dict[str, str]:
    """The environment of a driver the client starts: :func:`driver_environment`, then
    ``THREADS_CASES_DATA`` naming the folder that holds the shared ``spec/`` and
    ``schemas/`` this client runs with (spec/driver-protocol.md 1.5a; a folder the
    environment names already wins), then the implementation's own settings ``extra``."""
    env = driver_environment(pass_env)
    env.setdefault(DATA_VARIABLE, str(data_root()))
    return {**env, **(extra or {})}


#: The environment variable that tells a driver where the shared data is
#: (spec/driver-protocol.md 1.5a): the folder holding the ``spec/`` and ``schemas/`` the
#: client runs with.
DATA_VARIABLE = "THREADS_CASES_DATA"


def check_pass_env(value: object) -> list[str] | None:
    """``value`` as a list of ``pass_env`` names, or None when it is not a list of names
    matching :data:`PASS_ENV_NAME` (the settings refuse it as ``invalid_request``)."""
    if not isinstance(value, list):
        return None
    if not all(isinstance(v, str) and PASS_ENV_NAME.fullmatch(v) for v in value):
        return None
    return list(value)
