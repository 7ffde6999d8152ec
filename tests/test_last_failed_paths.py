"""`run --last-failed` matches the last report's cases by resolved path (spec/reports.md
3.2): `cases`, `$PWD/cases` and `cases/x` name the same cases. It ran nothing, exited 0 and
overwrote the failure record with an empty report when the path was spelled differently."""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

from conftest import cli

from threads_cases.core.canonical import canonical_document
from threads_cases.core.strictjson import read_json_file
from threads_cases.harness.run.setup import keep_only, last_failed_pairs

CopyCase = Callable[[str], Path]


def drop_last_reply(case: Path) -> None:
    doc = read_json_file(case / "model.json")
    doc["replies"].pop()
    (case / "model.json").write_bytes(canonical_document(doc))


def run_json(cwd: Path, *args: str | Path) -> tuple[int, dict[str, str], str]:
    p = cli("run", "--impl", "threads-py", "--format", "json", *args, cwd=cwd)
    lines: list[dict[str, Any]] = [json.loads(x) for x in p.stdout.splitlines()]
    got = {r["case"]: r["verdict"] for r in lines if r["kind"] == "result"}
    return p.returncode, got, p.stderr


class _Impl:
    def __init__(self, name: str) -> None:
        self.name = name


def test_pairs_are_resolved_and_matched_whatever_the_spelling(
    tmp_path: Path, monkeypatch: Any
) -> None:
    (tmp_path / "cases" / "a").mkdir(parents=True)
    (tmp_path / "cases" / "b").mkdir()
    report = tmp_path / "r.jsonl"
    lines = [
        {"kind": "header", "tool": "threads-cases", "version": "0", "command": "run",
         "implementations": ["threads-py"], "isolation": {}, "started_at": "x"},
        {"kind": "result", "path": "cases/a", "implementation": "threads-py", "verdict": "fail"},
        {"kind": "result", "path": "cases/b", "implementation": "threads-py", "verdict": "pass"},
    ]  # fmt: skip
    report.write_text("".join(json.dumps(x) + "\n" for x in lines))
    monkeypatch.chdir(tmp_path)
    only = last_failed_pairs(report)
    assert only is not None
    assert (str((tmp_path / "cases" / "a").resolve()), "threads-py") in only
    assert (str((tmp_path / "cases" / "b").resolve()), "threads-py") not in only
    # read from a subfolder, a path is also read from the folder holding .threads-cases/
    state = tmp_path / ".threads-cases"
    state.mkdir()
    report.rename(state / "r.jsonl")
    monkeypatch.chdir(tmp_path / "cases")
    assert (str((tmp_path / "cases" / "a").resolve()), "threads-py") in (
        last_failed_pairs(state / "r.jsonl") or set()
    )
    monkeypatch.chdir(tmp_path)
    py = _Impl("threads-py")
    absolute = [(tmp_path / "cases" / n, py) for n in ("a", "b")]
    assert keep_only(absolute, only) == absolute[:1]  # type: ignore[arg-type]
    dotted = [(Path("./cases/../cases/a"), py), (Path("cases/b"), py)]
    assert keep_only(dotted, only) == dotted[:1]  # type: ignore[arg-type]
    # none selected: every run is kept, and said
    notes: list[str] = []
    other = [(Path("cases/b"), py)]
    assert keep_only(other, only, notes.append) == other  # type: ignore[arg-type]
    assert notes and "running everything" in notes[0]
    assert keep_only(other, None) == other  # type: ignore[arg-type]


def test_last_failed_with_the_path_spelled_differently(
    tmp_path: Path, conformance_case: CopyCase
) -> None:
    for n in ("reads-notes", "lists-files"):
        conformance_case(n)
    drop_last_reply(tmp_path / "cases" / "lists-files")
    status, got, _ = run_json(tmp_path, "cases")
    assert status == 3 and got == {"reads-notes": "pass", "lists-files": "fail"}
    # absolute, and ./-prefixed: only the failure runs
    for spelling in (str(tmp_path / "cases"), "./cases/"):
        status, got, err = run_json(tmp_path, spelling, "--last-failed")
        assert status == 3 and got == {"lists-files": "fail"}, err
    # the report of those runs still records the failure: an absolute path inside
    status, got, _ = run_json(tmp_path, "cases", "--last-failed")
    assert status == 3 and got == {"lists-files": "fail"}
    # a path holding none of the failures: say so on stderr, run everything, never exit 0
    # on nothing run nor overwrite the record with an empty report
    status, got, err = run_json(tmp_path, "cases/reads-notes", "--last-failed")
    assert got == {"reads-notes": "pass"} and status == 0
    assert "none of the last report's failures is among the selected cases" in err
    report = tmp_path / ".threads-cases" / "last-report.jsonl"
    assert any('"result"' in x for x in report.read_text().splitlines())


def test_last_failed_from_another_folder(tmp_path: Path, conformance_case: CopyCase) -> None:
    """From `cases/`, `run ../cases --last-failed` matches `../cases/x` to the `x` that a run
    from `cases/` recorded, and, in a project (`.git`), to the `cases/x` that a run from the
    project's folder recorded."""
    for n in ("reads-notes", "lists-files"):
        conformance_case(n)
    drop_last_reply(tmp_path / "cases" / "lists-files")
    here = tmp_path / "cases"
    status, got, _ = run_json(here, ".")
    assert status == 3 and len(got) == 2
    status, got, err = run_json(here, os.path.join("..", "cases"), "--last-failed")
    assert status == 3 and got == {"lists-files": "fail"}, err
    (tmp_path / ".git").mkdir()
    status, got, _ = run_json(tmp_path, "cases")
    assert status == 3 and len(got) == 2
    assert (tmp_path / ".threads-cases" / "last-report.jsonl").is_file()
    status, got, err = run_json(here, os.path.join("..", "cases"), "--last-failed")
    assert status == 3 and got == {"lists-files": "fail"}, err


def test_last_failed_without_a_report_says_there_is_none_yet(
    tmp_path: Path, conformance_case: CopyCase
) -> None:
    """The user's trial: the first `--last-failed` said "no failures in the last report"
    when there was no report at all. It says there is none yet, where it looked, and that
    everything runs; with a report holding no failure it still says so, naming the report."""
    conformance_case("reads-notes")
    (tmp_path / ".git").mkdir()  # the project's folder: .threads-cases/ goes here
    report = os.path.join(".threads-cases", "last-report.jsonl")
    status, got, err = run_json(tmp_path, "cases", "--last-failed")
    assert status == 0 and got == {"reads-notes": "pass"}, err
    assert f"no report yet at {report}" in err and "running everything" in err
    assert "no failures" not in err
    status, got, err = run_json(tmp_path / "cases", ".", "--last-failed")
    assert status == 0 and got == {"reads-notes": "pass"}, err
    assert f"no failures in the last report ({os.path.join('..', report)})" in err
    assert "running everything" in err and "no report yet" not in err
