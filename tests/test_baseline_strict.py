"""A baseline written by ``baseline update`` holds under ``--strict`` too (issue 38,
spec/replay.md 12.4): a failing case's warnings (here an ``expect`` that missed after the
stop), which ``--strict`` turns into failures, are recorded with its failures, so the same
baseline gives ``xfail`` with and without ``--strict``; a baseline written before, which
lacks them, gets them from the next update."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from conftest import CONFORMANCE, cli
from golden import assert_golden


def _failing_case(root: Path) -> None:
    case = root / "cases" / "weather-stub"
    shutil.copytree(CONFORMANCE / "weather-stub", case)
    stubs = json.loads((case / "stubs.json").read_text())
    stubs["calls"][0]["input"]["city"] = "Bergen"  # missing_stub: the turn stops early
    (case / "stubs.json").write_text(json.dumps(stubs))
    meta = json.loads((case / "case.json").read_text())
    meta["expect"]["expect"] = [{"type": "turn_completed"}]  # misses after the stop: a warn
    (case / "case.json").write_text(json.dumps(meta))


def _verdict(root: Path, *flags: str) -> str:
    p = cli("run", "cases", "--impl", "threads-py", "--format", "json", *flags, cwd=root)
    (result,) = [json.loads(x) for x in p.stdout.splitlines() if '"kind":"result"' in x]
    return str(result["verdict"])


def test_a_baseline_update_holds_under_strict(tmp_path: Path) -> None:
    _failing_case(tmp_path)
    assert (_verdict(tmp_path), _verdict(tmp_path, "--strict")) == ("fail", "fail")
    up = cli(
        "baseline", "update", "cases", "--impl", "threads-py", "--reason", "known", cwd=tmp_path
    )
    assert up.returncode == 0, up.stdout + up.stderr
    assert "expect expect_unmatched" in up.stdout
    assert (_verdict(tmp_path), _verdict(tmp_path, "--strict")) == ("xfail", "xfail")
    assert_golden("baseline-update-strict.txt", up.stdout)
    again = cli("baseline", "update", "cases", "--impl", "threads-py", "--strict", cwd=tmp_path)
    assert "0 added" in again.stdout or "nothing to add" in again.stdout, again.stdout


def test_an_older_baseline_gets_the_warnings_from_the_next_update(tmp_path: Path) -> None:
    _failing_case(tmp_path)
    entries = [
        {
            "case": "weather-stub",
            "implementation": "threads-py",
            "reason": "known",
            "check": c,
            "code": k,
        }
        for c, k in (("must[0]", "must_unmatched"), ("stop", "missing_stub"))
    ]
    (tmp_path / ".threads-cases").mkdir()
    path = tmp_path / ".threads-cases" / "baseline.json"
    path.write_text(json.dumps({"format": 1, "entries": entries}))
    assert (_verdict(tmp_path), _verdict(tmp_path, "--strict")) == ("xfail", "fail")
    up = cli("baseline", "update", "cases", "--impl", "threads-py", cwd=tmp_path)
    assert "1 added" in up.stdout, up.stdout
    assert _verdict(tmp_path, "--strict") == "xfail"
    # an entry that already covers the check (no code) is not repeated
    doc = json.loads(path.read_text())
    doc["entries"] = [e for e in doc["entries"] if e["check"] != "expect"]
    doc["entries"].append(
        {"case": "weather-stub", "implementation": "threads-py", "reason": "x", "check": "expect"}
    )
    path.write_text(json.dumps(doc))
    same = cli("baseline", "update", "cases", "--impl", "threads-py", cwd=tmp_path)
    assert "+ " not in same.stdout, same.stdout
