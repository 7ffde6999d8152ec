"""The ``driver-requests`` and ``agent`` areas of ``threads-cases conformance``
(spec/conformance.md 2.12, 2.13): every entry of spec/conformance/driver-requests/ and of
agent/refusals.json sent as a request line to any implementation, judged by the code,
pointer and id of its answer (and the message, where agent/ gives one)."""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path

from conftest import cli

ROOT = Path(__file__).resolve().parent.parent
DATA = ROOT / "spec" / "conformance" / "driver-requests"
ENTRIES = sum(len(json.loads(p.read_text())["tests"]) for p in DATA.glob("*.json"))


def results(stdout: str) -> list[dict[str, object]]:
    lines = [json.loads(x) for x in stdout.splitlines()]
    return [x for x in lines if x["kind"] == "result"]


def test_every_entry_passes_on_both_built_in_implementations(tmp_path: Path) -> None:
    proc = cli(
        "conformance", "--area", "driver-requests", "--impl", "threads-py", "--impl",
        "threads-ts", "--format", "json", cwd=tmp_path,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stdout[-2000:]
    got = results(proc.stdout)
    assert len(got) == 2 * ENTRIES
    assert {r["verdict"] for r in got} == {"pass"}
    assert "driver-requests/values-1" in {r["case"] for r in got}


def test_the_agent_area_runs_on_both_built_in_implementations(tmp_path: Path) -> None:
    proc = cli(
        "conformance", "--area", "agent", "--impl", "threads-py", "--impl", "threads-ts",
        "--format", "json", cwd=tmp_path,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stdout[-2000:]
    got = results(proc.stdout)
    tests = json.loads((DATA.parent / "agent" / "refusals.json").read_text())["tests"]
    assert len(got) == 2 * len(tests)
    assert {r["verdict"] for r in got} == {"pass"}


def test_a_wrong_pointer_in_the_data_fails_with_wrong_error(tmp_path: Path) -> None:
    suite = tmp_path / "suite" / "driver-requests"
    suite.mkdir(parents=True)
    doc = json.loads((DATA / "values.json").read_text())
    doc["tests"] = doc["tests"][:1]
    doc["tests"][0]["pointer"] = "/nowhere"
    (suite / "values.json").write_text(json.dumps(doc))
    proc = cli(
        "conformance", str(suite.parent), "--impl", "threads-py", "--format", "json", cwd=tmp_path
    )
    assert proc.returncode == 3, proc.stdout[-2000:]  # a failing test (reports.md 5)
    (r,) = results(proc.stdout)
    assert (r["case"], r["verdict"], r["reasons"]) == (
        "driver-requests/values-1",
        "fail",
        ["wrong_error"],
    )


def test_a_driver_that_carries_out_every_request_fails_with_not_refused(tmp_path: Path) -> None:
    suite = tmp_path / "suite"
    shutil.copytree(DATA, suite / "driver-requests")
    driver = tmp_path / "yes-driver.py"
    driver.write_text(
        "import json, sys\n"
        "for line in sys.stdin:\n"
        "    msg = json.loads(line)\n"
        "    body = {'protocol': 1, 'implementation': {'name': 'yes', 'language': 'python',"
        " 'version': '0', 'dialect': 'threads-py', 'homepage': 'https://example.org'},"
        " 'capabilities': []} if msg.get('cmd') == 'hello' else {}\n"
        "    print(json.dumps({'id': msg.get('id'), 'ok': True, **body}), flush=True)\n"
    )
    (tmp_path / "threads-cases.toml").write_text(
        "[implementations.yes]\n"
        f"command = [{json.dumps(sys.executable)}, {json.dumps(str(driver))}]\n"
    )
    proc = cli("conformance", str(suite), "--impl", "yes", "--format", "json", cwd=tmp_path)
    assert proc.returncode == 3, proc.stdout[-2000:]  # a failing test (reports.md 5)
    got = results(proc.stdout)
    assert len(got) == ENTRIES
    assert {r["verdict"] for r in got} == {"fail"}
    assert {tuple(r["reasons"]) for r in got} == {("not_refused",)}
