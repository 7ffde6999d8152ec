"""Which implementations exist and how to start them (spec/driver-protocol.md, section 6).

Built in: ``threads-py`` (in process, or a subprocess driver with ``isolated``) and
``threads-ts`` (``node ts/dist/driver.js``). Users add their own in ``pyproject.toml``::

    [tool.threads-cases.implementations.my-impl]
    command = ["./my-driver"]
    dialect = "threads-py"
    timeout = 30

or the same table without the ``tool.threads-cases.`` prefix in ``threads-cases.toml``.
"""

from __future__ import annotations

import shutil
import sys
import tomllib
from pathlib import Path
from typing import Any

from ..core.dialects import get_dialect
from ..core.errors import CaseError
from ..core.resources import data_root
from ..protocol.client import DriverImplementation, Implementation
from ..protocol.server import PythonImplementation

BUILTIN = ("threads-py", "threads-ts")
BUILD_HINT = "build it with: cd ts && npm ci && npm run build (or run `nox -s ts`)"


def ts_driver_path() -> Path:
    """Where the built TypeScript driver is expected (``ts/dist/driver.js``)."""
    return data_root() / "ts" / "dist" / "driver.js"


def configured(start: Path | None = None) -> dict[str, dict[str, Any]]:
    """User implementations from ./threads-cases.toml or ./pyproject.toml (first found).

    Raises ``CaseError("invalid_request")`` for a malformed table.
    """
    base = start or Path.cwd()
    table: dict[str, Any] = {}
    src = base / "threads-cases.toml"
    if src.is_file():
        table = _load(src).get("implementations", {})
    else:
        src = base / "pyproject.toml"
        if src.is_file():
            table = _load(src).get("tool", {}).get("threads-cases", {}).get("implementations", {})
    out = {}
    for name, spec in table.items():
        cmd = spec.get("command") if isinstance(spec, dict) else None
        if not (isinstance(cmd, list) and cmd and all(isinstance(c, str) for c in cmd)):
            raise CaseError(
                "invalid_request",
                f'implementation {name!r} in {src} needs command = ["..."]',
                file=str(src),
            )
        dialect = spec.get("dialect", "threads-py")
        get_dialect(dialect)
        out[name] = {
            "command": cmd,
            "dialect": dialect,
            "timeout": float(spec.get("timeout", 60)),
            "source": str(src),
        }
    return out


def _load(path: Path) -> dict[str, Any]:
    try:
        return tomllib.loads(path.read_text("utf-8"))
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise CaseError("invalid_request", f"cannot read {path}: {exc}", file=str(path)) from None


def available_implementations() -> list[str]:
    """Every implementation name: the built-ins, then configured ones."""
    return [*BUILTIN, *[n for n in configured() if n not in BUILTIN]]


class UnavailableImplementation:
    """Stands in for an implementation that cannot run here; every case is skipped with
    ``driver_unavailable`` and the reason."""

    def __init__(self, name: str, dialect: str, reason: str) -> None:
        self.name = name
        self.dialect = dialect
        self.reason = reason
        self.restarts = 0

    def hello(self) -> dict[str, Any]:
        raise CaseError("driver_unavailable", self.reason, hint=BUILD_HINT)

    def request(self, message: dict[str, Any]) -> dict[str, Any]:
        raise CaseError("driver_unavailable", self.reason, hint=BUILD_HINT)

    def close(self) -> None:
        pass


def open_implementation(
    name: str,
    *,
    timeout: float | None = None,
    isolated: bool = False,
    validate_protocol: bool = False,
) -> Implementation:
    """Start implementation ``name`` (lazily: the driver process starts on first request).

    ``timeout`` (seconds per request) overrides the implementation's configured timeout;
    without it the configured one, else 60 s, applies.

    Raises ``CaseError("invalid_request")`` for an unknown name.
    """
    if name == "threads-py":
        if not isolated:
            return PythonImplementation()
        return DriverImplementation(
            name,
            [sys.executable, "-m", "threads_cases.protocol.driver"],
            dialect="threads-py",
            timeout=timeout or 60.0,
            validate_protocol=validate_protocol,
        )
    if name == "threads-ts":
        node = shutil.which("node")
        driver = ts_driver_path()
        if node is None:
            return UnavailableImplementation(name, "threads-ts", "node is not installed")
        if not driver.is_file():
            return UnavailableImplementation(
                name, "threads-ts", f"the TypeScript driver is not built ({driver})"
            )
        return DriverImplementation(
            name,
            [node, str(driver)],
            dialect="threads-ts",
            timeout=timeout or 60.0,
            validate_protocol=validate_protocol,
        )
    user = configured()
    if name in user:
        spec = user[name]
        return DriverImplementation(
            name,
            spec["command"],
            dialect=spec["dialect"],
            timeout=timeout or spec["timeout"],
            validate_protocol=validate_protocol,
        )
    raise CaseError(
        "invalid_request",
        f"unknown implementation {name!r}; known: {', '.join(available_implementations())}",
    )


def resolve_implementations(
    names: list[str],
    *,
    timeout: float | None = None,
    isolated: bool = False,
    validate_protocol: bool = False,
    required: bool = False,
) -> list[Implementation]:
    """:func:`open_implementation` for each name, refusing unknown names before any start.

    ``required`` marks the implementations as asked for by name (``--impl``): one that
    cannot start then gives ``error`` verdicts instead of ``skip``, so a CI run cannot pass
    without running it.
    """
    known = available_implementations()
    for n in names:
        if n not in known:
            raise CaseError(
                "invalid_request", f"unknown implementation {n!r}; known: {', '.join(known)}"
            )
    out = [
        open_implementation(
            n, timeout=timeout, isolated=isolated, validate_protocol=validate_protocol
        )
        for n in dict.fromkeys(names)
    ]
    for impl in out:
        impl.required = required  # type: ignore[attr-defined]
    return out
