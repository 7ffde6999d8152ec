"""One read per case per run (issue 33): ``threads-cases run cases/x`` reads case.json once and
walks the paths for cases once, whatever ``--jobs`` (a forked worker uses what the run read
before it forked: threads_cases/case/once.py); counted by instrumenting the file opener."""

from __future__ import annotations

import json
import os
import shutil
import sys
from collections import Counter
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

import threads_cases.case.discovery as discovery
from threads_cases.cli import main
from threads_cases.core.canonical import canonical_document

CASES = Path(__file__).resolve().parent.parent / "spec" / "conformance" / "cases"


@pytest.mark.parametrize("jobs", ["1", "2"])
def test_run_of_one_case_reads_case_json_once_and_discovers_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, jobs: str
) -> None:
    shutil.copytree(CASES / "reads-notes", tmp_path / "cases" / "x")
    monkeypatch.chdir(tmp_path)
    real_open = os.open
    # every process of the run (the forked workers too) appends the files it opens here
    tally = real_open(tmp_path / "opened.txt", os.O_WRONLY | os.O_CREAT | os.O_APPEND)

    def counting_open(name: str | os.PathLike[str], *args: object, **kw: object) -> int:
        os.write(tally, os.path.basename(os.fspath(name)).encode() + b"\n")
        return real_open(name, *args, **kw)  # type: ignore[arg-type]

    walks = []
    real_discover = discovery._discover

    def counting_discover(paths: list[str]) -> list[Path]:
        walks.append(paths)
        return real_discover(paths)

    monkeypatch.setattr(os, "open", counting_open)
    monkeypatch.setattr(discovery, "_discover", counting_discover)
    argv = ["threads-cases", "run", "cases/x", "--impl", "threads-py", "--isolation", "guard"]
    monkeypatch.setattr(sys, "argv", [*argv, "--format", "json", "--jobs", jobs])
    with pytest.raises(SystemExit) as exit_:
        main()
    assert exit_.value.code == 0
    os.close(tally)
    opened = Counter((tmp_path / "opened.txt").read_text().splitlines())
    assert opened["case.json"] == 1, opened
    assert opened["log.threads-py.jsonl"] <= 1 and opened["model.json"] <= 1, opened
    assert len(walks) == 1


def test_a_case_json_changed_during_a_run_is_read_again(tmp_path: Path) -> None:
    from threads_cases.case.directory import peek_case_name
    from threads_cases.case.once import one_run

    shutil.copytree(CASES / "reads-notes", tmp_path / "x")
    case_json = tmp_path / "x" / "case.json"
    with one_run():
        assert peek_case_name(tmp_path / "x") == "reads-notes"
        case_json.write_bytes(case_json.read_bytes().replace(b'"reads-notes"', b'"renamed-one"'))
        assert peek_case_name(tmp_path / "x") == "renamed-one"


def _needs_a_supply(case: Path) -> dict[str, object]:
    """Drop the case's last model reply; return the supply document that answers it."""
    model = json.loads((case / "model.json").read_bytes())
    last = model["replies"].pop()
    (case / "model.json").write_bytes(canonical_document(model))
    answer = {k: last[k] for k in ("message", "stop_reason", "usage")}
    return {"calls": {f"model:{len(model['replies'])}": answer}}


def test_accept_replays_once_and_reads_the_case_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import threads_cases.harness.run.accept as accept
    from threads_cases.harness.run.accept import accept_case
    from threads_cases.protocol.server import PythonImplementation
    from threads_cases.reference.replay import check_supply

    case = tmp_path / "x"
    shutil.copytree(CASES / "reads-notes", case)
    supply = check_supply(_needs_a_supply(case))
    asked: Counter[str] = Counter()
    real_request = PythonImplementation.request

    def counting_request(self: PythonImplementation, message: dict[str, object], *a: object):  # type: ignore[no-untyped-def]
        asked[str(message["cmd"])] += 1
        return real_request(self, message, *a)  # type: ignore[arg-type]

    opened: Counter[str] = Counter()
    real_open = os.open

    writing = []

    def counting_open(name: str | os.PathLike[str], *args: object, **kw: object) -> int:
        if not writing and os.path.dirname(os.path.abspath(name)) == str(case):
            opened[os.path.basename(os.fspath(name))] += 1
        return real_open(name, *args, **kw)  # type: ignore[arg-type]

    real_write = accept.write_case_dir

    def write(*args: object, **kw: object) -> str:
        writing.append(True)  # the writer reads what is there under the case's lock: its own
        return real_write(*args, **kw)  # type: ignore[arg-type]

    monkeypatch.setattr(accept, "write_case_dir", write)
    monkeypatch.setattr(PythonImplementation, "request", counting_request)
    monkeypatch.setattr(os, "open", counting_open)
    done = accept_case(case, PythonImplementation(), supply=supply)
    monkeypatch.undo()
    assert done.changed and done.verdict == "pass"  # passing with the supply, written in
    assert writing == [True]
    assert asked == {"reduce": 1, "replay": 1}, asked
    for name in ("model.json", "stubs.json", "log.threads-py.jsonl", "sandbox.json"):
        assert opened[name] == 1, opened
    assert opened["case.json"] == 1, opened


def test_run_checks_its_supply_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import threads_cases.reference.replay as replay

    shutil.copytree(CASES / "reads-notes", tmp_path / "cases" / "x")
    (tmp_path / "supply.json").write_text(json.dumps(_needs_a_supply(tmp_path / "cases" / "x")))
    monkeypatch.chdir(tmp_path)
    checked = []
    real_check = replay.check_supply

    def counting_check(*args: object, **kw: object) -> dict[str, object]:
        checked.append(args)
        return real_check(*args, **kw)  # type: ignore[arg-type]

    monkeypatch.setattr(replay, "check_supply", counting_check)
    argv = ["threads-cases", "run", "cases/x", "--impl", "threads-py", "--isolation", "guard"]
    monkeypatch.setattr(sys, "argv", [*argv, "--supply", "supply.json", "--format", "json"])
    with pytest.raises(SystemExit) as exit_:
        main()
    assert exit_.value.code == 0
    assert len(checked) == 1


def _tally(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Callable[[], Counter[str]]:
    """Count, in every process of a run (forked workers too, through a file), each open of a
    case file (``open:<name>``) and each reduction of a log: a reducer applying a seq-0 event
    is one fold of a log from its start, ``reduce:<dialect>`` inside the case loader's check of
    that dialect's log, ``reduce:elsewhere`` anywhere else (an implementation's ``reduce``,
    the replay's restore, the divergence's or accept's rebuild)."""
    import threads_cases.core.log as log
    from threads_cases.core.reducer import Reducer

    path = tmp_path / "tally.txt"
    real_open = os.open
    tally = real_open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND)
    loading: list[str] = []

    def note(line: str) -> None:
        os.write(tally, line.encode() + b"\n")

    def counting_open(name: str | os.PathLike[str], *args: object, **kw: object) -> int:
        note("open:" + os.path.basename(os.fspath(name)))
        return real_open(name, *args, **kw)  # type: ignore[arg-type]

    real_inspect = log.inspect_log

    def counting_inspect(source: Any, **kw: Any) -> Any:
        loading.append(str(kw["dialect"]))
        try:
            return real_inspect(source, **kw)
        finally:
            loading.pop()

    real_apply = Reducer.apply

    def counting_apply(self: Reducer, ev: dict[str, Any]) -> None:
        if ev["seq"] == 0:
            note("reduce:" + (loading[-1] if loading else "elsewhere"))
        real_apply(self, ev)

    monkeypatch.setattr(os, "open", counting_open)
    monkeypatch.setattr(log, "inspect_log", counting_inspect)
    monkeypatch.setattr(Reducer, "apply", counting_apply)

    def counts() -> Counter[str]:
        monkeypatch.undo()
        os.close(tally)
        return Counter(path.read_text().splitlines())

    return counts


@pytest.mark.parametrize("jobs", ["1", "2"])
def test_a_run_reduces_each_log_once_and_reads_case_json_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, jobs: str
) -> None:
    """The profile issue 33 asks for: ``run`` of one case on the in-process threads-py reads
    case.json once and reduces each log once, in the loader; the implementation's ``reduce``
    answers with the loader's state, and the replay goes on from the loader's reducer
    (``Case.fork``), so neither folds the log again."""
    shutil.copytree(CASES / "reads-notes", tmp_path / "cases" / "x")
    monkeypatch.chdir(tmp_path)
    counts = _tally(tmp_path, monkeypatch)
    argv = ["threads-cases", "run", "cases/x", "--impl", "threads-py", "--isolation", "guard"]
    monkeypatch.setattr(sys, "argv", [*argv, "--format", "json", "--jobs", jobs])
    with pytest.raises(SystemExit) as exit_:
        main()
    assert exit_.value.code == 0
    found = counts()
    assert found["open:case.json"] == 1, found
    # both logs are checked (a broken threads-ts log stops the case, as validate says), once
    assert found["reduce:threads-py"] == found["reduce:threads-ts"] == 1, found
    assert found["reduce:elsewhere"] == 0, found
    assert found["open:log.threads-py.jsonl"] == found["open:log.threads-ts.jsonl"] == 1, found


def test_a_drifted_run_and_its_accept_reduce_the_log_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A replay whose request hashes differ finds its divergence, and accept rebuilds the
    request records, from the loader's reduction: no second fold of the log, and the same
    verdict, divergence and rewritten files as a fold of the log from its start gives."""
    from threads_cases.harness.run.accept import accept_case
    from threads_cases.protocol.server import PythonImplementation

    def drifted(where: Path) -> Path:
        case = where / "x"
        shutil.copytree(CASES / "reads-notes", case)
        model = json.loads((case / "model.json").read_bytes())
        model["replies"][0]["request_sha256"] = "0" * 64
        (case / "model.json").write_bytes(canonical_document(model))
        return case

    case = drifted(tmp_path / "a")
    counts = _tally(tmp_path, monkeypatch)
    done = accept_case(case, PythonImplementation())
    found = counts()
    assert done.verdict == "drifted" and done.changed
    assert done.result.divergence is not None and done.result.divergence["kind"] == "request"
    assert found["reduce:threads-py"] == 1 and found["reduce:elsewhere"] == 0, found

    # the same accept with every shortcut gone (a Case without the loader's reducers)
    import threads_cases.case.loader as loader

    real = loader.inspect_case

    def without_reducers(path: Any) -> Any:
        case, problems = real(path)
        return (None if case is None else replace(case, reduced={})), problems

    other = drifted(tmp_path / "b")
    monkeypatch.setattr("threads_cases.harness.run.accept.inspect_case", without_reducers)
    again = accept_case(other, PythonImplementation())
    assert again.result.divergence == done.result.divergence
    assert again.after == done.after and again.after != again.before


def test_a_lent_case_is_left_as_the_loader_read_it(tmp_path: Path) -> None:
    """Replays of one loaded case (the runs of ``--repeat``, each implementation in process)
    share the loader's reducer: each goes on from a branch, so the case's state and events are
    the same bytes after them, and each replay gives the same answer."""
    from threads_cases.case.loader import inspect_case
    from threads_cases.core.canonical import canonical_line
    from threads_cases.harness.run.runner import run_one
    from threads_cases.protocol.server import PythonImplementation

    shutil.copytree(CASES / "after-restore", tmp_path / "x")
    opened = inspect_case(tmp_path / "x")
    case = opened[0]
    assert case is not None and case.state("threads-py") is not None

    def snapshot() -> tuple[bytes, bytes]:
        assert case is not None
        state = canonical_line(dict(case.state("threads-py") or {}))
        return state, b"".join(canonical_line(e) for e in case.logs["threads-py"])

    before = snapshot()
    impl = PythonImplementation()
    runs = [run_one(tmp_path / "x", impl, opened=opened).to_json() for _ in range(3)]
    assert snapshot() == before
    for run in runs:
        run["duration_ms"] = 0
    assert runs[0]["verdict"] == "pass" and runs[0] == runs[1] == runs[2]
