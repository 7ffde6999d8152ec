"""A report's header records `cwd`, the absolute folder its run started from, and `run
--last-failed` and `stale` read the report's relative case paths from it (spec/reports.md 1.2
and 2.5). Without it, a run started from `suite/` (inside a project whose `.threads-cases/`
is a folder up) recorded `cases/x`, and `--last-failed` from `suite/cases` or from another
folder matched nothing and ran everything; `stale` from another folder said the report
checked none of the cases. Old reports (no `cwd`) are read as before."""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from conftest import cli

from threads_cases.core.canonical import canonical_document, canonical_line
from threads_cases.core.errors import CaseError
from threads_cases.core.schemas import validator
from threads_cases.core.strictjson import read_json_file
from threads_cases.harness.report.folder import report_bases, run_folder
from threads_cases.harness.run.merge import _header as merged_header
from threads_cases.harness.run.setup import last_failed_pairs

CopyCase = Callable[..., Path]


def edit_model(case: Path, change: Callable[[list[Any]], None]) -> None:
    doc = read_json_file(case / "model.json")
    change(doc["replies"])
    (case / "model.json").write_bytes(canonical_document(doc))


def project(tmp_path: Path, conformance_case: CopyCase) -> Path:
    """A project (`.git`) whose cases live in suite/cases: reads-notes passes, lists-files
    fails (its last reply dropped), weather-stub passes with a reply it never uses (stale).
    Returns suite/."""
    (tmp_path / ".git").mkdir()
    (tmp_path / "other").mkdir()
    cases = tmp_path / "suite" / "cases"
    for n in ("reads-notes", "lists-files", "weather-stub"):
        conformance_case(n, cases)
    edit_model(cases / "lists-files", lambda r: r.pop())
    edit_model(cases / "weather-stub", lambda r: r.append(r[-1]))
    return tmp_path / "suite"


def run_json(cwd: Path, *args: str | Path) -> tuple[int, dict[str, str], str]:
    p = cli("run", "--impl", "threads-py", "--format", "json", *args, cwd=cwd)
    lines = [json.loads(x) for x in p.stdout.splitlines()]
    got = {r["case"]: r["verdict"] for r in lines if r["kind"] == "result"}
    return p.returncode, got, p.stderr


def report_lines(tmp_path: Path) -> list[dict[str, Any]]:
    report = tmp_path / ".threads-cases" / "last-report.jsonl"
    return [json.loads(x) for x in report.read_text().splitlines()]


def write_report(tmp_path: Path, lines: list[dict[str, Any]]) -> None:
    report = tmp_path / ".threads-cases" / "last-report.jsonl"
    report.write_bytes(b"".join(canonical_line(x) + b"\n" for x in lines))


def first_run(tmp_path: Path, suite: Path) -> None:
    status, got, err = run_json(suite, "cases")
    assert status == 3, err
    assert got == {"lists-files": "fail", "reads-notes": "pass", "weather-stub": "drifted"}
    head = report_lines(tmp_path)[0]
    assert head["cwd"] == str(suite) and os.path.isabs(head["cwd"])
    assert not list(validator("report.schema.json").iter_errors(head))


def test_last_failed_from_any_folder(tmp_path: Path, conformance_case: CopyCase) -> None:
    suite = project(tmp_path, conformance_case)
    first_run(tmp_path, suite)
    # the same run from the same folder writes the same header (but for when it started)
    before = {k: v for k, v in report_lines(tmp_path)[0].items() if k != "started_at"}
    first_run(tmp_path, suite)
    assert {k: v for k, v in report_lines(tmp_path)[0].items() if k != "started_at"} == before
    # from inside the cases folder, from another folder, and from the project's folder:
    # exactly the failure runs, with no note that nothing matched
    for here, path in (
        (suite / "cases", "."),
        (tmp_path / "other", os.path.join("..", "suite", "cases")),
        (tmp_path, os.path.join("suite", "cases")),
        (suite / "cases" / "lists-files", "."),
    ):
        first_run(tmp_path, suite)
        status, got, err = run_json(here, path, "--last-failed")
        assert status == 3 and got == {"lists-files": "fail"}, (here, err)
        assert "running everything" not in err
    # the report of a --last-failed run from another folder is read from that folder
    first_run(tmp_path, suite)
    run_json(tmp_path / "other", os.path.join("..", "suite", "cases"), "--last-failed")
    assert report_lines(tmp_path)[0]["cwd"] == str(tmp_path / "other")
    status, got, err = run_json(suite / "cases", ".", "--last-failed")
    assert status == 3 and got == {"lists-files": "fail"}, err


def test_stale_from_another_folder(tmp_path: Path, conformance_case: CopyCase) -> None:
    suite = project(tmp_path, conformance_case)
    first_run(tmp_path, suite)
    here = tmp_path / "other"
    p = cli("stale", os.path.join("..", "suite", "cases"), "--format", "json", cwd=here)
    assert p.returncode == 0, p.stderr
    doc = json.loads(p.stdout)
    assert doc["unchecked"] == []
    assert [(e["case"], e["path"], e["exists"]) for e in doc["stale"]] == [
        ("weather-stub", os.path.join("..", "suite", "cases", "weather-stub"), True)
    ]
    # without PATH, the report's own cases, named as they read from here
    p = cli("stale", cwd=here)
    assert p.returncode == 0, p.stderr
    assert "weather-stub" in p.stdout and "(gone)" not in p.stdout
    # from the folder the run started in, the paths are as the report wrote them
    doc = json.loads(cli("stale", "cases", "--format", "json", cwd=suite).stdout)
    assert [e["path"] for e in doc["stale"]] == [os.path.join("cases", "weather-stub")]


def test_an_old_report_without_cwd_still_works(tmp_path: Path, conformance_case: CopyCase) -> None:
    """A report written before the header recorded `cwd`: its paths are read from the
    current folder and from the project's folder (the fallback of spec/reports.md 2.5)."""
    (tmp_path / ".git").mkdir()
    for n in ("reads-notes", "lists-files"):
        conformance_case(n)
    edit_model(tmp_path / "cases" / "lists-files", lambda r: r.pop())
    status, _, err = run_json(tmp_path, "cases")
    assert status == 3, err
    lines = report_lines(tmp_path)
    del lines[0]["cwd"]
    assert not list(validator("report.schema.json").iter_errors(lines[0]))
    for here, path in ((tmp_path, "cases"), (tmp_path / "cases", ".")):
        write_report(tmp_path, lines)
        status, got, err = run_json(here, path, "--last-failed")
        assert status == 3 and got == {"lists-files": "fail"}, err
    write_report(tmp_path, lines)
    p = cli("stale", "cases", cwd=tmp_path)
    assert p.returncode == 0, p.stderr
    # a folder not on this machine (a report from elsewhere) falls back the same way
    lines[0]["cwd"] = str(tmp_path / "gone")
    write_report(tmp_path, lines)
    status, got, err = run_json(tmp_path, "cases", "--last-failed")
    assert status == 3 and got == {"lists-files": "fail"}, err


@pytest.mark.parametrize("bad", [3, None, "", "cases", "./x", ["/"]])
def test_a_cwd_that_is_not_an_absolute_path_is_refused(
    tmp_path: Path, conformance_case: CopyCase, bad: Any
) -> None:
    conformance_case("reads-notes")
    status, _, err = run_json(tmp_path, "cases")
    assert status == 0, err
    lines = report_lines(tmp_path)
    lines[0]["cwd"] = bad
    write_report(tmp_path, lines)
    assert list(validator("report.schema.json").iter_errors(lines[0]))
    for args in (("run", "--impl", "threads-py", "--last-failed", "cases"), ("stale", "cases")):
        p = cli(*args, cwd=tmp_path)
        assert p.returncode == 2, p.stdout + p.stderr
        assert "error[invalid_request]" in p.stderr and "last-report.jsonl:1:" in p.stderr
        assert "header's cwd must be the absolute path" in p.stderr


def test_run_folder_and_pairs(tmp_path: Path, monkeypatch: Any) -> None:
    assert run_folder({}, "r") is None
    assert run_folder({"cwd": str(tmp_path)}, "r") == tmp_path
    assert run_folder({"cwd": str(tmp_path / "missing")}, "r") is None
    assert run_folder({"cwd": "C:\\nowhere\\x"}, "r") is None  # a Windows path, not here
    with pytest.raises(CaseError) as err:
        run_folder({"cwd": "rel"}, "r")
    assert err.value.code == "invalid_request"
    # the pairs are read from the recorded folder only, wherever this process is
    (tmp_path / "a" / "cases" / "x").mkdir(parents=True)
    (tmp_path / "cases" / "x").mkdir(parents=True)
    report = tmp_path / ".threads-cases" / "r.jsonl"
    report.parent.mkdir()
    head = {"kind": "header", "cwd": str(tmp_path / "a")}
    row = {"kind": "result", "path": "cases/x", "implementation": "i", "verdict": "fail"}
    report.write_text(json.dumps(head) + "\n" + json.dumps(row) + "\n")
    monkeypatch.chdir(tmp_path)
    assert last_failed_pairs(report) == {(str((tmp_path / "a/cases/x").resolve()), "i")}


def test_merge_keeps_cwd_only_when_every_shard_agrees() -> None:
    def head(k: int, cwd: str | None) -> dict[str, Any]:
        out: dict[str, Any] = {"kind": "header", "started_at": f"2026-01-0{k}T00:00:00Z"}
        out["shard"] = {"index": k, "count": 2}
        if cwd is not None:
            out["cwd"] = cwd
        return out

    assert merged_header([head(1, "/a"), head(2, "/a")], [])["cwd"] == "/a"
    assert "cwd" not in merged_header([head(1, "/a"), head(2, "/b")], [])
    assert "cwd" not in merged_header([head(1, "/a"), head(2, None)], [])


@pytest.mark.parametrize("cwd", [None, "gone"])
def test_last_failed_and_stale_share_the_fallback(
    tmp_path: Path, conformance_case: CopyCase, cwd: str | None
) -> None:
    """A report without `cwd`, or whose `cwd` is not on this machine (copied from CI), of a run
    from the project's folder: from suite/cases, `run --last-failed` and `stale` both read its
    paths from the current folder, then the project's folder (spec/reports.md 2.5); `stale`
    used to try only the current folder and refuse. A `cwd` not here is said once (-q: not)."""
    suite = project(tmp_path, conformance_case)
    status, _, err = run_json(tmp_path, os.path.join("suite", "cases"))
    assert status == 3, err
    lines = report_lines(tmp_path)
    if cwd is None:
        del lines[0]["cwd"]
    else:
        lines[0]["cwd"] = str(tmp_path / cwd)
    here = suite / "cases"
    write_report(tmp_path, lines)
    p = cli("stale", ".", "--format", "json", cwd=here)
    assert p.returncode == 0, p.stdout + p.stderr
    doc = json.loads(p.stdout)
    assert doc["unchecked"] == []
    assert [(e["case"], e["path"], e["exists"]) for e in doc["stale"]] == [
        ("weather-stub", "weather-stub", True)
    ]
    said = "is not on this machine" in p.stderr
    assert said == (cwd is not None), p.stderr
    assert cli("stale", ".", "-q", cwd=here).stderr == ""
    status, got, err = run_json(here, ".", "--last-failed")
    assert status == 3 and got == {"lists-files": "fail"}, err
    assert ("is not on this machine" in err) == (cwd is not None), err
    assert "running everything" not in err


@pytest.mark.parametrize(
    "text", ["garbage\n", '{"kind": "result"}\n', '{"kind": "header", "cwd": "rel"}\n']
)
def test_a_damaged_last_report_is_refused_with_what_to_do(
    tmp_path: Path, conformance_case: CopyCase, text: str
) -> None:
    """A damaged last report: `run --last-failed` (which takes no report option) and `stale`
    refuse it (exit 2) with a hint naming the file and what to do, not "pass JSON Lines
    reports of ..."."""
    conformance_case("reads-notes")
    (tmp_path / ".git").mkdir()
    report = tmp_path / ".threads-cases" / "last-report.jsonl"
    report.parent.mkdir()
    report.write_text(text)
    here = tmp_path / "cases"
    p = cli("run", "--impl", "threads-py", "--last-failed", ".", cwd=here)
    assert p.returncode == 2, p.stdout + p.stderr
    name = os.path.join("..", ".threads-cases", "last-report.jsonl")
    assert f"error[invalid_request]: {name}:1:" in p.stderr
    assert (
        f"hint: run without --last-failed to write a new report over it, or remove {name}"
        in p.stderr
    )
    assert "pass JSON Lines reports" not in p.stderr
    assert report.read_text() == text  # refused before any run replaced it
    p = cli("stale", ".", cwd=here)
    assert p.returncode == 2, p.stdout + p.stderr
    assert f"hint: run `threads-cases run` to write a new report over it, remove {name}" in (
        p.stderr
    )
    # a report named with --report keeps the hint about which files are reports
    p = cli("stale", ".", "--report", name, cwd=here)
    assert p.returncode == 2 and "pass JSON Lines reports" in p.stderr, p.stderr


def test_report_bases(tmp_path: Path, monkeypatch: Any) -> None:
    """The one fallback order of spec/reports.md 2.5, and its note for a cwd not here."""
    (tmp_path / "a").mkdir()
    report = tmp_path / ".threads-cases" / "r.jsonl"
    notes: list[str] = []
    monkeypatch.chdir(tmp_path / "a")
    assert report_bases({"cwd": str(tmp_path)}, report, notes.append) == (tmp_path,)
    assert report_bases({}, report, notes.append) == (tmp_path / "a", tmp_path)
    assert not notes
    gone = {"cwd": str(tmp_path / "gone")}
    assert report_bases(gone, report, notes.append) == (tmp_path / "a", tmp_path)
    assert len(notes) == 1 and str(tmp_path / "gone") in notes[0]
    monkeypatch.chdir(tmp_path)
    assert report_bases({}, report) == (tmp_path,)  # the project's folder is this one
