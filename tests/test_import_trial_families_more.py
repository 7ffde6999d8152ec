"""The four trial families (19a, 20d, 25a, 29a of the trials README) in the importers other
than Claude Code and Codex, where the shape applies (tests/test_import_trial_families.py has
those two; tests/test_import_vcr.py pins the VCR forms: a provider error that is not retried
ends its turn ``provider_error``, a stream cut short is interrupted with a note, arguments
encoded twice are decoded with ``double_encoded``, call ids reused across responses pair
with their own response's call).

* SWE-agent: 20d a run with no exit status is interrupted with a note; 25a arguments
  decoded exactly once; 29a a call id reused by a later step answers that step's call.
* threads exports: 19a a ``turn_failed`` ``provider_error`` stays a failure, never a reply,
  and saves as a case that replays it; 20d a turn the export ends before its end is
  interrupted with a note; 29a a reused ``event_id`` loses no record.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from imported_cases import run_both, save_turns
from threads_exports import _env, events, export_lines, write_export

from threads_cases.case.turns import list_turns
from threads_cases.importers import Stats, import_events, import_to_file

HERE = Path(__file__).resolve().parent
TRAJ = HERE / "importers" / "swe-agent"


def imported(fmt: str, path: Path) -> tuple[list[dict[str, Any]], Stats]:
    stats = Stats()
    return import_events(fmt, path, stats=stats), stats


def of_type(evs: list[dict[str, Any]], t: str) -> list[dict[str, Any]]:
    return [e for e in evs if e["type"] == t]


def _traj(tmp_path: Path, steps: list[tuple[str, str, str]], info: dict[str, Any]) -> Path:
    """A function-calling trajectory: per step (call id, arguments as written, output)."""
    history: list[dict[str, Any]] = [{"role": "user", "content": "fix the bug"}]
    for cid, args, out in steps:
        call = {"id": cid, "type": "function", "function": {"name": "bash", "arguments": args}}
        history.append({"role": "assistant", "content": "", "tool_calls": [call]})
        history.append({"role": "tool", "content": out, "tool_call_ids": [cid]})
    history.append({"role": "assistant", "content": "done", "action": "submit"})
    src = tmp_path / "run.traj"
    src.write_text(json.dumps({"history": history, "info": info}))
    return src


def test_swe_agent_25a_arguments_decoded_once_and_29a_reused_call_ids(tmp_path: Path) -> None:
    once = json.dumps({"command": "ls"})
    steps = [
        ("call_1", once, "a.py"),
        ("call_1", json.dumps(json.dumps({"command": "cat a.py"})), "print(1)"),  # reused id
        ("call_3", "ls -la", "total 0"),  # not JSON: kept as text
    ]
    evs, stats = imported("swe-agent", _traj(tmp_path, steps, {"exit_status": "submitted"}))
    calls = [e["data"]["input"] for e in of_type(evs, "tool_called")]
    assert calls == [{"command": "ls"}, {"command": "cat a.py"}, {"arguments": "ls -la"}]
    assert [w.reason for w in stats.warnings] == ["double_encoded", "arguments_not_json"]
    results = [e["data"]["content"] for e in of_type(evs, "tool_result")]
    assert results == ["a.py", "print(1)", "total 0"]  # each step's own call, none lost
    assert [t["status"] for t in list_turns(evs)] == ["completed"]


def test_swe_agent_20d_a_run_without_exit_status_is_interrupted(tmp_path: Path) -> None:
    src = _traj(tmp_path, [("call_1", "{}", "ok")], {})
    evs, stats = imported("swe-agent", src)
    (end,) = of_type(evs, "turn_failed")
    assert end["data"]["error"]["code"] == "interrupted"
    assert any("no exit status" in n for n in stats.notes)


def _export(tmp_path: Path, extra: list[tuple[str, dict[str, Any], str]], name: str) -> Path:
    base = events()
    more = [_env(len(base) + i, t, d, a) for i, (t, d, a) in enumerate(extra)]
    return write_export(tmp_path / name, export_lines([*base, *more]))


PROVIDER_ERROR = [
    ("user_message", {"content": "And Tromsø?"}, "user"),
    ("turn_started", {"turn_id": "t3"}, "system"),
    ("model_requested", {"turn_id": "t3", "model": "m-1", "request_sha256": "0" * 64}, "system"),
    (
        "turn_failed",
        {"turn_id": "t3", "error": {"code": "provider_error", "message": "529 overloaded"}},
        "system",
    ),
]


def test_threads_19a_a_provider_error_stays_a_failure_and_replays(tmp_path: Path) -> None:
    src = _export(tmp_path, PROVIDER_ERROR, "t.jsonl")
    evs, _ = imported("threads", src)
    assert [t["status"] for t in list_turns(evs)] == ["completed", "completed", "failed"]
    assert len(of_type(evs, "model_responded")) == 4  # no reply made of the error
    (end,) = of_type(evs, "turn_failed")
    assert end["data"]["error"] == {"code": "provider_error", "message": "529 overloaded"}
    import_to_file("threads", src, tmp_path / "log.jsonl")
    names = save_turns(tmp_path / "log.jsonl", tmp_path / "cases")
    results = run_both(tmp_path / "cases", tmp_path)
    assert len(results) == 2 * len(names) == 6
    assert {r["verdict"] for r in results.values()} == {"pass"}, results


def test_threads_20d_a_turn_the_export_ends_inside_is_interrupted(tmp_path: Path) -> None:
    src = _export(tmp_path, PROVIDER_ERROR[:3], "t.jsonl")  # a head, but no turn end
    evs, stats = imported("threads", src)
    assert [t["status"] for t in list_turns(evs)] == ["completed", "completed", "failed"]
    assert of_type(evs, "turn_failed")[0]["data"]["error"]["code"] == "interrupted"
    assert any("ends before this turn's end" in n for n in stats.notes)
    assert not stats.warnings  # the chain and the head are whole


def test_threads_29a_a_reused_event_id_loses_no_record(tmp_path: Path) -> None:
    evs = events()
    second = next(i for i, e in enumerate(evs) if e["data"].get("content") == "And Bergen?")
    evs[second]["event_id"] = evs[1]["event_id"]  # the second prompt reuses the first's id
    got, _ = imported("threads", write_export(tmp_path / "t.jsonl", export_lines(evs)))
    assert [t["text"] for t in list_turns(got)] == ["Weather in Oslo?", "And Bergen?"]
    assert len({e["event_id"] for e in got}) == len(got)
