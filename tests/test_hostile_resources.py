"""Hostile inputs under a memory bound (issue 19, "Done when"): every command and both drivers
give their reason code, not a hang or a traceback, with a peak RSS under 1 GiB, and leave no
process behind; both drivers give the same code.

Everything is generated at test time (nothing large is committed): sparse 2 GB files, FIFOs,
sockets and devices in every position of a case, a million keys, a million replies and a
million stubs, 80,000 snapshots, 64 replies of 4 MB, path components over 255 bytes. The
simpler shapes of the same attacks (one command each) are in tests/test_bounded_reads.py;
driver faults in tests/test_driver_faults.py. The heavy generators run in their own xdist
group (``hostile-heavy``) so they never share a core with each other.

The peak RSS is the child's ``ru_maxrss`` from ``wait4`` (the CLI and the drivers it waited
for); the timeout only catches hangs. Nothing here asserts how long a command took.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import shutil
import signal
import socket
import stat
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

import orjson
import pytest

from threads_cases.harness.run.registry import ts_driver_path

ROOT = Path(__file__).resolve().parent.parent
CASE = ROOT / "spec" / "conformance" / "cases" / "reads-notes"
HANG = 300.0
LIMIT_MIB = 1024
HEAVY = pytest.mark.xdist_group("hostile-heavy")

pytestmark = pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs FIFOs (POSIX)")


#: What a test keeps of a command's stdout: its first and last MiB (a reduce of the 268 MB
#: log prints 268 MB; reading it whole would put the test process itself over the bound).
KEEP = 2**20


@dataclass
class Ran:
    status: int
    stdout: str
    stderr: str
    peak_mib: float
    left: list[int]
    answers: list[dict[str, Any]]


def _kept(fh: IO[bytes]) -> str:
    size = fh.seek(0, os.SEEK_END)
    fh.seek(0)
    if size <= 2 * KEEP:
        return fh.read().decode("utf-8", "replace")
    head = fh.read(KEEP)
    fh.seek(size - KEEP)
    return (head + b"\n...\n" + fh.read()).decode("utf-8", "replace")


def _answers(fh: IO[bytes]) -> list[dict[str, Any]]:
    """The driver answer lines of ``fh``; a line past :data:`KEEP` (a reduce answer) is read
    only as far as its ``ok`` (canonical keys: ``{"id":N,"ok":true,...``)."""
    fh.seek(0)
    out: list[dict[str, Any]] = []
    while line := fh.readline(KEEP):
        if not line.startswith(b"{"):
            continue
        if line.endswith(b"\n") or len(line) < KEEP:
            out.append(json.loads(line))
            continue
        head = re.match(rb'\{"id":(\d+),"ok":true,', line)
        assert head is not None, line[:200]
        out.append({"id": int(head[1]), "ok": True})
        while not line.endswith(b"\n") and (line := fh.readline(KEEP)):
            pass
    return out


def _session_members(sid: int) -> list[int]:
    """Processes still alive in session ``sid`` (the CLI's own session)."""
    out = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            fields = Path(f"/proc/{entry}/stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[3]) == sid and fields[0] != "Z":  # fields[3]: the session id
            out.append(int(entry))
    return out


def measured(argv: list[str], cwd: Path, stdin: bytes = b"", driver: bool = False) -> Ran:
    """Run ``argv`` in its own session; its peak RSS (with the children it waited for) from
    wait4, and the processes of its session still alive after it exited (``driver``: its
    stdout is read as answer lines)."""
    # not under coverage (its subprocess hooks dropped): a user's command runs untraced, and
    # tracing every line of a 268 MB reduce multiplied its CPU time (the same code paths are
    # measured on small shapes by tests/test_bounded_reads.py)
    drop = ("COV_CORE_", "COVERAGE_", "THREADS_CASES_DEBUG")
    env = {k: v for k, v in os.environ.items() if not k.startswith(drop)}
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        with tempfile.TemporaryFile() as inp:
            inp.write(stdin)
            inp.seek(0)
            proc = subprocess.Popen(
                argv, cwd=cwd, stdin=inp, stdout=out, stderr=err, env=env, start_new_session=True
            )
        deadline = time.monotonic() + HANG
        while True:
            pid, status, usage = os.wait4(proc.pid, os.WNOHANG)
            if pid:
                break
            if time.monotonic() > deadline:
                os.killpg(proc.pid, signal.SIGKILL)
                os.wait4(proc.pid, 0)
                pytest.fail(f"{argv[:5]} hung for {HANG}s")
            time.sleep(0.05)
        proc.returncode = os.waitstatus_to_exitcode(status)
        left = _session_members(proc.pid)
        for p in left:  # never leave them running, even when the test fails
            with contextlib.suppress(ProcessLookupError):
                os.kill(p, signal.SIGKILL)
        return Ran(
            proc.returncode,
            _kept(out),
            _kept(err),
            usage.ru_maxrss / 1024,
            left,
            _answers(out) if driver else [],
        )


def cli(cwd: Path, *args: str | Path) -> Ran:
    r = measured([sys.executable, "-m", "threads_cases", *map(str, args)], cwd)
    assert "Traceback" not in r.stderr + r.stdout, r.stderr[-2000:]
    assert "internal_error" not in r.stderr + r.stdout, r.stderr[-2000:]
    assert r.peak_mib < LIMIT_MIB, (args, r.peak_mib)
    assert not r.left, f"processes left behind: {r.left}"
    return r


def code_of(r: Ran) -> str:
    """The first reason code a command printed (its error line, or a run's result)."""
    for line in (r.stderr + "\n" + r.stdout).splitlines():
        if line.startswith("error["):
            return line[len("error[") : line.index("]")]
        if line.startswith("{") and '"kind":"result"' in line:
            reasons = json.loads(line)["reasons"]
            if reasons:
                return str(reasons[0])
    return "ok" if r.status == 0 else f"exit {r.status}"


def _drivers() -> dict[str, list[str]]:
    drivers = {"threads-py": [sys.executable, "-m", "threads_cases.protocol.driver"]}
    node = shutil.which("node")
    if node is not None and ts_driver_path().is_file():
        drivers["threads-ts"] = [node, str(ts_driver_path())]
    return drivers


def driver_codes(cwd: Path, requests: list[dict[str, object]]) -> dict[str, list[str]]:
    """Each driver answers ``requests`` in one process (its peak RSS under the bound, nothing
    left behind); returns each driver's list of codes (``ok`` for a success)."""
    lines = b"".join(orjson.dumps({"id": i, **r}) + b"\n" for i, r in enumerate(requests))
    codes: dict[str, list[str]] = {}
    for name, argv in _drivers().items():
        r = measured(argv, cwd, stdin=lines, driver=True)
        assert r.peak_mib < LIMIT_MIB, (name, r.peak_mib)
        assert not r.left, f"{name} left processes behind: {r.left}"
        answers = r.answers
        assert len(answers) == len(requests), (name, r.stdout[-2000:], r.stderr[-2000:])
        codes[name] = [a["error"]["code"] if not a["ok"] else "ok" for a in answers]
        assert "internal_error" not in codes[name], (name, r.stdout[-3000:])
    return codes


def same_codes(codes: dict[str, list[str]]) -> list[str]:
    first = next(iter(codes.values()))
    for name, mine in codes.items():
        assert mine == first, (name, mine, first)
    return first


def _case(root: Path, name: str = CASE.name) -> Path:
    dest = root / name
    shutil.copytree(CASE, dest)
    return dest


# ---------------------------------------------------------------------- special files


def _special(path: Path, kind: str) -> None:
    if path.exists():
        path.unlink()
    if kind == "fifo":
        os.mkfifo(path)
    elif kind == "socket":
        short = Path(tempfile.mkdtemp(dir=path.parent.anchor + "tmp")) / "s"
        s = socket.socket(socket.AF_UNIX)
        try:
            s.bind(str(short))  # a socket path is at most 107 bytes: bind, then move it
        finally:
            s.close()
        os.rename(short, path)
        short.parent.rmdir()
    elif kind == "device":
        os.mknod(path, stat.S_IFCHR | 0o600, os.makedev(1, 5))  # /dev/zero
    elif kind == "sparse":
        with open(path, "wb") as fh:
            fh.truncate(2 * 1024**3)


def _can_mknod(tmp: Path) -> bool:
    try:
        os.mknod(tmp / "probe", stat.S_IFCHR | 0o600, os.makedev(1, 5))
    except OSError:
        return False
    (tmp / "probe").unlink()
    return True


POSITIONS = [
    "case.json",
    "model.json",
    "stubs.json",
    "sandbox.json",
    "log.threads-py.jsonl",
    "log.threads-ts.jsonl",
    "expected.threads-py.json",
    "artifact",
]
KINDS = ["fifo", "socket", "device", "sparse"]


@pytest.fixture(scope="module")
def special_cases(tmp_path_factory: pytest.TempPathFactory) -> dict[tuple[str, str], Path]:
    root = tmp_path_factory.mktemp("special")
    kinds = KINDS if _can_mknod(root) else [k for k in KINDS if k != "device"]
    out = {}
    for pos in POSITIONS:
        for kind in kinds:
            case = _case(root, f"{kind}-{pos.replace('.', '-')}")
            target = next((case / "artifacts").iterdir()) if pos == "artifact" else case / pos
            _special(target, kind)
            out[(pos, kind)] = case
    return out


#: What a case with a special or giant file in each position gives (spec/case-format.md 8.4).
EXPECTED_CODE = {"sparse": "case_too_large", "fifo": "case_invalid", "socket": "case_invalid"}
EXPECTED_CODE["device"] = "case_invalid"


@HEAVY
def test_every_position_of_a_case_refuses_special_and_giant_files_in_both_drivers(
    special_cases: dict[tuple[str, str], Path], tmp_path: Path
) -> None:
    keys = sorted(special_cases)
    requests: list[dict[str, object]] = [
        {"cmd": "replay", "case": {"path": str(special_cases[k])}} for k in keys
    ]
    codes = same_codes(driver_codes(tmp_path, requests))
    for (pos, kind), code in zip(keys, codes, strict=True):
        assert code == EXPECTED_CODE[kind], (pos, kind, code)


@HEAVY
def test_validate_refuses_special_and_giant_files_in_every_position(
    special_cases: dict[tuple[str, str], Path], tmp_path: Path
) -> None:
    """One CLI run per position (the kinds taken in turn; the drivers above see them all)."""
    kinds = sorted({kind for _, kind in special_cases})
    for i, pos in enumerate(POSITIONS):
        kind = kinds[i % len(kinds)]
        r = cli(tmp_path, "validate", special_cases[(pos, kind)])
        assert r.status == 1, (pos, kind, r.stderr)
        assert f"error[{EXPECTED_CODE[kind]}]" in r.stderr, (pos, kind, r.stderr)


def test_a_path_component_over_255_bytes_is_invalid_request_everywhere(tmp_path: Path) -> None:
    long = tmp_path / ("c" * 300)
    for args in (
        ("run", long, "--impl", "threads-py"),
        ("show", long),
        ("validate", long / "case.json"),
        ("diff", long, CASE),
        ("import", "claude-code", long / "s.jsonl", "-o", tmp_path / "o.jsonl"),
        ("run", CASE, "--impl", "threads-py", "--supply", long / "s.json"),
    ):
        r = cli(tmp_path, *args)
        assert r.status != 0, args
        assert code_of(r) in ("invalid_request", "case_invalid"), (args, r.stderr)
    requests: list[dict[str, object]] = [
        {"cmd": "replay", "case": {"path": str(long)}},
        {"cmd": "reduce", "path": str(tmp_path / ("l" * 300 + ".jsonl"))},
    ]
    assert same_codes(driver_codes(tmp_path, requests)) == ["invalid_request", "invalid_request"]


# ---------------------------------------------------------------------- big recordings


def _minimal_reply() -> dict[str, object]:
    return {
        "message": {"content": [{"text": "ok", "type": "text"}], "role": "assistant"},
        "request_sha256": "a" * 64,
        "stop_reason": "end_turn",
        "usage": {"input_tokens": 1, "output_tokens": 1},
    }


def _minimal_stub() -> dict[str, object]:
    return {"input": {}, "result": {"content": "", "is_error": False}, "tool": "t"}


def _write_recording(case: Path, file: str, key: str, item: dict[str, object], n: int) -> None:
    with open(case / file, "wb") as fh:
        fh.write(b'{"format":1,"' + key.encode() + b'":[')
        chunk = b",".join([orjson.dumps(item)] * 10_000)
        for i in range(n // 10_000):
            fh.write((b"," if i else b"") + chunk)
        fh.write(b"]}")


_RECORDING_SHAPES = {
    "million-replies": ("model.json", "replies", _minimal_reply(), 1_000_000),
    "million-stubs": ("stubs.json", "calls", _minimal_stub(), 1_000_000),
    # under the size limit, over the count limit: refused after the parse
    "dense-stubs": ("stubs.json", "calls", _minimal_stub(), 150_000),
}


@pytest.fixture(scope="module")
def big_recording(tmp_path_factory: pytest.TempPathFactory) -> Callable[[str], Path]:
    """A case of each big shape, written the first time a test asks for it (a test selected
    alone does not pay for the 300 MB of the others)."""
    root = tmp_path_factory.mktemp("recordings")
    made: dict[str, Path] = {}

    def make(name: str) -> Path:
        if name not in made:
            case = _case(root, name)
            if name == "million-keys":
                model = json.loads((case / "model.json").read_bytes())
                content = model["replies"][0]["message"]["content"][0]
                content["input"] = {f"k{i}": i for i in range(10**6)}
                (case / "model.json").write_bytes(orjson.dumps(model))
            else:
                _write_recording(case, *_RECORDING_SHAPES[name])
            made[name] = case
        return made[name]

    return make


@HEAVY
@pytest.mark.parametrize("shape", ["million-replies", "million-stubs", "dense-stubs"])
def test_a_million_replies_or_stubs_is_case_too_large_at_once(
    big_recording: Callable[[str], Path], tmp_path: Path, shape: str
) -> None:
    case = big_recording(shape)
    commands = [("run", case, "--impl", "threads-py", "--impl", "threads-ts", "--format", "json")]
    if shape == "dense-stubs":  # the size refusals are the same code path for every command
        commands += [("validate", case), ("show", case), ("fmt", "--check", case)]
    for args in commands:
        r = cli(tmp_path, *args)
        assert r.status != 0, args
        assert code_of(r) == "case_too_large", (args, r.stderr, r.stdout[-500:])
    codes = driver_codes(tmp_path, [{"cmd": "replay", "case": {"path": str(case)}}])
    assert same_codes(codes) == ["case_too_large"]


@HEAVY
def test_a_million_keys_is_checked_and_formatted_within_the_bound(
    big_recording: Callable[[str], Path], tmp_path: Path
) -> None:
    case = big_recording("million-keys")
    assert code_of(cli(tmp_path, "fmt", "--check", case)) == "exit 1"  # not canonical
    r = cli(tmp_path, "validate", case)
    assert "not canonical" in r.stderr
    assert cli(tmp_path, "show", "--values", case).status == 0


# ---------------------------------------------------------------------- big logs


def _envelope(seq: int, etype: str, data: dict[str, object]) -> bytes:
    return orjson.dumps(
        {
            "actor_kind": "user" if etype == "user_message" else "system",
            "branch_id": "main",
            "critical": False,
            "data": data,
            "epoch": 0,
            "event_id": f"e{seq}",
            "seq": seq,
            "thread_id": "t",
            "ts": "2026-11-30T00:00:00.000Z",
            "type": etype,
        },
        option=orjson.OPT_SORT_KEYS,
    )


def _snapshot_log(path: Path, n: int) -> Path:
    agent = {"model": "m", "name": "b", "system": "s", "tools": []}
    with open(path, "wb") as fh:
        fh.write(_envelope(0, "thread_started", {"agent": agent, "metadata": {}}) + b"\n")
        for i in range(1, n + 1):
            fh.write(_envelope(i, "snapshot_taken", {"snapshot_id": f"s{i}"}) + b"\n")
    return path


@HEAVY
def test_eighty_thousand_snapshots_reduce_in_both_languages(tmp_path: Path) -> None:
    log = _snapshot_log(tmp_path / "snaps.jsonl", 80_000)
    for command in ("reduce", "turns", "validate"):
        r = cli(tmp_path, command, log)
        assert r.status == 0, (command, r.stderr)
    codes = driver_codes(tmp_path, [{"cmd": "reduce", "path": str(log), "dialect": "threads-py"}])
    assert same_codes(codes) == ["ok"]


_RECORD_BIG = """
import sys
from pathlib import Path
from threads_cases import AgentSpec, FakeSandbox, ScriptedModel, Thread
from threads_cases.reference.agent import BUILTIN_TOOLS
from threads_cases.reference.model import text_reply, tool_reply
from threads_cases.reference.runtime import Clock

out, n, size = Path(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3])
agent = AgentSpec("hostile", "m", "Be brief.", tools=tuple(BUILTIN_TOOLS.values()))
t = Thread.create(agent=agent, thread_id="big", clock=Clock(1_800_000_000_000),
                  sandbox=FakeSandbox({f"f{i}.txt": bytes([97 + i % 26]) * size for i in range(n)}))
at = t.events[-1]["event_id"]
calls = [tool_reply((f"tu_{i}", "read_file", {"path": f"f{i}.txt"})) for i in range(n)]
t.run_turn("read them all", ScriptedModel([*calls, text_reply("done")]))
t.write_log(out / "thread.jsonl")
t.write_artifacts(out / "artifacts")
print(at)
"""


#: The number of 4 MB replies: the issue's 64 (a 268 MB log; about 25 s of CPU for the whole
#: test, see benchmarks/README.md). THREADS_CASES_HOSTILE_REPLIES=N runs a smaller shape
#: locally (under 8 the saved case fits and is verified instead of refused).
BIG_REPLIES = int(os.environ.get("THREADS_CASES_HOSTILE_REPLIES", "64"))


@HEAVY
def test_many_replies_of_four_megabytes(tmp_path: Path) -> None:
    """A turn of BIG_REPLIES model calls, each after a 4 MB tool result: recorded through the
    API, its log reduced, listed and validated, saved as a case when it fits (refused as too
    large when model.json would pass 32 MiB), all under the bound; both drivers reduce the
    log alike."""
    n = BIG_REPLIES
    rec = measured([sys.executable, "-c", _RECORD_BIG, str(tmp_path), str(n), str(4 * 2**20)], ROOT)
    assert rec.status == 0, rec.stderr[-2000:]
    assert rec.peak_mib < LIMIT_MIB, rec.peak_mib  # with the 256 MB of sandbox files it reads
    log = tmp_path / "thread.jsonl"
    assert log.stat().st_size > n * 4 * 2**20
    for command in ("reduce", "turns", "validate"):
        assert cli(tmp_path, command, log).status == 0, command
    r = cli(
        tmp_path, "save", log, "--turn", "1", "--name", "big", "--dir", tmp_path / "cases",
        "--artifacts", tmp_path / "artifacts",
    )  # fmt: skip
    assert code_of(r) == ("case_too_large" if n * 4 >= 32 else "ok"), r.stderr
    codes = driver_codes(tmp_path, [{"cmd": "reduce", "path": str(log), "dialect": "threads-py"}])
    assert same_codes(codes) == ["ok"]
