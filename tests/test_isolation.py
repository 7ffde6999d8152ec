"""Choosing isolation (threads_cases/harness/run/isolation.py, spec/replay.md 9.1): modes,
labels, the report header and the `run --isolation` option, run as real subprocesses."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest
from conftest import cli

from threads_cases.core.errors import CaseError
from threads_cases.core.schemas import validator
from threads_cases.harness.run.isolation import (
    check_mode,
    default_isolation,
    label,
    netns_command,
    wrap_command,
)
from threads_cases.harness.run.registry import open_implementation
from threads_cases.harness.run.runner import isolation_of
from threads_cases.protocol.client import DriverImplementation, unstartable
from threads_cases.protocol.forked_driver import fork_seal_works, start_forked

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


def test_unstartable_says_why_a_command_cannot_start(tmp_path: Path) -> None:
    script = tmp_path / "drv"
    assert unstartable(["./drv"], str(tmp_path)) == "No such file or directory"
    assert unstartable(["no-such-program-anywhere"]) == "No such file or directory"
    script.write_text("#!/bin/sh\n")
    assert unstartable(["./drv"], str(tmp_path)) == "Permission denied"
    script.chmod(0o755)
    assert unstartable(["./drv"], str(tmp_path)) is None
    assert unstartable([str(tmp_path)]) == "Permission denied"  # a folder
    assert unstartable(["sh"]) is None


def _launched(tmp_path: Path, command: list[str], launcher: tuple[str, ...]) -> CaseError:
    impl = DriverImplementation(
        "mine", command, dialect="threads-py", cwd=str(tmp_path), launcher=launcher
    )
    try:
        with pytest.raises(CaseError) as info:
            impl.hello()
        # never started: unavailable, not a crash to retry
        assert (impl.restarts == 0) is (info.value.code == "driver_unavailable")
        return info.value
    finally:
        impl.close()


def test_a_missing_driver_under_a_launcher_is_unavailable_not_crashed(tmp_path: Path) -> None:
    # the launcher would run it inside a namespace: it is checked before, never launched
    err = _launched(tmp_path, ["./my-driver"], ("/bin/sh", "-c", "exit 99", "sh"))
    assert err.code == "driver_unavailable", err.message
    assert err.message.startswith("cannot start mine (./my-driver): No such file or directory")


def test_a_launcher_that_cannot_execute_the_driver_is_unavailable(tmp_path: Path) -> None:
    # what unshare prints when the exec inside the namespace fails (a bad #! interpreter)
    (tmp_path / "drv").write_text("#!/nonexistent/interpreter\n")
    (tmp_path / "drv").chmod(0o755)
    says = 'echo "sh: failed to execute $0: No such file or directory" >&2; exit 127'
    err = _launched(tmp_path, ["./drv"], ("/bin/sh", "-c", says))
    assert err.code == "driver_unavailable", err.message
    assert "cannot start mine (./drv): No such file or directory" in err.message
    # a driver that ran and exited is still a crash
    err = _launched(tmp_path, ["./drv"], ("/bin/sh", "-c", "echo boom >&2; exit 3"))
    assert err.code == "driver_crashed"


@pytest.mark.parametrize("mode", ["netns", "guard"])
def test_a_configured_driver_that_is_missing_is_unavailable_under_every_isolation(
    tmp_path: Path, mode: str
) -> None:
    if mode == "netns" and netns_command() is None:
        pytest.skip("no tool can create a network namespace here")
    (tmp_path / "pyproject.toml").write_text(
        '[tool.threads-cases.implementations.my-impl]\ncommand = ["./my-driver"]\n'
    )
    for name in ("reads-notes", "lists-files"):
        shutil.copytree(CASE.parent / name, tmp_path / "cases" / name)
    p = cli("run", "cases", "--impl", "my-impl", "--isolation", mode, cwd=tmp_path)
    assert p.returncode == 3, p.stdout
    assert "driver_crashed" not in p.stdout and "╭" not in p.stdout  # no panel per case
    assert (
        "error[driver_unavailable]: my-impl could not start (2 case(s)): cannot start my-impl "
        f"({tmp_path / 'my-driver'}): No such file or directory; its command must be" in p.stdout
    ), p.stdout


ESCAPES = r"""
import ctypes, json, os, subprocess
out = {}
libc = ctypes.CDLL(None, use_errno=True)
try:
    fd = os.open(f"/proc/{os.getppid()}/ns/net", os.O_RDONLY)
    out["setns"] = libc.setns(fd, 0x40000000) == 0
except OSError:
    out["setns"] = False
def ok(*argv):
    return subprocess.run(argv, capture_output=True, timeout=30).returncode == 0
out["nsenter"] = ok("nsenter", "-t", str(os.getppid()), "-n", "true")
out["unshare --net"] = ok("unshare", "--net", "true")
out["unshare --user"] = ok("unshare", "--user", "--map-root-user", "true")
try:
    with open("/proc/sys/user/max_user_namespaces", "w") as fh:
        fh.write("10")
    out["raise the limit"] = True
except OSError:
    out["raise the limit"] = False
print(json.dumps(out))
"""


def _escapes(prefix: tuple[str, ...] | list[str]) -> dict[str, bool]:
    import subprocess
    import sys

    done = subprocess.run(
        [*prefix, sys.executable, "-c", ESCAPES], capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr
    out: dict[str, bool] = json.loads(done.stdout)
    return out


@pytest.mark.skipif(
    netns_command() is None or not shutil.which("nsenter"), reason="no namespace tool here"
)
def test_nothing_inside_netns_can_leave_or_make_a_namespace_even_as_root() -> None:
    """replay.md 9.1: under the launcher `netns` uses, `setns` into the parent's network
    namespace, `nsenter -t $PPID -n`, `unshare` (network or user) and raising the user
    namespace limit all fail, whoever runs the harness (CI: root)."""
    assert _escapes(netns_command() or ()) == dict.fromkeys(
        ["setns", "nsenter", "unshare --net", "unshare --user", "raise the limit"], False
    )


@pytest.mark.skipif(
    os.geteuid() != 0 or not shutil.which("nsenter") or not shutil.which("unshare"),
    reason="the control needs root, nsenter and unshare",
)
def test_the_control_a_plain_network_namespace_can_be_left_by_root() -> None:
    """Why `netns` is not a plain `unshare --net`: root keeps CAP_SYS_ADMIN there and joins
    the host's namespace again (so the escape probes above do detect a leak)."""
    got = _escapes([shutil.which("unshare") or "unshare", "--net", "--"])
    assert got["setns"] and got["nsenter"] and got["unshare --net"], got


@pytest.mark.skipif(
    not fork_seal_works() or not shutil.which("nsenter"), reason="a fork cannot be sealed here"
)
def test_nothing_inside_a_sealed_fork_can_leave_or_make_a_namespace_even_as_root(
    tmp_path: Path,
) -> None:
    """The same escapes from a sealed fork of the harness (protocol/forked_driver.py, how
    `run` starts threads-py's driver under netns): all fail, as under the launcher."""
    import sys

    script = tmp_path / "escapes.py"
    script.write_text(ESCAPES, encoding="utf-8")
    proc = start_forked([sys.executable, str(script)], dict(os.environ))
    out, err = proc.stdout.read(), proc.stderr.read()
    proc.stdin.close()
    assert proc.wait(timeout=120) == 0, err
    assert json.loads(out) == dict.fromkeys(
        ["setns", "nsenter", "unshare --net", "unshare --user", "raise the limit"], False
    )


def _children_like_me() -> list[int]:
    """The pids of this process's children whose command line is this process's: forks."""
    me = Path("/proc/self/cmdline").read_bytes()
    out = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            ppid = int(stat.read_text().rsplit(")", 1)[1].split()[1])
            if ppid == os.getpid() and (stat.parent / "cmdline").read_bytes() == me:
                out.append(int(stat.parent.name))
        except (OSError, ValueError, IndexError):
            continue
    return out


@pytest.mark.skipif(not fork_seal_works(), reason="a fork cannot be sealed here")
def test_threads_py_under_netns_is_a_sealed_fork_not_a_second_interpreter() -> None:
    before = set(_children_like_me())
    impl = open_implementation("threads-py", isolation="netns")
    try:
        assert impl.hello()["implementation"]["name"] == "threads-py"
        (driver,) = set(_children_like_me()) - before  # no interpreter was started
        status = Path(f"/proc/{driver}/status").read_text()
        caps = [line.split()[1] for line in status.splitlines() if line.startswith("Cap")]
        assert caps and all(int(c, 16) == 0 for c in caps), status
        assert "NoNewPrivs:\t1" in status
        assert os.readlink(f"/proc/{driver}/ns/net") != os.readlink("/proc/self/ns/net")
        assert os.readlink(f"/proc/{driver}/ns/user") != os.readlink("/proc/self/ns/user")
    finally:
        impl.close()


START = r"""
import json, os, sys, warnings
filters = [(a, getattr(m, "pattern", m), c.__name__, getattr(mod, "pattern", mod))
           for a, m, c, mod, _ in warnings.filters]
print(json.dumps({"argv": sys.argv, "path0": sys.path[0], "env": dict(os.environ),
                  "filters": filters, "warnoptions": sys.warnoptions, "name": __name__}))
"""


@pytest.mark.skipif(not fork_seal_works(), reason="a fork cannot be sealed here")
def test_a_sealed_fork_starts_as_a_fresh_interpreter_would(tmp_path: Path) -> None:
    """What the driver sees in a fork is what `python SCRIPT ARGS` would give it: argv,
    sys.path[0], exactly the driver's environment, the default warning filters (not this
    test runner's) and `__main__`."""
    import subprocess
    import sys
    import warnings

    script = tmp_path / "start.py"
    script.write_text(START, encoding="utf-8")
    env = {"PATH": os.environ.get("PATH", ""), "ONLY_THIS": "1"}
    for name in ("PYTHONPATH", "PYTHONDONTWRITEBYTECODE", "PYTHONPYCACHEPREFIX"):
        if name in os.environ:
            env[name] = os.environ[name]
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # the harness's own filters stay out of the fork
        proc = start_forked([sys.executable, str(script), "a", "b"], env, cwd=str(tmp_path))
        forked, err = proc.stdout.read(), proc.stderr.read()
    proc.stdin.close()
    assert proc.wait(timeout=60) == 0, err
    fresh = subprocess.run(
        [sys.executable, str(script), "a", "b"], env=env, cwd=tmp_path, capture_output=True
    )
    assert json.loads(forked) == json.loads(fresh.stdout)


@pytest.mark.skipif(not fork_seal_works(), reason="a fork cannot be sealed here")
def test_a_forked_driver_that_died_is_started_again_and_every_fork_is_reaped() -> None:
    import select
    import signal

    impl = open_implementation("threads-py", isolation="netns")
    before = set(_children_like_me())
    try:
        assert impl.hello()["implementation"]["name"] == "threads-py"
        (driver,) = set(_children_like_me()) - before
        pidfd = os.pidfd_open(driver)
        os.kill(driver, signal.SIGKILL)
        assert select.select([pidfd], [], [], 60)[0]  # waits for its exit, not a sleep
        os.close(pidfd)
        answer = impl.request({"cmd": "canonicalize", "value": {"b": 1, "a": 2}})
        assert answer["text"] == '{"a":2,"b":1}'
        (again,) = set(_children_like_me()) - before
        assert again != driver
    finally:
        impl.close()
    assert not set(_children_like_me()) - before  # reaped at close: no zombie left
