"""One read per case per run (issue 33): ``threads-cases run cases/x`` reads case.json once and
walks the paths for cases once, whatever ``--jobs`` (a forked worker uses what the run read
before it forked: threads_cases/case/once.py); counted by instrumenting the file opener."""

from __future__ import annotations

import os
import shutil
import sys
from collections import Counter
from pathlib import Path

import pytest

import threads_cases.harness.discovery as discovery
from threads_cases.cli import main

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
