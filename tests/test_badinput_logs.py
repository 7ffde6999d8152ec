"""Bad-input corpus for thread logs: the real CLI refuses each file cleanly.

Every file under tests/badinput/logs/ breaks one rule of spec/thread-log.md or
spec/strict-json.md. ``python -m threads_cases reduce FILE`` must exit 1 with
``error[log_invalid]: FILE:LINE: ...`` on stderr, never a
traceback (each run is bounded only to catch a hang).
The 64 MiB line is made in a temporary folder, never committed.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
from conftest import cli

from threads_cases import canonical_line
from threads_cases.core.strictjson import MAX_LINE_BYTES

CORPUS = Path(__file__).resolve().parent / "badinput" / "logs"
ROOT = Path(__file__).resolve().parent.parent

#: The line each file's first problem is on.
EXPECTED_LINE = {
    "big-integer": 2,
    "blank-line": 2,
    "bom": 1,
    "crlf": 1,
    "duplicate-event-id": 4,
    "duplicate-key": 2,
    "empty-object-line": 2,
    "infinity": 2,
    "invalid-utf8": 2,
    "lone-surrogate": 2,
    "mixed-thread-id": 3,
    "nan": 2,
    "nesting-100000": 2,
    "nesting-257": 2,
    "not-an-object-line": 2,
    "schema-bad-event-id": 2,
    "schema-bad-ts": 2,
    "schema-missing-key": 2,
    "schema-path-dotdot": 2,
    "schema-wrong-type": 2,
    "seq-gap": 3,
    "several-problems": 2,
    "tool-result-without-call": 3,
    "truncated-last-line": 2,
}

FILES = sorted(CORPUS.glob("*.jsonl"))


Proc = subprocess.CompletedProcess[str]


def run_cli(*args: str) -> Proc:
    return cli(*args, cwd=ROOT, traceback_ok=True)  # each test says which input gave one


def long_line_log(directory: Path) -> Path:
    """A log whose line 2 is one byte over the 64 MiB limit."""
    first = canonical_line(
        {
            "event_id": "e0",
            "thread_id": "th-1",
            "seq": 0,
            "type": "thread_started",
            "actor_kind": "system",
            "epoch": 0,
            "branch_id": "main",
            "critical": False,
            "ts": "2026-11-29T20:05:00.000Z",
            "data": {
                "agent": {"name": "a", "model": "m", "system": "s", "tools": []},
                "metadata": {},
            },
        }
    )
    head = b'{"v":"'
    tail = b'"}'
    body = head + b"a" * (MAX_LINE_BYTES + 1 - len(head) - len(tail)) + tail
    assert len(body) == MAX_LINE_BYTES + 1
    path = directory / "line-over-64-mib.jsonl"
    path.write_bytes(first + b"\n" + body + b"\n")
    return path


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Proc]:
    """Run the CLI on every corpus file (and the generated long line), one after the other:
    the worker's fork server runs one call at a time, and calls made meanwhile from other
    threads would each start a whole interpreter instead."""
    big = long_line_log(tmp_path_factory.mktemp("long"))
    jobs = {p.stem: str(p.relative_to(ROOT)) for p in FILES}
    jobs["line-over-64-mib"] = str(big)
    out = {name: run_cli("reduce", path) for name, path in jobs.items()}
    big.unlink()
    return out


def test_corpus_lists_every_file() -> None:
    assert sorted(p.stem for p in FILES) == sorted(EXPECTED_LINE)


@pytest.mark.xdist_group("badinput-logs")  # one worker runs the module fixture's 25 commands
@pytest.mark.parametrize("name", [*sorted(EXPECTED_LINE), "line-over-64-mib"])
def test_reduce_refuses_cleanly(name: str, runs: dict[str, Proc]) -> None:
    run = runs[name]
    path = str((CORPUS / f"{name}.jsonl").relative_to(ROOT)) if name in EXPECTED_LINE else None
    line = EXPECTED_LINE.get(name, 2)
    assert run.returncode == 1, run.stderr
    assert "Traceback" not in run.stderr + run.stdout
    assert run.stdout == ""
    first = run.stderr.splitlines()[0]
    assert first.startswith("error[log_invalid]: ")
    where = first[len("error[log_invalid]: ") :]
    if path is not None:
        assert where.startswith(f"{path}:{line}: "), first
    else:
        assert where.split(": ")[0].endswith(f".jsonl:{line}"), first
        assert "64 MiB" in first
    assert "  hint: " in run.stderr


def test_validate_reports_every_problem() -> None:
    run = run_cli("validate", str((CORPUS / "several-problems.jsonl").relative_to(ROOT)))
    assert run.returncode == 1
    assert "Traceback" not in run.stderr + run.stdout
    name = str((CORPUS / "several-problems.jsonl").relative_to(ROOT))
    found = sorted(
        int(line.split(":")[2])
        for line in run.stderr.splitlines()
        if line.startswith(f"error[log_invalid]: {name}:")
    )
    # schema, seq gap, reducer rule, duplicate event_id, blank line, NaN
    assert found == [2, 3, 4, 5, 6, 7], run.stderr
    assert "duplicate event_id" in run.stderr
    assert "seq gap" in run.stderr
    assert "blank line" in run.stderr
    assert "outside a turn" in run.stderr
    assert run.stderr.rstrip().endswith("6 problem(s)")


def test_validate_json_format_lists_the_same_problems() -> None:
    run = run_cli(
        "validate", "--format", "json", str((CORPUS / "several-problems.jsonl").relative_to(ROOT))
    )
    assert run.returncode == 1
    from threads_cases import parse_json

    report = parse_json(run.stdout.encode())
    assert report["valid"] is False
    assert sorted(p["line"] for p in report["problems"]) == [2, 3, 4, 5, 6, 7]
    assert {p["code"] for p in report["problems"]} == {"log_invalid"}


def test_validate_reports_every_duplicate_event_id_without_reading_the_log_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Each duplicate is one problem on its own line, judged from the events already read
    (reading the file again per repeat made a log of many duplicates quadratic)."""
    import threads_cases.core.log as log_module

    def envelope(seq: int, etype: str, data: dict[str, object], eid: str) -> bytes:
        return canonical_line(
            {
                "actor_kind": "system",
                "branch_id": "main",
                "critical": False,
                "data": data,
                "epoch": 0,
                "event_id": eid,
                "seq": seq,
                "thread_id": "t",
                "ts": "2026-11-30T00:00:00.000Z",
                "type": etype,
            }
        )

    agent = {"model": "m", "name": "b", "system": "s", "tools": []}
    lines = [envelope(0, "thread_started", {"agent": agent, "metadata": {}}, "e0")]
    for i in range(1, 201):  # every odd event repeats the id of the one before it
        eid = f"e{i - 1}" if i % 2 else f"e{i}"
        lines.append(envelope(i, "snapshot_taken", {"snapshot_id": f"s{i}"}, eid))
    path = tmp_path / "dups.jsonl"
    path.write_bytes(b"\n".join(lines) + b"\n")

    def no_rereads(*args: object) -> bool:
        raise AssertionError("the log was read again")

    monkeypatch.setattr(log_module, "_repeats_earlier", no_rereads)
    problems = log_module.validate_log(path)
    assert [p.location.line for p in problems] == list(range(2, 202, 2))
    assert all("duplicate event_id" in p.message for p in problems)


def _snapshot_log(n: int) -> list[dict[str, object]]:
    agent = {"model": "m", "name": "b", "system": "s", "tools": []}
    base = {
        "actor_kind": "system",
        "branch_id": "main",
        "critical": False,
        "epoch": 0,
        "thread_id": "t",
        "ts": "2026-11-30T00:00:00.000Z",
    }
    first = {**base, "seq": 0, "event_id": "e0", "type": "thread_started"}
    first["data"] = {"agent": agent, "metadata": {}}
    rest = [
        {**base, "seq": i, "event_id": f"e{i}", "type": "snapshot_taken"}
        | {"data": {"snapshot_id": f"s{i}"}}
        for i in range(1, n)
    ]
    return [first, *rest]


@pytest.mark.parametrize(
    "mistake",
    ["typo-too-high", "typo-too-low", "line-deleted", "line-repeated"],
)
def test_one_seq_mistake_is_one_problem(tmp_path: Path, mistake: str) -> None:
    """validate goes on counting seq past a bad line: a mistyped seq (too high or too low),
    a deleted line and a repeated seq each give one problem at that line, not one per line
    after it (a trial's log with one wrong seq gave 17)."""
    events = _snapshot_log(20)
    if mistake == "typo-too-high":
        events[5]["seq"] = 50
    elif mistake == "typo-too-low":
        events[5]["seq"] = 1
    elif mistake == "line-deleted":
        del events[5]
    else:
        events[5]["seq"] = 4
    path = tmp_path / "log.jsonl"
    path.write_bytes(b"".join(canonical_line(e) + b"\n" for e in events))
    from threads_cases.core.log import validate_log

    problems = validate_log(path)
    assert [(p.location.line, p.location.pointer) for p in problems] == [(6, "/seq")], [
        p.render() for p in problems
    ]
