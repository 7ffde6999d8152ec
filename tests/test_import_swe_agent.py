"""SWE-agent trajectories (.traj) as threads (spec/importers.md section 8).

tests/importers/swe-agent/ holds two trajectories written for these tests (every path, id
and text invented): one with function calling (its own call ids, a demonstration skipped)
and one of older text actions (synthesised call ids, the same command twice answered by
occurrence). Each is saved and replayed on both implementations.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from conftest import cli

from threads_cases.case.turns import list_turns
from threads_cases.core.errors import CaseError
from threads_cases.importers import Stats, import_events

HERE = Path(__file__).resolve().parent
TRAJ = HERE / "importers" / "swe-agent"


def imported(path: Path, **kw: Any) -> tuple[list[dict[str, Any]], Stats]:
    stats = Stats()
    return import_events("swe-agent", path, stats=stats, **kw), stats


def of_type(events: list[dict[str, Any]], t: str) -> list[dict[str, Any]]:
    return [e for e in events if e["type"] == t]


def test_function_calling_trajectory() -> None:
    events, stats = imported(TRAJ / "function-calling.traj")
    (turn,) = list_turns(events)
    assert turn["status"] == "completed" and turn["text"].startswith("<uploaded_files>")
    calls = [e["data"] for e in of_type(events, "tool_called")]
    assert [(c["tool_use_id"], c["name"]) for c in calls] == [
        ("call_G1", "bash"),
        ("call_E2", "str_replace_editor"),
    ]
    assert calls[1]["input"]["new_str"] == "'kb': 1024"
    results = [e["data"]["content"] for e in of_type(events, "tool_result")]
    assert results[0] == "OBSERVATION:\n4:    'kb': 1000,"
    # the submit call is the answer, not an external call
    last = of_type(events, "model_responded")[-1]["data"]["message"]["content"]
    assert last[-1] == {"type": "text", "text": "submit"}
    (sub,) = of_type(events, "x_swe_agent.submission")
    assert sub["data"]["exit_status"] == "submitted"
    assert "'kb': 1024" in sub["data"]["submission"]
    started = of_type(events, "thread_started")[0]["data"]
    assert started["agent"]["model"] == "claude-sonnet-4-5"
    assert started["agent"]["system"].startswith("SETTING:")
    assert stats.skipped["demonstration message"] == 1


def test_text_action_trajectory_synthesises_ids_and_pairs_by_occurrence() -> None:
    events, _ = imported(TRAJ / "text-actions.traj")
    calls = [e["data"] for e in of_type(events, "tool_called")]
    assert [(c["tool_use_id"], c["input"]) for c in calls] == [
        ("step-1", {"command": 'find_file "sizes.py"'}),
        ("step-2", {"command": "open sizes.py"}),
        ("step-3", {"command": "open sizes.py"}),
    ]
    assert [t["status"] for t in list_turns(events)] == ["completed"]


@pytest.mark.parametrize(
    ("status", "code"),
    [("exit_cost", "exit_cost"), ("exit_format", "exit_format"), (None, "interrupted")],
)
def test_a_run_that_did_not_submit_fails_with_its_exit_status(
    tmp_path: Path, status: str | None, code: str
) -> None:
    doc = json.loads((TRAJ / "text-actions.traj").read_text())
    doc["history"] = doc["history"][:6]  # stops after the second observation
    doc["info"] = {"exit_status": status} if status else {}
    src = tmp_path / "run.traj"
    src.write_text(json.dumps(doc))
    events, stats = imported(src)
    assert of_type(events, "turn_failed")[0]["data"]["error"]["code"] == code
    assert bool(stats.notes) == (status is None)


@pytest.mark.parametrize("body", ['{"history": 3}', "[1, 2]", "{not json"])
def test_not_a_trajectory_is_refused_cleanly(tmp_path: Path, body: str) -> None:
    src = tmp_path / "x.traj"
    src.write_text(body)
    with pytest.raises(CaseError) as exc:
        imported(src)
    assert exc.value.code == "import_invalid"


def test_every_trajectory_saves_and_passes_on_both_implementations(tmp_path: Path) -> None:
    for k, src in enumerate(sorted(TRAJ.glob("*.traj"))):
        for how in ("swe-agent", "auto"):
            p = cli(
                "save",
                "--from",
                how,
                src,
                "--turn",
                "1",
                "--name",
                f"t{k}-{how}",
                "--dir",
                "cases",
                cwd=tmp_path,
            )
            assert p.returncode == 0, p.stderr
    p = cli("run", "cases", "--impl", "threads-py", "--impl", "threads-ts", cwd=tmp_path)
    assert p.returncode == 0, p.stdout + p.stderr


def test_the_model_comes_from_the_run_folder_when_no_replay_config_names_it(
    tmp_path: Path,
) -> None:
    """Older SWE-agent runs keep no replay_config: the run folder, named by SWE-agent as
    <model>__<data>__<config>__t-..., is where the model is (as in SWE-agent's own
    tests/test_data/trajectories/gpt4__swe-bench-dev-easy_first_only__default__t-0.00...)."""
    run = tmp_path / "gpt4__swe-bench-dev__default__t-0.00__p-0.95__c-3.00__install-1"
    run.mkdir()
    (run / "task-1.traj").write_bytes((TRAJ / "text-actions.traj").read_bytes())
    events, _ = imported(run / "task-1.traj")
    assert of_type(events, "thread_started")[0]["data"]["agent"]["model"] == "gpt4"
    # a folder of another name names no model
    other = tmp_path / "runs"
    other.mkdir()
    (other / "task-1.traj").write_bytes((TRAJ / "text-actions.traj").read_bytes())
    events, _ = imported(other / "task-1.traj")
    assert of_type(events, "thread_started")[0]["data"]["agent"]["model"] == ""


def test_show_prints_no_empty_parentheses_for_an_unknown_model(tmp_path: Path) -> None:
    saved = cli(
        "save", TRAJ / "text-actions.traj", "--from", "swe-agent", "--turn", "1",
        "--name", "t", "--dir", "cases", cwd=tmp_path,
    )  # fmt: skip
    assert saved.returncode == 0, saved.stderr
    shown = cli("show", "cases/t", "--all", cwd=tmp_path)
    assert shown.returncode == 0, shown.stderr
    assert "agent swe-agent, tools: bash" in shown.stdout
    assert "()" not in shown.stdout


NO_TURN = "the file holds no turn (no user message the recorded run went on from)"


@pytest.mark.parametrize(
    "doc",
    [
        {"trajectory": [], "history": [], "info": {}},
        {"history": [{"role": "system", "content": "You are a coding agent."}], "info": {}},
    ],
)
def test_a_trajectory_of_no_turn_says_so_in_a_note(tmp_path: Path, doc: dict[str, Any]) -> None:
    """A history that never reaches a user message imports as a thread of no turn, and the
    import says nothing can be saved from it (spec/importers.md 1), never a silent 0."""
    path = tmp_path / "empty.traj"
    path.write_text(json.dumps(doc))
    stats = Stats()
    events = import_events("swe-agent", path, stats=stats)
    assert [e["type"] for e in events] == ["thread_started"]
    assert [n for n in stats.notes if n.startswith(NO_TURN)] == [stats.notes[-1]]
    p = cli("import", "swe-agent", path, "-o", tmp_path / "log.jsonl", cwd=tmp_path)
    assert p.returncode == 0 and f"note: {NO_TURN}" in p.stderr
