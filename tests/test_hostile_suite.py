"""One bad case never sinks a run (issue 12, spec/reports.md 5.3): a suite of 50 cases of
which 10 are broken in 10 different ways gives 40 results and 10 ``error`` verdicts on each
implementation, a complete report, and exit status 3; the pytest plugin reports the same
as item failures, never a traceback."""

from __future__ import annotations

import json
import shutil
from collections import Counter
from collections.abc import Callable
from pathlib import Path

import pytest
from conftest import cli, ts_built

pytest_plugins = ["pytester"]

ROOT = Path(__file__).resolve().parents[1]
CASE = ROOT / "spec" / "conformance" / "cases" / "reads-notes"
LOGS = ("log.threads-py.jsonl", "log.threads-ts.jsonl")


def _set_last_ts(case: Path, ts: str) -> None:
    for name in LOGS:
        lines = (case / name).read_text("utf-8").splitlines()
        ev = json.loads(lines[-1])
        ev["ts"] = ts
        lines[-1] = json.dumps(ev, separators=(",", ":"), sort_keys=True)
        (case / name).write_text("\n".join(lines) + "\n", "utf-8")


def _edit_json(case: Path, name: str, change: Callable[[dict], None]) -> None:
    doc = json.loads((case / name).read_bytes())
    change(doc)
    (case / name).write_text(json.dumps(doc), "utf-8")


def _nest(depth: int) -> str:
    return "[" * depth + "]" * depth


#: Ten ways to break a case, each with a name that says how.
BREAKAGES: dict[str, Callable[[Path], None]] = {
    "bad-date": lambda c: _set_last_ts(c, "2026-02-30T00:00:00.000Z"),
    "clock-past-9999": lambda c: _set_last_ts(c, "9999-12-31T23:59:59.999Z"),
    "truncated-model": lambda c: (c / "model.json").write_bytes(
        (c / "model.json").read_bytes()[:40]
    ),
    "wrong-type-input": lambda c: _edit_json(c, "case.json", lambda d: d.update(input=42)),
    "missing-sandbox": lambda c: (c / "sandbox.json").unlink(),
    "unknown-format": lambda c: _edit_json(c, "case.json", lambda d: d.update(format=99)),
    "huge-number": lambda c: _edit_json(
        c, "model.json", lambda d: d["replies"][0]["usage"].update(input_tokens=2**60)
    ),
    "not-utf8-case": lambda c: (c / "case.json").write_bytes(b"\xff\xfe{}"),
    "deep-stubs": lambda c: (c / "stubs.json").write_text(_nest(300), "utf-8"),
    "changed-artifact": lambda c: next((c / "artifacts").iterdir()).write_bytes(b"other"),
}


@pytest.fixture(scope="module")
def hostile(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("hostile") / "cases"
    broken = iter(BREAKAGES.items())
    for i in range(50):
        how = next(broken, None) if i % 5 == 0 else None
        dest = root / (f"{i:02d}-{how[0]}" if how else f"{i:02d}-good")
        shutil.copytree(CASE, dest)
        if how:
            how[1](dest)
    return root


def _impls() -> list[str]:
    built = ts_built()
    return ["threads-py", "threads-ts"] if built else ["threads-py"]


def test_ten_broken_cases_give_ten_errors_per_implementation(hostile: Path) -> None:
    impls = _impls()
    args: list[str | Path] = ["run", hostile, "--format", "json"]
    for name in impls:
        args += ["--impl", name]
    p = cli(*args, cwd=hostile.parent)  # fails on a traceback
    assert p.returncode == 3, p.stderr
    lines = [json.loads(x) for x in p.stdout.splitlines()]
    assert lines[0]["kind"] == "header" and lines[-1]["kind"] == "footer"
    results = [x for x in lines if x["kind"] == "result"]
    assert len(results) == 50 * len(impls)
    for name in impls:
        mine = [r for r in results if r["implementation"] == name]
        assert Counter(r["verdict"] for r in mine) == {"pass": 40, "error": 10}, name
        for r in mine:
            broken = not r["path"].endswith("-good")
            assert (r["verdict"] == "error") == broken, r
            if broken:
                # one line naming the reason, never an internal error
                assert r["reasons"][0] != "internal_error", r
                assert r["message"].startswith(f"error[{r['reasons'][0]}]"), r
    by_case = {
        (Path(r["path"]).name, r["implementation"]): r["reasons"][0]
        for r in results
        if r["verdict"] == "error"
    }
    assert by_case[("00-bad-date", "threads-py")] == "log_invalid"
    assert by_case[("05-clock-past-9999", "threads-py")] == "invalid_request"
    if "threads-ts" in impls:
        assert by_case[("00-bad-date", "threads-ts")] == "log_invalid"
        assert by_case[("05-clock-past-9999", "threads-ts")] == "invalid_request"


def test_the_pytest_plugin_reports_broken_cases_as_item_failures(
    hostile: Path, pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("THREADS_CASES_DEBUG", raising=False)
    monkeypatch.delenv("PYTEST_ADDOPTS", raising=False)
    monkeypatch.chdir(hostile)
    # in process (the plugin needs no process of its own); without hypothesis's plugin, which
    # would import all of hypothesis at the end of the run
    p = pytester.runpytest_inprocess(
        "-q", "-p", "no:cacheprovider", "-p", "no:hypothesispytest", "--rootdir", hostile,
        "--threads-cases", hostile,
    )  # fmt: skip
    out = p.stdout.str()
    assert "Traceback" not in out, out[-3000:]
    assert "10 failed, 40 passed" in out, out[-3000:]
    assert p.ret == 1
