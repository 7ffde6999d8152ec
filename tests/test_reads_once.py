"""One read per case per run (issue 33): ``threads-cases run cases/x`` reads case.json once and
walks the paths for cases once, whatever ``--jobs`` (a forked worker uses what the run read
before it forked: threads_cases/case/once.py); counted by instrumenting the file opener."""

from __future__ import annotations

import json
import os
import shutil
import sys
from collections import Counter
from pathlib import Path

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
