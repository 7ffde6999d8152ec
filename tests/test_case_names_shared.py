"""Two case folders whose case.json give the same `name`: reports, `--last-failed` and the
baseline key results by name, so `validate` (on a folder), `run` and `list` warn, naming both
paths (stderr, silenced by -q; `validate --format json` carries the warning). With a
baseline, `run` and the pytest plugin apply a shared name's entries to neither case and
`baseline update` / `prune` refuse (spec/replay.md 12.3, 12.4)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import cli

from threads_cases.case.directory import shared_names

CASES = Path(__file__).resolve().parents[1] / "spec" / "conformance" / "cases"


def _two_of_one_name(tmp_path: Path) -> None:
    shutil.copytree(CASES / "reads-notes", tmp_path / "cases" / "reads-notes")
    shutil.copytree(CASES / "reads-notes", tmp_path / "cases" / "reads-copy")
    shutil.copytree(CASES / "weather-stub", tmp_path / "cases" / "weather-stub")


def test_shared_names_names_every_path(tmp_path: Path) -> None:
    _two_of_one_name(tmp_path)
    cases = sorted((tmp_path / "cases").iterdir())
    (warning,) = shared_names(cases)
    assert "'reads-notes'" in warning
    assert str(tmp_path / "cases" / "reads-copy") in warning
    assert str(tmp_path / "cases" / "reads-notes") in warning
    assert shared_names([tmp_path / "cases" / "weather-stub", cases[0]]) == []


def test_cli_validate_and_run_warn_about_a_shared_name(tmp_path: Path) -> None:
    _two_of_one_name(tmp_path)
    expected = "warning: the cases cases/reads-copy, cases/reads-notes share the name 'reads-notes'"
    p = cli("validate", "cases", cwd=tmp_path)
    assert p.returncode == 0, p.stderr  # a warning: the spec does not make names unique
    assert p.stderr.count(expected) == 1, p.stderr
    p = cli("run", "cases", "--impl", "threads-py", cwd=tmp_path)
    assert p.returncode == 0, p.stdout + p.stderr
    assert p.stderr.count(expected) == 1, p.stderr
    p = cli("run", "--impl", "threads-py", cwd=tmp_path / "cases")
    assert "share the name 'reads-notes'" in p.stderr
    shutil.rmtree(tmp_path / "cases" / "reads-copy")
    p = cli("validate", "cases", cwd=tmp_path)
    assert "share the name" not in p.stderr


def test_run_warns_from_the_names_its_results_carry_whatever_jobs(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The warning after a run comes from the names read where each case ran (a forked
    worker under --jobs 2): the same warning as reading every case.json, with no read of
    its own for the cases that ran; a case that did not run (-k) is read."""
    import threads_cases.case.directory as directory
    from threads_cases.case.discovery import discover
    from threads_cases.harness.run.runner import run_suite

    _two_of_one_name(tmp_path)
    cases = discover([tmp_path / "cases"])
    want = shared_names(cases)
    assert len(want) == 1
    for jobs in (1, 2):
        suite = run_suite([tmp_path / "cases"], ["threads-py"], jobs=jobs)
        known = {r.path: r.case_json_name for r in suite.results if r.case_json_name is not None}
        assert known == {
            str(c): "weather-stub" if c.name == "weather-stub" else "reads-notes" for c in cases
        }
        with monkeypatch.context() as m:
            m.setattr(directory, "peek_case_name", lambda path: pytest.fail(f"read {path}"))
            assert shared_names(cases, known) == want
    suite = run_suite([tmp_path / "cases"], ["threads-py"], jobs=2, pattern="reads-copy")
    known = {r.path: r.case_json_name for r in suite.results if r.case_json_name is not None}
    assert list(known) == [str(tmp_path / "cases" / "reads-copy")]
    assert shared_names(cases, known) == want
    p = cli("run", "cases", "--impl", "threads-py", "--jobs", "2", "-k", "copy", cwd=tmp_path)
    assert p.returncode == 0, p.stdout + p.stderr
    assert p.stderr.count("share the name 'reads-notes'") == 1, p.stderr


def test_cli_list_warns_about_a_shared_name_and_validate_json_carries_it(tmp_path: Path) -> None:
    _two_of_one_name(tmp_path)
    expected = "warning: the cases cases/reads-copy, cases/reads-notes share the name 'reads-notes'"
    for fmt in ("pretty", "json"):
        p = cli("list", "cases", "--format", fmt, cwd=tmp_path)
        assert p.returncode == 0, p.stderr
        assert p.stderr.count(expected) == 1, p.stderr
        assert "share the name" not in p.stdout
        quiet = cli("list", "cases", "--format", fmt, "-q", cwd=tmp_path)
        assert quiet.returncode == 0 and quiet.stderr == "", quiet.stderr
        assert quiet.stdout == p.stdout
    p = cli("validate", "cases", "--format", "json", "-q", cwd=tmp_path)
    assert p.returncode == 0 and p.stderr == "", p.stderr
    doc = json.loads(p.stdout)
    assert doc["valid"] is True
    assert (
        doc["warnings"]
        == [
            {
                "code": "case_name_shared",  # a stable reason code (spec/reason-codes.md 3.7)
                "name": "reads-notes",
                "cases": ["cases/reads-copy", "cases/reads-notes"],
                "message": expected.removeprefix("warning: ") + " (case.json `name`); reports and "
                "the baseline key cases by name: give each its own",
            }
        ]
    )
    shutil.rmtree(tmp_path / "cases" / "reads-copy")
    p = cli("list", "cases", cwd=tmp_path)
    assert p.returncode == 0 and "share the name" not in p.stderr
    assert (
        json.loads(cli("validate", "cases", "--format", "json", cwd=tmp_path).stdout)["warnings"]
        == []
    )


# The baseline keys entries by case name: with two cases of one name, one entry would stand
# for both (spec/replay.md 12.3, 12.4).

SHARED = (
    "the cases suite/dup/weather-stub, suite/weather-stub share the name 'weather-stub': "
    "baseline entries are keyed by case name, so one entry would stand for both"
)


def _failing_copy(tmp_path: Path) -> Path:
    """suite/weather-stub (passes) and suite/dup/weather-stub (same name, fails must[0]), with
    suite/reads-notes failing too under its own name; returns the baseline path."""
    shutil.copytree(CASES / "weather-stub", tmp_path / "suite" / "weather-stub")
    shutil.copytree(CASES / "weather-stub", tmp_path / "suite" / "dup" / "weather-stub")
    shutil.copytree(CASES / "reads-notes", tmp_path / "suite" / "reads-notes")
    for case in ("dup/weather-stub", "reads-notes"):
        p = tmp_path / "suite" / case / "case.json"
        doc = json.loads(p.read_text())
        doc["expect"]["must"][0]["data"] = {"never": "there"}
        p.write_text(json.dumps(doc))
    (tmp_path / ".git").mkdir()  # the project's folder: the baseline lives here
    return tmp_path / ".threads-cases" / "baseline.json"


def _entry(case: str) -> dict[str, str]:
    return {
        "case": case,
        "implementation": "threads-py",
        "check": "must[0]",
        "code": "must_unmatched",
        "reason": "test",
    }


def test_cli_baseline_update_and_prune_refuse_cases_sharing_a_name(tmp_path: Path) -> None:
    baseline = _failing_copy(tmp_path)
    args = ("suite/dup", "suite/weather-stub", "--impl", "threads-py")
    p = cli("baseline", "update", *args, "--reason", "test", cwd=tmp_path)
    assert p.returncode == 2, p.stdout + p.stderr
    assert "error[invalid_request]: " + SHARED in p.stderr, p.stderr
    assert "hint: rename one case (case.json `name`)" in p.stderr
    assert p.stdout == "" and not baseline.exists()  # nothing ran, nothing written
    p = cli("baseline", "update", "suite", "--impl", "threads-py", "--json", cwd=tmp_path)
    assert p.returncode == 2
    refusal = json.loads(p.stdout)
    assert refusal["code"] == "invalid_request"
    assert "share the name 'weather-stub'" in refusal["message"]
    assert not baseline.exists()

    baseline.parent.mkdir()
    text = json.dumps({"format": 1, "entries": [_entry("weather-stub")]})
    baseline.write_text(text)
    for verb in ("prune", "update"):
        p = cli("baseline", verb, *args, cwd=tmp_path)
        assert p.returncode == 2, p.stdout + p.stderr
        assert "error[invalid_request]: " + SHARED in p.stderr, p.stderr
        assert baseline.read_text() == text  # the copy still fails: the entry stays

    # one of the two alone is one case: its entry is judged as usual
    p = cli("baseline", "prune", "suite/dup", "--impl", "threads-py", cwd=tmp_path)
    assert p.returncode == 0, p.stdout + p.stderr
    assert baseline.read_text() == text


def test_cli_run_applies_a_shared_names_entries_to_neither_case(tmp_path: Path) -> None:
    baseline = _failing_copy(tmp_path)
    baseline.parent.mkdir()
    baseline.write_text(
        json.dumps({"format": 1, "entries": [_entry("weather-stub"), _entry("reads-notes")]})
    )
    p = cli("run", "suite", "--impl", "threads-py", "--format", "json", cwd=tmp_path)
    lines = [json.loads(x) for x in p.stdout.splitlines()]
    verdicts = {(r["case"], r["path"]): r for r in lines if r.get("kind") == "result"}
    dup = verdicts[("weather-stub", "suite/dup/weather-stub")]
    own = verdicts[("weather-stub", "suite/weather-stub")]
    # each is what it is: never the entry's xfail for one and its xpass for the other
    assert (dup["verdict"], own["verdict"]) == ("fail", "pass"), (dup, own)
    assert "baseline" not in dup and "baseline" not in own
    note = (
        "the baseline entries of 'weather-stub' are not applied: the cases "
        "suite/dup/weather-stub, suite/weather-stub share that name"
    )
    assert note in dup["message"] and note in own["message"]
    # a name of its own keeps its entry
    assert verdicts[("reads-notes", "suite/reads-notes")]["verdict"] == "xfail"
    assert p.stderr.count("warning: " + note) == 1, p.stderr
    footer = lines[-1]
    assert footer["counts"]["xpass"] == 0 and footer["counts"]["xfail"] == 1
    assert p.returncode == 3, p.stderr  # a failing case: no usable entry lists the copy

    pretty = cli("run", "suite", "--impl", "threads-py", cwd=tmp_path)
    assert pretty.returncode == 3
    assert "xpass" not in pretty.stdout and pretty.stderr.count("warning: " + note) == 1

    # no entry for the shared name: the run is as without the note
    baseline.write_text(json.dumps({"format": 1, "entries": [_entry("reads-notes")]}))
    p = cli("run", "suite", "--impl", "threads-py", "--format", "json", cwd=tmp_path)
    assert "are not applied" not in p.stdout + p.stderr


def test_pytest_plugin_applies_a_shared_names_entries_to_neither_case(tmp_path: Path) -> None:
    baseline = _failing_copy(tmp_path)
    baseline.parent.mkdir()
    baseline.write_text(
        json.dumps({"format": 1, "entries": [_entry("weather-stub"), _entry("reads-notes")]})
    )
    plugin = subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-p", "no:hypothesispytest",
         "-rA", "--threads-cases", "suite", "--threads-cases-impl", "threads-py"],
        cwd=tmp_path, capture_output=True, text=True, timeout=300,
        env={**os.environ, "COLUMNS": "400"},
    )  # fmt: skip
    out = plugin.stdout
    assert plugin.returncode == 1, out[-3000:]
    assert "1 failed, 1 passed, 1 xfailed" in out, out[-3000:]
    assert "XPASS" not in out
    assert "PASSED suite/weather-stub/case.json::weather-stub[threads-py]" in out, out[-3000:]
    failed = next(x for x in out.splitlines() if x.startswith("FAILED "))
    assert failed.startswith("FAILED suite/dup/weather-stub/case.json::weather-stub[threads-py]")
    assert "the baseline entries of 'weather-stub' are not applied" in out
    assert "XFAIL suite/reads-notes/case.json::reads-notes[threads-py]" in out
