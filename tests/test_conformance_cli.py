"""The conformance and implementations commands through the real CLI."""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path

from conftest import cli

from threads_cases.core.canonical import canonical_document
from threads_cases.core.schemas import validator
from threads_cases.core.strictjson import read_json_file

ROOT = Path(__file__).resolve().parent.parent
SUITE = ROOT / "spec" / "conformance"


def small_suite(tmp_path: Path) -> Path:
    suite = tmp_path / "suite"
    for area in ("reduce", "match", "canonical"):
        (suite / area).mkdir(parents=True)
        for p in sorted((SUITE / area).glob("*.json"))[:5]:
            shutil.copy(p, suite / area / p.name)
    shutil.copytree(SUITE / "cases" / "reads-notes", suite / "cases" / "reads-notes")
    return suite


def test_the_shipped_suite_passes_on_python_and_the_report_follows_its_schema(
    tmp_path: Path,
) -> None:
    proc = cli("conformance", "--impl", "threads-py", "--format", "json", cwd=tmp_path)
    assert proc.returncode == 0, proc.stdout[-2000:]
    lines = [json.loads(x) for x in proc.stdout.splitlines()]
    v = validator("report.schema.json")
    for line in lines:
        assert v.is_valid(line), line
    results = [x for x in lines if x["kind"] == "result"]
    areas = {r["case"].split("/")[0] for r in results}
    assert areas == {"reduce", "match", "canonical", "driver-requests", "replay", "cases", "agent"}
    (foot,) = [x for x in lines if x["kind"] == "footer"]
    # the writer level's areas are not sent to drivers yet (spec/conformance.md 9)
    assert foot["levels"]["threads-py"]["level"] == "replayer"
    assert foot["levels"]["threads-py"]["next"] == "writer"
    assert len(results) >= 150
    assert lines[-1]["counts"]["pass"] == len(results)


def test_the_matrix_groups_by_area_and_sums_up_per_implementation(tmp_path: Path) -> None:
    proc = cli("conformance", str(small_suite(tmp_path)), "--impl", "threads-py", cwd=tmp_path)
    assert proc.returncode == 0
    for area in ("reduce", "match", "canonical", "cases"):
        assert area in proc.stdout
    assert "threads-py: 16 passed, 0 failed, 0 errored, 0 skipped" in proc.stdout


def test_a_wrong_expectation_fails_and_a_skip_list_entry_marks_it_known(tmp_path: Path) -> None:
    suite = small_suite(tmp_path)
    victim = sorted((suite / "match").glob("*.json"))[0]
    doc = read_json_file(victim)
    doc["matched"] = not doc["matched"]
    victim.write_bytes(canonical_document(doc))
    proc = cli("conformance", str(suite), "--impl", "threads-py", "--format", "json", cwd=tmp_path)
    assert proc.returncode == 3
    failed = [json.loads(x) for x in proc.stdout.splitlines() if '"verdict":"fail"' in x]
    assert [f["case"] for f in failed] == [f"match/{victim.stem}"]
    assert failed[0]["reasons"] == ["match_differs"]
    (tmp_path / "a.jsonl").write_text(proc.stdout)  # the report before the skip list

    (suite / "skips").mkdir()
    listed = {"test": f"match/{victim.stem}", "reason": "known: see issue"}
    (suite / "skips" / "threads-py.json").write_bytes(
        canonical_document({"format": 1, "skips": [listed]})
    )
    proc = cli("conformance", str(suite), "--impl", "threads-py", "--format", "json", cwd=tmp_path)
    assert proc.returncode == 0
    (tmp_path / "b.jsonl").write_text(proc.stdout)
    known = [json.loads(x) for x in proc.stdout.splitlines() if '"verdict":"xfail"' in x]
    assert [k["case"] for k in known] == [f"match/{victim.stem}"]
    assert known[0]["reasons"] == ["match_differs"]  # the test still runs
    assert known[0]["baseline"] == {"reason": "known: see issue"}
    # a listed test that passes is a stale entry: xpass fails the run, naming the file
    passing = sorted((suite / "match").glob("*.json"))[1].stem
    stale = {"test": f"match/{passing}", "reason": "fixed since"}
    (suite / "skips" / "threads-py.json").write_bytes(
        canonical_document({"format": 1, "skips": [listed, stale]})
    )
    proc = cli("conformance", str(suite), "--impl", "threads-py", "--format", "json", cwd=tmp_path)
    assert proc.returncode == 3
    xpass = [json.loads(x) for x in proc.stdout.splitlines() if '"verdict":"xpass"' in x]
    assert [x["case"] for x in xpass] == [f"match/{passing}"]
    assert "remove it from " in xpass[0]["message"] and "threads-py.json" in xpass[0]["message"]

    diff = cli("conformance", "--diff", "a.jsonl", "b.jsonl", "--format", "json", cwd=tmp_path)
    assert diff.returncode == 1
    assert json.loads(diff.stdout)["changes"] == [
        {
            "case": f"match/{victim.stem}",
            "implementation": "threads-py",
            "before": "fail",
            "after": "xfail",
        }
    ]
    same = cli("conformance", "--diff", "a.jsonl", "a.jsonl", cwd=tmp_path)
    assert same.returncode == 0 and "no result changed" in same.stdout


def test_refusals_exit_2_with_a_code_on_stdout(tmp_path: Path) -> None:
    proc = cli("conformance", "--impl", "nope", "--format", "json", cwd=tmp_path)
    assert proc.returncode == 2
    assert json.loads(proc.stdout)["code"] == "invalid_request"
    empty = tmp_path / "empty"
    empty.mkdir()
    proc = cli("conformance", str(empty), "--impl", "threads-py", "--format", "json", cwd=tmp_path)
    assert proc.returncode == 2 and json.loads(proc.stdout)["code"] == "invalid_request"


def test_the_isolated_python_driver_passes_with_protocol_validation(tmp_path: Path) -> None:
    proc = cli(
        "conformance",
        str(small_suite(tmp_path)),
        "--impl",
        "threads-py",
        "--isolated",
        "--validate-protocol",
        "--format",
        "json",
        cwd=tmp_path,
    )
    assert proc.returncode == 0, proc.stdout[-2000:]


def test_implementations_lists_the_builtins_and_configured_ones(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text(
        "[tool.threads-cases.implementations.mine]\n"
        f'command = [{json.dumps(sys.executable)}, "-m", "threads_cases.protocol.driver"]\n'
        'dialect = "threads-py"\n'
    )
    proc = cli("implementations", cwd=tmp_path)
    assert proc.returncode == 0
    for name in ("threads-py", "threads-ts", "mine"):
        assert name in proc.stdout
    assert "0.1.0" in proc.stdout


def test_implementations_says_in_full_why_one_cannot_start(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text(
        "[tool.threads-cases.implementations.gone]\n"
        'command = ["./no-such-driver-with-a-long-name-that-a-narrow-table-would-cut"]\n'
        'dialect = "threads-py"\n'
    )
    proc = cli("implementations", cwd=tmp_path, env={"COLUMNS": "60"})
    assert "…" not in proc.stdout  # nothing cut to the table's width
    # the reason code in the table, the whole message on a line of its own under it
    line = next(x for x in proc.stdout.splitlines() if x.startswith("gone: driver_"))
    _code, message = line.removeprefix("gone: ").split(": ", 1)
    assert message and message not in proc.stdout.replace(line, "")
