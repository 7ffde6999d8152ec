"""Real parallelism with the same answers (threads_cases/harness/run/pool.py, spec/replay.md 10):
`--jobs N`, `--max-fail` and `--shard K/N` + `report merge` give the report of a serial run,
modulo timings."""

from __future__ import annotations

import json
import random
import shutil
import threading
import time
from pathlib import Path
from typing import Any

import pytest
from conftest import cli
from hypothesis import given, settings
from hypothesis import strategies as st

from threads_cases.core.canonical import canonical_document
from threads_cases.core.errors import CaseError
from threads_cases.core.strictjson import read_json_file
from threads_cases.harness.run.pool import parse_shard, run_work, shard_of

ROOT = Path(__file__).resolve().parent.parent
CASES = ROOT / "spec" / "conformance" / "cases"


def untimed(lines: list[dict[str, Any]]) -> list[dict[str, Any]]:
    out = []
    for line in lines:
        line = {k: v for k, v in line.items() if k not in ("duration_ms", "started_at")}
        out.append(line)
    return out


def report(stdout: str) -> list[dict[str, Any]]:
    return [json.loads(x) for x in stdout.splitlines()]


#: Conformance cases enough for the proof (three in each of three shards, two of them made to
#: fail, passes before and after the failures, a fork, an interruption, parallel calls).
PICK = (
    "email-write-effect",
    "interrupted-turn",
    "lists-files",
    "non-ascii-text",
    "parallel-calls",
    "reads-notes",
    "unknown-tool",
    "weather-stub",
    "writes-summary",
)


@pytest.fixture(scope="module")
def suite(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Nine conformance cases, two of them broken so that the suite has failures."""
    base = tmp_path_factory.mktemp("parallel")
    for name in PICK:
        shutil.copytree(CASES / name, base / "cases" / name)
    for name in ("lists-files", "weather-stub"):
        model = base / "cases" / name / "model.json"
        doc = read_json_file(model)
        doc["replies"].pop()
        model.write_bytes(canonical_document(doc))
    return base


RUN = ["run", "cases", "--impl", "threads-py", "--impl", "threads-ts", "--format", "json"]


def test_jobs_2_and_merged_shards_give_the_serial_report(suite: Path) -> None:
    serial = cli(*RUN, "--jobs", "1", cwd=suite)
    assert serial.returncode == 3, serial.stderr
    expected = untimed(report(serial.stdout))
    assert len(expected) == 2 + 2 * len(PICK)
    assert sorted({shard_of(n, 3) for n in PICK}) == [1, 2, 3]  # no shard is empty
    assert expected[-1]["counts"]["fail"] >= 2

    parallel = cli(*RUN, "--jobs", "2", cwd=suite)
    assert parallel.returncode == 3, parallel.stderr
    assert untimed(report(parallel.stdout)) == expected

    shards = []
    for k in (1, 2, 3):
        # one driver per implementation: a shard's run is a serial run of fewer cases
        out = cli(*RUN, "--jobs", "1", "--shard", f"{k}/3", cwd=suite)
        assert out.returncode in (0, 3), out.stderr
        lines = report(out.stdout)
        assert lines[0]["shard"] == {"index": k, "count": 3}
        (suite / f"shard{k}.jsonl").write_text(out.stdout)
        shards.append(f"shard{k}.jsonl")
    merged = cli("report", "merge", *shards, cwd=suite)
    assert merged.returncode == 0, merged.stderr
    assert untimed(report(merged.stdout)) == expected

    missing = cli("report", "merge", shards[0], shards[2], cwd=suite)
    assert missing.returncode == 2 and "2/3 missing" in missing.stderr
    twice = cli("report", "merge", shards[0], shards[1], shards[2], shards[1], cwd=suite)
    assert twice.returncode == 2 and "given twice" in twice.stderr


def test_max_fail_is_exact_whatever_jobs(suite: Path) -> None:
    serial = untimed(report(cli(*RUN, "--jobs", "1", "--max-fail", "1", cwd=suite).stdout))
    parallel = untimed(report(cli(*RUN, "--jobs", "2", "--max-fail", "1", cwd=suite).stdout))
    assert parallel == serial
    assert serial[-1]["not_started"] > 0
    results = [r for r in serial if r["kind"] == "result"]
    assert [r["verdict"] for r in results].count("fail") == 1
    assert results[-1]["verdict"] == "fail"  # the run stopped right after it


def test_shards_partition_the_cases_and_stay_put_when_cases_are_added() -> None:
    names = [f"case-{i}" for i in range(200)]
    for count in (1, 2, 3, 7):
        shards = {n: shard_of(n, count) for n in names}
        assert set(shards.values()) <= set(range(1, count + 1))
        more = {n: shard_of(n, count) for n in [*names, "a-new-case", "another"]}
        assert all(more[n] == shards[n] for n in names)
    assert parse_shard("2/5") == (2, 5)
    for bad in ("0/3", "4/3", "x/2", "3", "1/0"):
        with pytest.raises(CaseError) as err:
            parse_shard(bad)
        assert err.value.code == "invalid_request"


@settings(max_examples=60, deadline=None)
@given(
    fails=st.lists(st.booleans(), min_size=0, max_size=30),
    workers=st.integers(1, 6),
    max_fail=st.one_of(st.none(), st.integers(1, 4)),
    lanes=st.integers(0, 3),
    seed=st.integers(0, 2**16),
)
def test_run_work_returns_what_a_serial_run_returns(
    fails: list[bool], workers: int, max_fail: int | None, lanes: int, seed: int
) -> None:
    """Whatever the threads, lanes and timing: the serial run's results; within a lane
    (the runner's lane is one implementation) items start in work order, one at a time
    with one worker a lane."""
    rnd = random.Random(seed)
    delays = [rnd.random() / 500 for _ in fails]
    lock = threading.Lock()
    started: list[int] = []
    busy: dict[int, int] = {}
    most: dict[int, int] = {}

    def lane_of(k: int) -> int:
        return k % lanes if lanes else 0

    def run(k: int) -> tuple[int, bool]:
        with lock:
            started.append(k)
            busy[lane_of(k)] = busy.get(lane_of(k), 0) + 1
            most[lane_of(k)] = max(most.get(lane_of(k), 0), busy[lane_of(k)])
        time.sleep(delays[k])
        with lock:
            busy[lane_of(k)] -= 1
        return (k, fails[k])

    def failed(r: tuple[int, bool]) -> bool:
        return r[1]

    items = list(range(len(fails)))
    serial = run_work(items, run, workers=1, failed=failed, max_fail=max_fail)
    started.clear()
    most.clear()
    lane = lane_of if lanes else None
    got = run_work(items, run, workers=workers, failed=failed, max_fail=max_fail, lane=lane)
    assert got == serial
    if lanes:
        assert max(most.values(), default=0) <= workers
    if lanes and workers == 1:
        for n in range(lanes):
            mine = [k for k in started if lane_of(k) == n]
            assert mine == sorted(mine), (n, started)  # one at a time, in work order
    if max_fail is None:
        assert serial == [(k, f) for k, f in enumerate(fails)]
    else:
        kept = [r for r in serial if r is not None]
        assert sum(f for _, f in kept) == min(max_fail, sum(fails))


def test_the_default_jobs_adds_a_driver_only_for_enough_cases(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from threads_cases.harness.run import pool
    from threads_cases.protocol.client import DriverImplementation
    from threads_cases.protocol.server import PythonImplementation

    monkeypatch.setattr(pool, "available_cpus", lambda: 4)
    driver = DriverImplementation("d", ["true"], dialect="threads-py")  # never started
    in_process = PythonImplementation()
    per = pool.CASES_PER_JOB
    assert pool.default_jobs(100 * per, [in_process]) == 1  # threads share one interpreter
    assert pool.default_jobs(per - 1, [in_process, driver]) == 1  # a small suite: one driver
    assert pool.default_jobs(2 * per, [driver]) == 2
    assert pool.default_jobs(100 * per, [driver]) == 4  # never more than the CPUs
    assert pool.default_jobs(100 * per, [pool.pooled(driver, 3)]) == 4
