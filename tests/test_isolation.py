"""Choosing isolation (threads_cases/harness/isolation.py, spec/replay.md 9.1): modes,
labels, the report header and the `run --isolation` option, run as real subprocesses."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import cli

from threads_cases.core.errors import CaseError
from threads_cases.core.schemas import validator
from threads_cases.harness.isolation import (
    check_mode,
    default_isolation,
    label,
    netns_command,
    wrap_command,
)
from threads_cases.harness.registry import open_implementation
from threads_cases.harness.runner import isolation_of

ROOT = Path(__file__).resolve().parent.parent
CASE = ROOT / "spec" / "conformance" / "cases" / "reads-notes"


def test_an_unknown_mode_is_invalid_request() -> None:
    with pytest.raises(CaseError) as err:
        check_mode("chroot")
    assert err.value.code == "invalid_request"


def test_labels_say_what_actually_runs() -> None:
    assert label("threads-py", "guard") == "guard"
    assert label("threads-ts", "guard") == "guard"
    assert label("my-driver", "guard") == "none"  # no guard this tool knows of
    assert label("my-driver", "netns") == "netns"
    assert isolation_of(open_implementation("threads-py")) == "guard"
    assert isolation_of(open_implementation("threads-py", isolation="none")) == "none"
    assert default_isolation() == ("netns" if netns_command() else "guard")


@pytest.mark.skipif(netns_command() is None, reason="no tool can create a network namespace")
def test_netns_wraps_the_driver_command_and_runs_threads_py_as_a_driver() -> None:
    cmd = wrap_command(["node", "driver.js"], "netns")
    assert cmd[-2:] == ["node", "driver.js"] and len(cmd) > 2
    impl = open_implementation("threads-py", isolation="netns")
    try:
        assert isolation_of(impl) == "netns"
        assert impl.hello()["implementation"]["name"] == "threads-py"
    finally:
        impl.close()


@pytest.mark.parametrize("mode", ["guard", "none"])
def test_the_report_header_names_each_implementations_isolation(tmp_path: Path, mode: str) -> None:
    out = cli(
        "run",
        str(CASE),
        "--impl",
        "threads-py",
        "--isolation",
        mode,
        "--format",
        "json",
        cwd=tmp_path,
    )
    assert out.returncode == 0, out.stderr
    lines = [json.loads(x) for x in out.stdout.splitlines()]
    assert lines[0]["isolation"] == {"threads-py": mode}
    assert not list(validator("report.schema.json").iter_errors(lines[0]))
    assert f"isolation: threads-py {mode}" in out.stderr
    assert ("warning:" in out.stderr) == (mode == "none")


def test_run_refuses_an_unknown_isolation(tmp_path: Path) -> None:
    out = cli("run", str(CASE), "--isolation", "jail", "--format", "json", cwd=tmp_path)
    assert out.returncode == 2
    assert json.loads(out.stdout)["code"] == "invalid_request"


def test_run_defaults_to_netns_when_available_and_says_so(tmp_path: Path) -> None:
    out = cli("run", str(CASE), "--impl", "threads-py", "--format", "json", cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    mode = "netns" if netns_command() else "guard"
    assert json.loads(out.stdout.splitlines()[0])["isolation"] == {"threads-py": mode}
    assert f"isolation: threads-py {mode}" in out.stderr
