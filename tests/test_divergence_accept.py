"""Verdicts you can act on (issue 12), end to end: a changed system prompt, a changed tool
description and a changed sandbox file each give ``drifted`` whose first divergence names the
exact JSON pointer and both values, on both implementations and in every output format;
``accept`` clears each and the next run passes. Also: accept refuses a ``fail`` unless
--force, ``accept --supply`` writes answers in, and ``diff`` of logs and reports."""

from __future__ import annotations

import hashlib
import json
import shutil
import subprocess
import xml.etree.ElementTree as ET
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from conftest import cli, ts_built

from threads_cases.core.canonical import canonical_document
from threads_cases.core.dialects import get_dialect
from threads_cases.core.log import encode_log, read_log
from threads_cases.harness.check.divergence import ABSENT, first_difference

ROOT = Path(__file__).resolve().parents[1]
CASE = ROOT / "spec" / "conformance" / "cases" / "reads-notes"
DIALECTS = ("threads-py", "threads-ts")
IMPLS = list(DIALECTS) if ts_built() else ["threads-py"]
OLD_SYSTEM = "You are a careful assistant. Use tools when they help."
NEW_SYSTEM = "You are a terse assistant.\nNever guess."


def _edit_agent(case: Path, change: Callable[[dict[str, Any]], None]) -> None:
    """Change the agent in every log and expected state of the case, as an agent change
    carried into the case would."""
    for dialect in DIALECTS:
        d = get_dialect(dialect)
        log = case / f"log.{dialect}.jsonl"
        events = list(read_log(log, dialect=dialect))
        change(events[0]["data"]["agent"])
        log.write_bytes(encode_log(events, dialect=d))
        exp = case / f"expected.{dialect}.json"
        state = d.decode_state(json.loads(exp.read_bytes()))
        change(state["agent"])
        exp.write_bytes(canonical_document(d.encode_state(state)))


def _change_file(case: Path) -> None:
    new = b"buy bread\nand eggs\n"
    h = hashlib.sha256(new).hexdigest()
    (case / "artifacts" / h).write_bytes(new)
    doc = json.loads((case / "sandbox.json").read_bytes())
    doc["reads"][0].update(sha256=h, artifact=f"sha256:{h}")
    (case / "sandbox.json").write_bytes(canonical_document(doc))


def _set_system(agent: dict[str, Any]) -> None:
    agent["system"] = NEW_SYSTEM


def _set_description(agent: dict[str, Any]) -> None:
    agent["tools"][0]["description"] = "Read a file."


#: scenario -> (edit, call, pointer, recorded, replayed)
SCENARIOS: dict[str, tuple[Callable[[Path], None], int, str, Any, Any]] = {
    "system-prompt": (
        lambda c: _edit_agent(c, _set_system),
        0,
        "/system",
        OLD_SYSTEM,
        NEW_SYSTEM,
    ),
    "tool-description": (
        lambda c: _edit_agent(c, _set_description),
        0,
        "/tools/0/description",
        "Read a UTF-8 text file from the sandbox.",
        "Read a file.",
    ),
    "sandbox-file": (
        _change_file,
        1,
        "/messages/2/content/0/content",
        "buy milk\ncall Ana\n",
        "buy bread\nand eggs\n",
    ),
}


def _results(p: subprocess.CompletedProcess[str]) -> list[dict[str, Any]]:
    return [x for x in map(json.loads, p.stdout.splitlines()) if x["kind"] == "result"]


@dataclass
class Drift:
    """The CLI's answers on a folder holding one edited copy of the case per scenario
    (``cases/<scenario>``): one subprocess per command for all the scenarios."""

    root: Path
    json_run: subprocess.CompletedProcess[str]
    shown: dict[str, subprocess.CompletedProcess[str]]
    accepted: list[subprocess.CompletedProcess[str]]
    rerun: subprocess.CompletedProcess[str]


@pytest.fixture(scope="module")
def drift(tmp_path_factory: pytest.TempPathFactory) -> Drift:
    root = tmp_path_factory.mktemp("drift")
    for scenario, (edit, *_rest) in SCENARIOS.items():
        shutil.copytree(CASE, root / "cases" / scenario)
        edit(root / "cases" / scenario)
    impl_args = [a for n in IMPLS for a in ("--impl", n)]
    json_run = cli("run", "cases", *impl_args, "--format", "json", "--junit", "j.xml", cwd=root)
    shown = {
        fmt: cli("run", "cases", *impl_args, "--format", fmt, cwd=root, env={"COLUMNS": "300"})
        for fmt in ("pretty", "github")
    }
    # accept each implementation's replay; then every implementation passes
    accepted = [cli("accept", "cases", "--impl", name, cwd=root) for name in IMPLS]
    rerun = cli("run", "cases", *impl_args, "--format", "json", cwd=root)
    return Drift(root, json_run, shown, accepted, rerun)


def _mine(p: subprocess.CompletedProcess[str], scenario: str) -> list[dict[str, Any]]:
    return [r for r in _results(p) if Path(r["path"]).name == scenario]


@pytest.mark.xdist_group("divergence-scenarios")  # the module fixture is built once
@pytest.mark.parametrize("scenario", list(SCENARIOS))
def test_a_change_drifts_with_its_pointer_and_accept_clears_it(drift: Drift, scenario: str) -> None:
    _edit, call, pointer, recorded, replayed = SCENARIOS[scenario]
    # JSON Lines: the whole values
    p = drift.json_run
    assert p.returncode == 0, p.stdout
    mine = _mine(p, scenario)
    assert sorted(r["implementation"] for r in mine) == sorted(IMPLS), p.stdout
    for r in mine:
        assert r["verdict"] == "drifted" and "request_diverged" in r["reasons"], r
        div = r["divergence"]
        assert (div["kind"], div["call"], div["pointer"]) == ("request", call, pointer), div
        assert (div["recorded"], div["replayed"]) == (recorded, replayed), div
        assert div["event_type"] == "model_requested"
    junit = ET.parse(drift.root / "j.xml").getroot()
    cases = [c for c in junit.iter("testcase") if c.get("file") == f"cases/{scenario}"]
    assert len(cases) == len(IMPLS), ET.tostring(junit)
    for c in cases:
        text = ET.tostring(c, encoding="unicode")
        assert f"first divergence: request (model call {call}" in text, text
        assert pointer in text, text
    # the terminal panel and GitHub annotations: the pointer and both (shortened) values
    for p in drift.shown.values():
        assert p.stdout.count(f"at {pointer}") >= len(IMPLS), p.stdout
        for value in (recorded, replayed):
            assert json.dumps(value.split("\n")[0])[:20] in p.stdout, (value, p.stdout)
    for p in drift.accepted:
        assert p.returncode == 0, p.stdout + p.stderr
    assert f"accepted cases/{scenario} [{IMPLS[0]}]" in drift.accepted[0].stdout
    mine = _mine(drift.rerun, scenario)
    assert len(mine) == len(IMPLS), drift.rerun.stdout
    assert {r["verdict"] for r in mine} == {"pass"}, drift.rerun.stdout
    assert all(r["divergence"] is None for r in mine)


def test_accept_prints_the_change_and_run_accept_does_the_same(tmp_path: Path) -> None:
    case = tmp_path / "cases" / "reads-notes"
    shutil.copytree(CASE, case)
    _change_file(case)
    p = cli("accept", "cases", cwd=tmp_path)
    assert p.returncode == 0
    assert "accepted cases/reads-notes [threads-py] (was drifted: request_diverged)" in p.stdout
    assert "/request_sha256" in p.stdout and "model.json" in p.stdout
    assert "nothing to accept" in cli("accept", "cases", cwd=tmp_path).stdout
    shutil.rmtree(case)
    shutil.copytree(CASE, case)
    _change_file(case)
    p = cli("run", "cases", "--impl", "threads-py", "--accept", cwd=tmp_path)
    assert "accepted cases/reads-notes [threads-py]" in p.stdout
    assert "1 pass" in cli("run", "cases", "--impl", "threads-py", cwd=tmp_path).stdout


def test_accept_refuses_a_failing_case_unless_forced(tmp_path: Path) -> None:
    case = tmp_path / "cases" / "reads-notes"
    shutil.copytree(CASE, case)
    meta = json.loads((case / "case.json").read_bytes())
    meta["expect"]["must"].append({"type": "tool_result", "data": {"is_error": True}})
    (case / "case.json").write_bytes(canonical_document(meta))
    before = (case / "model.json").read_bytes()
    p = cli("accept", "cases", cwd=tmp_path)
    assert p.returncode == 3 and "must_unmatched" in p.stderr and "--force" in p.stderr
    assert (case / "model.json").read_bytes() == before
    j = cli("accept", "cases", "--format", "json", cwd=tmp_path)
    assert j.returncode == 3 and j.stderr == ""
    [entry] = json.loads(j.stdout)["cases"]  # the refusal as the text gives it, hint included
    text_hint = next(line for line in p.stderr.splitlines() if line.startswith("  hint: "))
    assert entry["accepted"] is False and entry["code"] in p.stderr
    assert entry["hint"] == text_hint.removeprefix("  hint: ")
    assert set(entry) == {"path", "accepted", "code", "message", "hint", "file", "line", "pointer"}
    usage = cli("accept", "--format", "json", "--bogus", "cases", cwd=tmp_path)
    assert usage.returncode == 2 and json.loads(usage.stdout)["code"] == "invalid_request"
    p = cli("accept", "cases", "--force", cwd=tmp_path)
    assert p.returncode == 0, p.stderr


def test_accept_supply_writes_the_supplied_answer_into_the_case(tmp_path: Path) -> None:
    case = tmp_path / "cases" / "reads-notes"
    shutil.copytree(CASE, case)
    model = json.loads((case / "model.json").read_bytes())
    last = model["replies"].pop()
    (case / "model.json").write_bytes(canonical_document(model))
    p = cli("run", "cases", "--impl", "threads-py", "--format", "json", cwd=tmp_path)
    (r,) = _results(p)
    assert r["verdict"] == "fail" and r["reasons"][0] == "model_exhausted"
    assert r["divergence"]["kind"] == "stop"
    supply = tmp_path / "supply.json"
    n = len(model["replies"])
    answer = {k: last[k] for k in ("message", "stop_reason", "usage")}
    supply.write_text(json.dumps({"calls": {f"model:{n}": answer}}))
    p = cli("accept", "cases", "--supply", supply, cwd=tmp_path)
    assert p.returncode == 0, p.stdout + p.stderr
    written = json.loads((case / "model.json").read_bytes())["replies"]
    assert len(written) == n + 1 and written[-1]["message"] == last["message"]
    p = cli("run", "cases", "--impl", "threads-py", "--format", "json", cwd=tmp_path)
    assert [r["verdict"] for r in _results(p)] == ["pass"]


def test_diff_of_two_logs_across_dialects_and_of_two_reports(tmp_path: Path) -> None:
    a = CASE / "log.threads-py.jsonl"
    assert cli("diff", a, CASE / "log.threads-ts.jsonl", cwd=tmp_path).returncode == 0
    case = tmp_path / "c" / "reads-notes"
    shutil.copytree(CASE, case)
    _edit_agent(case, _set_system)
    p = cli("diff", a, case / "log.threads-ts.jsonl", cwd=tmp_path)
    assert p.returncode == 1
    assert p.stdout.startswith("first divergence: event 0 (thread_started) at /data/agent/system")
    assert "summary: 1 events in A (threads-py), 1 in B (threads-ts); 1 differ" in p.stdout
    shutil.copytree(CASE, tmp_path / "d" / "reads-notes")
    cli("run", "d", "--impl", "threads-py", "--format", "json", cwd=tmp_path)
    r1 = tmp_path / "r1.jsonl"
    shutil.copy(tmp_path / ".threads-cases" / "last-report.jsonl", r1)
    cli("run", "c", "--impl", "threads-py", "--format", "json", cwd=tmp_path)
    r2 = tmp_path / ".threads-cases" / "last-report.jsonl"
    assert cli("diff", r1, r1, cwd=tmp_path).returncode == 0
    p = cli("diff", r1, r2, "--format", "json", cwd=tmp_path)
    assert p.returncode == 1
    out = json.loads(p.stdout)
    assert out["first"]["pointer"] == "/verdict"
    assert (out["first"]["a"], out["first"]["b"]) == ("pass", "drifted")
    assert out["summary"]["changed"] == 1


def test_first_difference_walks_in_document_order() -> None:
    assert first_difference({"a": 1, "b": [1, 2]}, {"a": 1, "b": [1, 3]}) == ("/b/1", 2, 3)
    assert first_difference({"a/b": 1}, {}) == ("/a~1b", 1, ABSENT)
    assert first_difference([1], [1, 2]) == ("/1", ABSENT, 2)
    assert first_difference(True, 1) == ("", True, 1)
    assert first_difference({"x": [{"y": "z"}]}, {"x": [{"y": "z"}]}) is None


def test_accept_keeps_the_interruption_of_an_interrupted_turn(tmp_path: Path) -> None:
    """An interrupted case (model.json ``interruption``) that drifts keeps its interruption
    point through ``accept``, byte for byte, and passes afterwards (in process)."""
    from threads_cases.harness.run.accept import accept_case
    from threads_cases.harness.run.registry import open_implementation
    from threads_cases.harness.run.runner import run_case

    case = tmp_path / "cases" / "interrupted-turn"
    shutil.copytree(CASE.parent / "interrupted-turn", case)
    interruption = json.loads((case / "model.json").read_bytes())["interruption"]
    _edit_agent(case, _set_system)
    impl = open_implementation("threads-py", required=True)
    try:
        done = accept_case(case, impl)
    finally:
        impl.close()
    assert done.verdict == "drifted" and done.changed
    model = json.loads((case / "model.json").read_bytes())
    assert model["interruption"] == interruption
    assert model["replies"][0]["request"]["system"] == NEW_SYSTEM
    assert run_case(case, "threads-py").verdict == "pass"
