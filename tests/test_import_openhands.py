"""OpenHands trajectories (lists of events) as threads (spec/importers.md section 12).

tests/importers/openhands/ holds three trajectories written for these tests from OpenHands'
event serialisation (every id, path and text invented): ``function-calling.json`` (a
CodeAct run with function calling: two calls of one model response, the same test command
twice, arguments encoded twice, a finish call, then a second turn), ``provider-error.json``
(``{"trajectory": [...]}``: a rate-limit error mid-turn, then "continue") and
``text-actions.json`` (an older agent without function calling: synthesised call ids,
failing commands). Each right value is asserted here; every completed turn, and those of
trajectories cut short, is saved and replayed on both implementations.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from conftest import cli
from imported_cases import IMPLEMENTATIONS, run_both, save_turns

from threads_cases.case.turns import list_turns
from threads_cases.core.errors import CaseError
from threads_cases.core.log import validate_log
from threads_cases.importers import Stats, import_events, import_to_file
from threads_cases.importers.detect import detect_format

HERE = Path(__file__).resolve().parent
TRAJ = HERE / "importers" / "openhands"
FC = TRAJ / "function-calling.json"


def imported(path: Path, **kw: Any) -> tuple[list[dict[str, Any]], Stats]:
    stats = Stats()
    return import_events("openhands", path, stats=stats, **kw), stats


def of_type(events: list[dict[str, Any]], t: str) -> list[dict[str, Any]]:
    return [e for e in events if e["type"] == t]


def test_function_calling_replies_by_response_results_by_cause() -> None:
    events, stats = imported(FC)
    assert [t["status"] for t in list_turns(events)] == ["completed", "completed"]
    replies = [e["data"]["message"]["content"] for e in of_type(events, "model_responded")]
    # the two calls of one model response are one reply, after its text
    assert [b["type"] for b in replies[0]] == ["text", "tool_use", "tool_use"]
    calls = [e["data"] for e in of_type(events, "tool_called")]
    assert [c["tool_use_id"] for c in calls] == [
        "toolu_01",
        "toolu_02",
        "toolu_03",
        "toolu_04",
        "toolu_05",
    ]
    assert calls[3]["input"]["new_str"] == "a + b"  # decoded twice: it was encoded twice
    assert [w.reason for w in stats.warnings] == ["double_encoded"]
    results = {e["data"]["tool_use_id"]: e["data"] for e in of_type(events, "tool_result")}
    assert results["toolu_03"]["is_error"] is True and "1 failed" in results["toolu_03"]["content"]
    assert results["toolu_05"]["is_error"] is False and "1 passed" in results["toolu_05"]["content"]
    assert replies[4] == [{"type": "text", "text": "Fixed add() in calc.py; the tests pass."}]
    assert of_type(events, "x_openhands.finish")[0]["data"]["task_completed"] == "true"
    agent = events[0]["data"]["agent"]
    assert agent["system"].startswith("You are OpenHands agent")
    assert agent["model"] == "claude-sonnet-4-5-20250929"
    assert [t["name"] for t in agent["tools"]] == ["execute_bash", "str_replace_editor", "finish"]
    usage = of_type(events, "model_responded")[0]["data"]["usage"]
    assert usage == {"input_tokens": 1800, "output_tokens": 60}


def test_a_provider_error_fails_the_turn_and_continue_starts_the_next() -> None:
    events, _ = imported(TRAJ / "provider-error.json")
    assert [t["status"] for t in list_turns(events)] == ["failed", "completed"]
    (failed,) = of_type(events, "turn_failed")
    assert failed["data"]["error"]["code"] == "provider_error"
    assert "rate_limit_error" in failed["data"]["error"]["message"]
    assert len(of_type(events, "model_responded")) == 2


def test_text_actions_get_synthesised_ids_and_pair_by_cause() -> None:
    events, _ = imported(TRAJ / "text-actions.json")
    calls = [e["data"] for e in of_type(events, "tool_called")]
    assert [(c["tool_use_id"], c["name"]) for c in calls] == [
        ("event-1", "run"),
        ("event-3", "run"),
    ]
    assert calls[0]["input"]["command"] == calls[1]["input"]["command"]
    assert all(e["data"]["is_error"] for e in of_type(events, "tool_result"))
    assert [t["status"] for t in list_turns(events)] == ["completed"]


def test_results_pair_by_cause_never_by_position(tmp_path: Path) -> None:
    doc = json.loads(FC.read_text())
    # the second call's observation comes before the first's
    doc[5], doc[6], doc[7] = doc[6], doc[7], doc[5]
    path = tmp_path / "swapped.json"
    path.write_text(json.dumps(doc))
    events, _ = imported(path)
    results = {
        e["data"]["tool_use_id"]: e["data"]["content"] for e in of_type(events, "tool_result")
    }
    assert results["toolu_01"] == "test_calc.py" and results["toolu_02"].startswith(
        "     1\tdef add"
    )


@pytest.mark.parametrize("fraction", [0.2, 0.45, 0.6, 0.8, 0.95])
def test_a_trajectory_cut_short_is_an_interrupted_turn(tmp_path: Path, fraction: float) -> None:
    data = FC.read_bytes()
    path = tmp_path / "cut.json"
    path.write_bytes(data[: int(len(data) * fraction)])
    assert detect_format(path) == "openhands"
    events, stats = imported(path)
    assert of_type(events, "turn_failed")[-1]["data"]["error"]["code"] == "interrupted"
    assert [w.reason for w in stats.warnings if w.reason == "cut_record"] == ["cut_record"]
    with pytest.raises(CaseError) as exc:
        imported(path, strict=True)
    assert exc.value.code == "import_invalid"


def test_damaged_events_are_skipped_and_strict_refuses(tmp_path: Path) -> None:
    doc = json.loads(FC.read_text())
    doc.insert(3, ["not", "an", "event"])
    path = tmp_path / "damaged.json"
    path.write_text(json.dumps(doc))
    events, stats = imported(path)
    assert [(w.line, w.reason) for w in stats.warnings if w.code == "import_skipped"] == [
        (4, "invalid_line")
    ]
    assert len(list_turns(events)) == 2
    with pytest.raises(CaseError) as exc:
        imported(path, strict=True)
    assert exc.value.code == "import_invalid" and exc.value.location.pointer == "/3"


@pytest.mark.parametrize(
    "body", [b"", b"[{", b'{"events": 3}', b"12", b'[{"kind": "ActionEvent", "id": "a1"}]']
)
def test_not_a_trajectory_is_refused_cleanly(tmp_path: Path, body: bytes) -> None:
    src = tmp_path / "x.json"
    src.write_bytes(body)
    out = tmp_path / "out.jsonl"
    p = cli("import", "openhands", src, "-o", out, "--strict", cwd=tmp_path)
    assert p.returncode == 1, p.stderr
    assert p.stderr.startswith(f"error[import_invalid]: {src}"), p.stderr
    assert "Traceback" not in p.stderr and not out.exists()


def test_auto_detects_both_shapes(tmp_path: Path) -> None:
    for src in sorted(TRAJ.glob("*.json")):
        assert detect_format(src) == "openhands", src
    p = cli(
        "save", "--from", "auto", FC, "--turn", "1", "--name", "fix", "--dir", "cases", cwd=tmp_path
    )
    assert p.returncode == 0, p.stderr
    assert "read as openhands" in p.stderr


def test_every_completed_turn_saves_and_passes_on_both_implementations(tmp_path: Path) -> None:
    cases = tmp_path / "cases"
    names = []
    sources = sorted(TRAJ.glob("*.json"))
    for fraction in (0.6, 0.95):
        cut = tmp_path / f"cut-{fraction}.json"
        cut.write_bytes(FC.read_bytes()[: int(FC.stat().st_size * fraction)])
        sources.append(cut)
    for k, src in enumerate(sources):
        log = tmp_path / f"log{k}.jsonl"
        import_to_file("openhands", src, log)
        assert validate_log(log) == []
        names += save_turns(log, cases, f"o{k}")
    assert len(names) >= 6
    results = run_both(cases, tmp_path)
    for name in names:
        for impl in IMPLEMENTATIONS:
            assert results[(name, impl)]["verdict"] == "pass", (name, impl, results[(name, impl)])


def test_a_call_id_reused_by_a_later_response_pairs_with_its_own_call(tmp_path: Path) -> None:
    doc = json.loads(FC.read_text())
    # the last test run reuses the first run's call id, and its observation names no cause
    for ev in (doc[12], doc[13]):
        ev["tool_call_metadata"]["tool_call_id"] = "toolu_03"
    doc[12]["tool_call_metadata"]["model_response"]["choices"][0]["message"]["tool_calls"][0][
        "id"
    ] = "toolu_03"
    del doc[13]["cause"]
    path = tmp_path / "reused.json"
    path.write_text(json.dumps(doc))
    events, _ = imported(path)
    got = [
        (e["data"]["tool_use_id"], e["data"]["content"][:6], e["data"]["is_error"])
        for e in of_type(events, "tool_result")
        if e["data"]["tool_use_id"] == "toolu_03"
    ]
    assert got == [("toolu_03", "F\nFAIL", True), ("toolu_03", ".\n1 pa", False)]
    assert [t["status"] for t in list_turns(events)] == ["completed", "completed"]
    log = tmp_path / "reused.jsonl"
    import_to_file("openhands", path, log)
    names = save_turns(log, tmp_path / "cases")
    results = run_both(tmp_path / "cases", tmp_path)
    assert {results[(n, i)]["verdict"] for n in names for i in IMPLEMENTATIONS} == {"pass"}
