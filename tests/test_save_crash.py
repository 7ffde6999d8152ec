"""Crash safety of saving a case (threads_cases.case.writer.write_case_dir).

``THREADS_CASES_CRASH_AT=N`` makes a save SIGKILL its own process at its N-th write step.
For every N a child process is killed mid-save; afterwards the target directory must hold
nothing / the old case, or the complete new case - never a mix - and the files beside it are
untouched. The next save cleans the stray temporary directories. The sweep forks the test
process (fast: the thread is already built) and copies a folder saved once per module for
each step; one test runs a fresh interpreter, and eight forked processes race to save the
same case.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from conftest import EXPECT, build_thread

from threads_cases.case import writer as case_mod
from threads_cases.case.directory import CaseExpectation
from threads_cases.reference.thread import Thread

TESTS = Path(__file__).resolve().parent
# the sweep forks this process on purpose (the child only saves and _exits); Python 3.12+
# warns on every fork of a process with threads (pytest-xdist's execnet has some)
pytestmark = pytest.mark.filterwarnings(
    "ignore:This process .* is multi-threaded, use of fork:DeprecationWarning"
)
OTHER = CaseExpectation(must=[{"type": "turn_completed"}])  # gives a different case
EXTRA = 3  # extra artifacts, so a save has more write steps


def files_of(path: Path) -> dict[str, bytes]:
    return {
        p.relative_to(path).as_posix(): p.read_bytes()
        for p in sorted(path.rglob("*"))
        if p.is_file()
    }


def tree(path: Path) -> dict[str, bytes | None]:
    """Every entry under ``path`` (directories as None)."""
    return {
        p.relative_to(path).as_posix(): (p.read_bytes() if p.is_file() else None)
        for p in sorted(path.rglob("*"))
    }


@pytest.fixture(scope="module")
def thread_and_bytes(tmp_path_factory: pytest.TempPathFactory):  # type: ignore[no-untyped-def]
    assert "THREADS_CASES_CRASH_AT" not in os.environ
    t, at = build_thread(EXTRA)
    base = tmp_path_factory.mktemp("reference")
    assert t.save_case("c", at=at, expect=EXPECT, dir=base / "new").ok
    assert t.save_case("c", at=at, expect=OTHER, dir=base / "old").ok
    new, old = files_of(base / "new" / "c"), files_of(base / "old" / "c")
    assert new != old
    # the sweep saves without the replay check (verify runs between the write steps and the
    # swap, no crash point of its own): the same bytes, at half the CPU of a save
    assert t.save_case("c", at=at, expect=EXPECT, dir=base / "unverified", verify=False).ok
    assert files_of(base / "unverified" / "c") == new
    return t, at, new, old


@pytest.fixture(scope="module")
def folders(thread_and_bytes, tmp_path_factory: pytest.TempPathFactory):  # type: ignore[no-untyped-def]
    """``with_old -> folder``: a case folder holding other things (another case, a file, a
    directory named like a stray) and, with ``with_old``, the old case ``c``; each saved
    once here, copied for every step."""
    t, at, _new, _old = thread_and_bytes
    out = {}
    for with_old in (False, True):
        d = tmp_path_factory.mktemp("folder")
        (d / "keep.txt").write_bytes(b"not part of any case\n")
        (d / ".c-not-a-stray").mkdir()
        (d / ".c-not-a-stray" / "x").write_bytes(b"x")
        assert t.save_case("other", at=at, expect=OTHER, dir=d).ok
        if with_old:
            assert t.save_case("c", at=at, expect=OTHER, dir=d).ok
        out[with_old] = d
    return out


def prepare(d: Path, folders: dict[bool, Path], *, with_old: bool) -> dict[str, bytes | None]:
    """A copy of the case folder (with the old case); returns what is beside the case."""
    shutil.copytree(folders[with_old], d)
    return {k: v for k, v in tree(d).items() if k.split("/")[0] != "c"}


def crash_save(t: Thread, at: str, d: Path, n: int, *, exchange: bool) -> int:
    """Fork a child that saves with THREADS_CASES_CRASH_AT=n; return its wait status."""
    pid = os.fork()
    if pid == 0:  # pragma: no cover - the child
        code = 3
        try:
            os.environ["THREADS_CASES_CRASH_AT"] = str(n)
            case_mod._crash_point.count = 0  # type: ignore[attr-defined]
            if not exchange:
                case_mod._exchange = lambda a, b: False  # type: ignore[assignment]
            r = t.save_case("c", at=at, expect=EXPECT, dir=d, overwrite=True, verify=False)
            code = 0 if r.ok else 1
        finally:
            os._exit(code)
    _, status = os.waitpid(pid, 0)
    return status


def strays(d: Path) -> list[str]:
    return sorted(p.name for p in d.iterdir() if p.name.startswith(".c."))


@pytest.mark.parametrize(
    ("mode", "with_old", "exchange"),
    [
        ("fresh", False, True),
        ("fresh-rename", False, False),
        ("overwrite", True, True),
        ("overwrite-rename", True, False),  # the fallback without renameat2(RENAME_EXCHANGE)
    ],
)
def test_a_save_killed_at_any_write_step_leaves_old_or_new(
    thread_and_bytes,
    folders,
    tmp_path: Path,
    mode: str,
    with_old: bool,  # type: ignore[no-untyped-def]
    exchange: bool,
) -> None:
    t, at, new, old = thread_and_bytes
    steps = len(new) + 1 + (1 if with_old else 0)  # one per file, the fsync, the swap
    assert steps >= 12
    killed_with_stray = 0
    saw_new_after_kill = False
    for n in range(1, steps + 2):
        d = tmp_path / f"n{n}"
        beside = prepare(d, folders, with_old=with_old)
        status = crash_save(t, at, d, n, exchange=exchange)
        target = d / "c"
        if n <= steps:
            assert os.WIFSIGNALED(status) and os.WTERMSIG(status) == signal.SIGKILL, (n, status)
        else:  # past the last step: the save completes
            assert os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0, (n, status)
        # never a mix: nothing / the old case, or the complete new case
        if target.exists():
            got = files_of(target)
            assert got in (new, old), (n, sorted(got))
            if not with_old:
                assert got == new, n
            saw_new_after_kill |= got == new and n <= steps
        else:
            # only the rename-fallback may leave no target (between its two renames), and the
            # old case must then be waiting to be put back
            assert not with_old or (
                not exchange and any(s.startswith(".c.old-") for s in strays(d))
            ), (n, strays(d))
        if n == steps + 1:
            assert files_of(target) == new and strays(d) == []
        if strays(d):
            killed_with_stray += 1
        # the other entries of the folder are untouched
        assert {
            k: v for k, v in tree(d).items() if k.split("/")[0] != "c" and not k.startswith(".c.")
        } == beside, n
        # the next save cleans up and leaves the complete new case
        r = t.save_case("c", at=at, expect=EXPECT, dir=d, overwrite=True, verify=False)
        assert r.ok, (n, r.error)
        assert files_of(target) == new, n
        assert strays(d) == [], n
        assert {k: v for k, v in tree(d).items() if k.split("/")[0] != "c"} == beside, n
    assert killed_with_stray == steps
    if with_old and exchange:
        assert saw_new_after_kill  # a kill after the exchange keeps the new case


def test_the_next_save_puts_an_old_case_back_after_a_half_done_rename(
    thread_and_bytes, folders, tmp_path: Path
) -> None:  # type: ignore[no-untyped-def]
    t, at, new, old = thread_and_bytes
    steps = len(new) + 2
    d = tmp_path / "d"
    prepare(d, folders, with_old=True)
    status = crash_save(t, at, d, steps, exchange=False)  # killed between the two renames
    assert os.WIFSIGNALED(status)
    assert not (d / "c").exists()
    # a save of another case in the folder does not touch c's strays
    assert t.save_case("other2", at=at, dir=d).ok
    assert any(s.startswith(".c.old-") for s in strays(d))
    # a refused save of c (case_exists) still restores the old case first
    r = t.save_case("c", at=at, expect=EXPECT, dir=d)
    assert not r.ok and r.error is not None and r.error.code == "case_exists"
    assert files_of(d / "c") == old
    assert strays(d) == []


CHILD = textwrap.dedent("""
    import sys
    sys.path.insert(0, {tests!r})
    from conftest import EXPECT, build_thread
    t, at = build_thread({extra})
    print("ready", flush=True)
    sys.stdin.readline()
    r = t.save_case("c", at=at, expect=EXPECT, dir=sys.argv[1], overwrite=True)
    print(r.value.outcome if r.ok else "refused:" + r.error.code, flush=True)
""")


def _child(d: Path, env: dict[str, str]) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-c", CHILD.format(tests=str(TESTS), extra=EXTRA), str(d)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )


def test_a_fresh_interpreter_honours_the_crash_hook(thread_and_bytes, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    _t, _at, new, _old = thread_and_bytes
    env = {**os.environ, "THREADS_CASES_CRASH_AT": str(len(new) // 2)}
    p = _child(tmp_path, env)
    assert p.stdout is not None and p.stdout.readline().strip() == "ready"
    out, err = p.communicate("go\n", timeout=60)
    assert p.returncode == -signal.SIGKILL, (out, err)
    assert not (tmp_path / "c").exists()
    assert strays(tmp_path)  # the half-written temporary directory
    env.pop("THREADS_CASES_CRASH_AT")
    p = _child(tmp_path, env)
    out, err = p.communicate("go\n", timeout=60)
    assert p.returncode == 0, err
    assert out.split() == ["ready", "created"]
    assert files_of(tmp_path / "c") == new
    assert strays(tmp_path) == []


def test_eight_processes_saving_the_same_case_leave_one_complete_case(
    thread_and_bytes, tmp_path: Path
) -> None:  # type: ignore[no-untyped-def]
    """Eight forks of this process (the thread already built) wait on one pipe, then save
    the same case at once: one creates it, seven find the same bytes."""
    t, at, new, _old = thread_and_bytes
    d = tmp_path / "cases"
    go_r, go_w = os.pipe()
    children = []
    for _ in range(8):
        out_r, out_w = os.pipe()
        pid = os.fork()
        if pid == 0:  # pragma: no cover - the child
            code = 3
            try:
                os.close(go_w)
                os.read(go_r, 1)  # blocks until the parent starts every child together
                r = t.save_case("c", at=at, expect=EXPECT, dir=d, overwrite=True)
                os.write(out_w, (r.value.outcome if r.ok else "refused:" + r.error.code).encode())
                code = 0
            finally:
                os._exit(code)
        os.close(out_w)
        children.append((pid, out_r))
    os.close(go_r)
    os.write(go_w, b"g" * 8)  # one byte for each child
    os.close(go_w)
    outcomes = []
    for pid, out_r in children:
        with os.fdopen(out_r, "rb") as fh:
            outcomes.append(fh.read().decode())
        _, status = os.waitpid(pid, 0)
        assert os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0, status
    assert sorted(outcomes) == ["created"] + ["unchanged"] * 7
    assert [p.name for p in d.iterdir()] == ["c"]
    assert files_of(d / "c") == new
