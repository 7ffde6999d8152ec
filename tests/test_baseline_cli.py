"""End to end: a suite with 3 expected failures, 1 stale entry and 1 new failure gives 3
xfail, 1 xpass (failing the run) and 1 fail on threads-py and threads-ts, in every output
format (table, JSON Lines, JUnit, GitHub, pytest); then ``baseline update`` and ``baseline
prune`` leave a clean baseline (spec/replay.md section 12)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from conftest import CONFORMANCE, cli, ts_built

from threads_cases.core.canonical import canonical_document
from threads_cases.core.schemas import validator
from threads_cases.core.strictjson import read_json_file
from threads_cases.harness.baseline.file import baseline_document, read_baseline

pytestmark = pytest.mark.skipif(
    not ts_built(),
    reason="the TypeScript driver is not built: run `nox -s ts`",
)

IMPLS = ("threads-py", "threads-ts")
EXPECTED = {
    "reads-notes": "xfail",
    "lists-files": "xfail",
    "weather-stub": "xfail",
    "writes-summary": "xpass",
    "deletes-file": "fail",
}
BROKEN = ("reads-notes", "lists-files", "weather-stub", "deletes-file")


def make_suite(root: Path) -> Path:
    """Five conformance cases, four with a must matcher no event can match, and a baseline
    listing three of those failures and one case that passes."""
    for name in EXPECTED:
        shutil.copytree(CONFORMANCE / name, root / "cases" / name)
    for name in BROKEN:
        p = root / "cases" / name / "case.json"
        doc = read_json_file(p)
        doc["expect"]["must"][0]["data"] = {"never": "there"}
        p.write_bytes(canonical_document(doc))
    entries = []
    for impl in IMPLS:
        entries += [
            {
                "case": "reads-notes",
                "implementation": impl,
                "check": "must[0]",
                "code": "must_unmatched",
                "reason": "the matcher names a key no event has",
                "issue": "https://example.org/issues/1",
            },
            {"case": "lists-files", "implementation": impl, "check": "must[0]", "reason": "x"},
            {"case": "weather-stub", "implementation": impl, "reason": "weather is unknowable"},
            {"case": "writes-summary", "implementation": impl, "reason": "was broken once"},
        ]
    target = root / ".threads-cases" / "baseline.json"
    target.parent.mkdir()
    target.write_text(json.dumps({"format": 1, "entries": entries}))
    return target


def run(root: Path, *args: str) -> subprocess.CompletedProcess[str]:
    impls = [a for i in IMPLS for a in ("--impl", i)]
    return cli("run", "cases", *impls, "--isolation", "guard", *args, cwd=root)


def test_xfail_xpass_and_fail_in_every_output_and_both_implementations(tmp_path: Path) -> None:
    make_suite(tmp_path)

    proc = run(tmp_path, "--format", "json", "--junit", "junit.xml")
    assert proc.returncode == 3, proc.stderr  # the xpass and the new failure fail the run
    lines = [json.loads(x) for x in proc.stdout.splitlines()]
    check = validator("report.schema.json")
    assert all(not list(check.iter_errors(line)) for line in lines)
    results = [x for x in lines if x["kind"] == "result"]
    assert {(r["case"], r["implementation"]): r["verdict"] for r in results} == {
        (c, i): v for c in EXPECTED for i in IMPLS for v in [EXPECTED[c]]
    }
    footer = lines[-1]
    assert footer["counts"] == {
        "pass": 0,
        "drifted": 0,
        "fail": 2,
        "error": 0,
        "skip": 0,
        "xfail": 6,
        "xpass": 2,
    }
    by = {(r["case"], r["implementation"]): r for r in results}
    assert by["reads-notes", "threads-ts"]["baseline"] == {
        "reason": "the matcher names a key no event has",
        "issue": "https://example.org/issues/1",
        "check": "must[0]",
    }
    assert by["weather-stub", "threads-py"]["baseline"] == {"reason": "weather is unknowable"}
    assert by["writes-summary", "threads-ts"]["baseline"] == {"reason": "was broken once"}
    assert "threads-cases baseline prune" in by["writes-summary", "threads-ts"]["message"]
    assert "baseline" not in by["deletes-file", "threads-py"]

    junit = ET.parse(tmp_path / "junit.xml").getroot()
    assert (junit.get("failures"), junit.get("skipped"), junit.get("errors")) == ("4", "6", "0")
    for suite in junit.iter("testsuite"):
        cells = {tc.get("name"): tc for tc in suite.iter("testcase")}
        for name, verdict in EXPECTED.items():
            tc = cells[name]
            if verdict == "xfail":
                assert tc.find("skipped") is not None and tc.find("skipped").get("type") == "xfail"
            elif verdict == "xpass":
                failure = tc.find("failure")
                assert failure is not None and failure.get("type") == "xpass"
                assert "baseline prune" in (failure.get("message") or "")
            else:
                assert tc.find("failure").get("type") == "must_unmatched"

    gh = run(tmp_path, "--format", "github")
    assert gh.returncode == 3
    levels = {}
    for line in gh.stdout.splitlines():
        if line.startswith("::"):
            level, rest = line[2:].split(" ", 1)
            title = rest.split("title=", 1)[1].split("::", 1)[0]
            levels[title] = level
    for name, verdict in EXPECTED.items():
        for impl in IMPLS:
            reason = verdict if verdict != "fail" else "must_unmatched"
            want = {"xfail": "notice", "xpass": "error", "fail": "error"}[verdict]
            assert levels[f"{name} [{impl}] {reason}"] == want
    assert (
        "threads-cases: 5 cases on 2 implementations, 10 results: 2 fail, 6 xfail, 2 xpass in "
        in gh.stdout
    )

    pretty = run(tmp_path)
    assert pretty.returncode == 3
    assert "2 fail, 6 xfail, 2 xpass in " in pretty.stdout
    assert "xfail: weather-stub [threads-ts]: weather is unknowable" in pretty.stdout
    row = next(x for x in pretty.stdout.splitlines() if x.startswith("│ writes-summary "))
    assert row.count("xpass") == 2

    plugin = subprocess.run(
        # hypothesis's plugin alone costs about a second of CPU to load, for nothing here
        [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-p", "no:hypothesispytest",
         "-rfx", "--threads-cases",
         "cases", *[a for i in IMPLS for a in ("--threads-cases-impl", i)]],
        cwd=tmp_path, capture_output=True, text=True, timeout=300,
        env={**os.environ, "COLUMNS": "400"},  # short-summary lines are cut to the width
    )  # fmt: skip
    assert plugin.returncode == 1, plugin.stdout[-3000:]
    assert "4 failed, 6 xfailed" in plugin.stdout, plugin.stdout[-3000:]
    xpassed = [
        line
        for line in plugin.stdout.splitlines()
        if line.startswith("FAILED ")
        and "[XPASS(strict)] stale baseline entry: writes-summary" in line
    ]
    assert len(xpassed) == 2, plugin.stdout[-3000:]
    assert "XFAIL cases/weather-stub/case.json::weather-stub[threads-ts]" in plugin.stdout


def test_update_then_prune_leave_a_clean_baseline(tmp_path: Path) -> None:
    target = make_suite(tmp_path)
    impls = [a for i in IMPLS for a in ("--impl", i)]

    update = cli("baseline", "update", "cases", *impls, "--json", cwd=tmp_path)
    assert update.returncode == 0, update.stderr
    change = json.loads(update.stdout)
    assert [(e["case"], e["implementation"], e["check"], e["code"]) for e in change["added"]] == [
        ("deletes-file", i, "must[0]", "must_unmatched") for i in IMPLS
    ]
    assert change["removed"] == [] and change["total"] == 10
    assert target.read_bytes() == baseline_document(read_baseline(target).entries)  # canonical

    prune = cli("baseline", "prune", "cases", *impls, cwd=tmp_path)
    assert prune.returncode == 0, prune.stderr
    assert "- writes-summary [threads-py]: was broken once" in prune.stdout
    assert "2 removed, 8 entries" in prune.stdout
    assert {(e.case, e.implementation) for e in read_baseline(target)} == {
        (c, i) for c in BROKEN for i in IMPLS
    }

    clean = run(tmp_path, "--format", "json")
    assert clean.returncode == 0, clean.stdout[-2000:]
    assert json.loads(clean.stdout.splitlines()[-1])["counts"]["xfail"] == 8
    assert "2 baseline entries" in clean.stderr and "TODO" in clean.stderr  # the placeholders

    again = cli("baseline", "prune", "cases", *impls, cwd=tmp_path)
    assert again.returncode == 0 and "(unchanged)" in again.stdout


def _damage(case: Path, how: str) -> None:
    """Make a case unreadable: a missing file, a trailing comma, a schema error, a cut log."""
    if how == "missing":
        (case / "model.json").unlink()
    elif how == "comma":
        p = case / "case.json"
        p.write_text(p.read_text().rstrip().removesuffix("}") + ",}")
    elif how == "schema":
        p = case / "case.json"
        doc = read_json_file(p)
        doc["expect"]["must"] = "x"
        p.write_bytes(canonical_document(doc))
    else:
        log = case / "log.threads-py.jsonl"
        log.write_bytes(log.read_bytes()[: log.stat().st_size // 2])


def test_cases_that_cannot_be_read_stay_errors_and_never_enter_the_baseline(
    tmp_path: Path,
) -> None:
    damaged = {"reads-notes": "missing", "lists-files": "comma", "weather-stub": "schema"}
    damaged["writes-summary"] = "cut"
    for name in [*damaged, "deletes-file"]:
        shutil.copytree(CONFORMANCE / name, tmp_path / "cases" / name)
    for name, how in damaged.items():
        _damage(tmp_path / "cases" / name, how)
    impls = [a for i in IMPLS for a in ("--impl", i)]
    update = cli("baseline", "update", "cases", *impls, "--reason", "tracked", cwd=tmp_path)
    assert update.returncode == 0, update.stderr
    assert "0 added" in update.stdout
    assert "4 case(s) cannot be read and get no entry" in update.stderr
    assert "cases/writes-summary (log_invalid)" in update.stderr
    assert not read_baseline(tmp_path / ".threads-cases" / "baseline.json").entries

    # entries an older version wrote for them do not make them pass, and prune removes them
    target = tmp_path / ".threads-cases" / "baseline.json"
    target.write_text(
        json.dumps(
            {
                "format": 1,
                "entries": [
                    {"case": c, "implementation": i, "code": code, "reason": "tracked"}
                    for c in damaged
                    for i in IMPLS
                    for code in ["log_invalid" if c == "writes-summary" else "case_invalid"]
                ],
            }
        )
    )
    proc = run(tmp_path, "--format", "json")
    assert proc.returncode == 3, proc.stdout[-2000:]
    results = [json.loads(x) for x in proc.stdout.splitlines()][1:-1]
    assert {r["case"]: r["verdict"] for r in results if r["case"] in damaged} == dict.fromkeys(
        damaged, "error"
    )
    broken = [r for r in results if r["case"] in damaged]
    assert all("never lists a case that cannot be read" in r["message"] for r in broken)
    prune = cli("baseline", "prune", "cases", *impls, cwd=tmp_path)
    assert prune.returncode == 0, prune.stderr
    assert "8 removed, 0 entries" in prune.stdout
