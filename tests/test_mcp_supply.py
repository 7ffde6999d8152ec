"""MCP session cassettes as a stub source (spec/importers.md section 10): ``tools/call`` name
and arguments to result (``isError`` to ``is_error``) in the three shapes read, a supply
document from them, ``run --supply CASSETTE`` and ``accept --supply CASSETTE`` filling a
case's stubs. The cassettes are written here (every name and value invented)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from conftest import cli
from imported_cases import save_turns
from threads_exports import events, export_lines, write_export

from threads_cases.core.errors import CaseError
from threads_cases.importers import import_to_file
from threads_cases.importers.mcp import mcp_supply, read_mcp_calls


def rpc_call(i: int, name: str, args: dict[str, Any]) -> dict[str, Any]:
    params = {"name": name, "arguments": args, "_meta": {"progressToken": i}}
    return {"jsonrpc": "2.0", "id": i, "method": "tools/call", "params": params}


def rpc_result(i: int, text: str, *, error: bool = False) -> dict[str, Any]:
    result = {"content": [{"type": "text", "text": text}], "isError": error}
    return {"jsonrpc": "2.0", "id": i, "result": result}


INIT = {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {"capabilities": {}}}
INIT_OK = {"jsonrpc": "2.0", "id": 0, "result": {"serverInfo": {"name": "weather"}}}
CALLS = [
    (rpc_call(1, "get_weather", {"city": "Bergen"}), rpc_result(1, "sun, 9C")),
    (rpc_call(2, "get_alerts", {"region": "west"}), rpc_result(2, "no such region", error=True)),
]


def recorder_cassette(path: Path, calls: list[Any] = CALLS) -> Path:
    """mcp-recorder's shape: {version, metadata, interactions: [{type, request, response}]}."""
    items = [{"type": "jsonrpc_request", "request": INIT, "response": INIT_OK}]
    items += [{"type": "jsonrpc_request", "request": q, "response": r} for q, r in calls]
    items.append({"type": "lifecycle", "request": None, "response": None})
    path.write_text(json.dumps({"version": "1.0", "metadata": {}, "interactions": items}))
    return path


def vcr_cassette(path: Path) -> Path:
    """agent-vcr's .vcr shape: {format_version, metadata, session: {interactions}}."""
    items = [
        {"sequence": i, "direction": "client_to_server", "request": q, "response": r}
        for i, (q, r) in enumerate(CALLS)
    ]
    session = {"initialize_request": INIT, "initialize_response": INIT_OK, "interactions": items}
    path.write_text(json.dumps({"format_version": "1.0.0", "metadata": {}, "session": session}))
    return path


def lines_cassette(path: Path) -> Path:
    """JSON Lines of messages, some wrapped under `message`, responses out of order, an
    error response and a call never answered."""
    (q1, r1), (q2, _) = CALLS
    err = {"jsonrpc": "2.0", "id": 2, "error": {"code": -32602, "message": "bad region"}}
    recs: list[Any] = [
        {"ts": "2026-03-01T10:00:00Z", "dir": "req", **INIT},
        {"ts": "2026-03-01T10:00:00Z", "dir": "res", **INIT_OK},
        {"direction": "send", "message": q1},
        q2,
        err,
        {"direction": "recv", "message": r1},
        rpc_call(3, "get_weather", {"city": "Oslo"}),
    ]
    path.write_text("".join(json.dumps(r) + "\n" for r in recs))
    return path


@pytest.mark.parametrize("shape", [recorder_cassette, vcr_cassette])
def test_each_document_shape_gives_the_calls(tmp_path: Path, shape: Any) -> None:
    found = read_mcp_calls(shape(tmp_path / "c.json"))
    assert [(c.name, c.arguments) for c in found.calls] == [
        ("get_weather", {"city": "Bergen"}),
        ("get_alerts", {"region": "west"}),
    ]
    assert found.calls[0].result == {
        "content": [{"type": "text", "text": "sun, 9C"}],
        "is_error": False,
    }
    assert found.calls[1].result["is_error"] is True  # isError -> is_error


def test_json_lines_pair_by_id_and_an_error_response_is_an_error(tmp_path: Path) -> None:
    found = read_mcp_calls(lines_cassette(tmp_path / "c.jsonl"))
    assert [(c.name, c.where) for c in found.calls] == [
        ("get_weather", "line 3"),
        ("get_alerts", "line 4"),
    ]
    assert found.calls[1].result == {
        "content": [{"type": "text", "text": "MCP error -32602: bad region"}],
        "is_error": True,
    }
    assert found.unanswered == 1


def test_supply_of_a_cassette_and_its_refusals(tmp_path: Path) -> None:
    doc = mcp_supply(recorder_cassette(tmp_path / "c.json"), prefix="mcp__w__")
    assert sorted(doc["calls"]) == ["tool:mcp__w__get_alerts", "tool:mcp__w__get_weather"]
    other = (rpc_call(9, "get_weather", {"city": "Oslo"}), rpc_result(9, "rain, 4C"))
    with pytest.raises(CaseError) as info:
        mcp_supply(recorder_cassette(tmp_path / "d.json", [*CALLS, other]))
    assert info.value.code == "invalid_request"
    assert "'get_weather' got different results" in info.value.message
    (tmp_path / "e.json").write_text('{"hello": 1}')
    with pytest.raises(CaseError) as info:
        read_mcp_calls(tmp_path / "e.json")
    assert "not an MCP session cassette" in info.value.message


def test_the_supply_command_writes_a_supply_document(tmp_path: Path) -> None:
    cassette = recorder_cassette(tmp_path / "c.json")
    p = cli("supply", cassette, "-o", tmp_path / "s.json", "--prefix", "mcp__w__", cwd=tmp_path)
    assert p.returncode == 0, p.stderr
    doc = json.loads((tmp_path / "s.json").read_text())
    assert doc["calls"]["tool:mcp__w__get_weather"]["is_error"] is False


def _case_without_stubs(tmp_path: Path) -> Path:
    src = write_export(tmp_path / "t.jsonl", export_lines(events()))
    import_to_file("threads", src, tmp_path / "log.jsonl")
    save_turns(tmp_path / "log.jsonl", tmp_path / "cases")
    case = tmp_path / "cases" / "t2"
    (case / "stubs.json").write_text('{"calls":[],"format":1}')
    return case


def test_run_and_accept_with_a_cassette_fill_the_stubs(tmp_path: Path) -> None:
    case = _case_without_stubs(tmp_path)
    p = cli("run", case, "--impl", "threads-py", "--format", "json", cwd=tmp_path)
    assert '"verdict":"fail"' in p.stdout and "missing_stub" in p.stdout, p.stdout
    cassette = recorder_cassette(tmp_path / "c.json")
    p = cli("run", case, "--impl", "threads-py", "--supply", cassette, cwd=tmp_path)
    assert p.returncode == 0, p.stdout + p.stderr
    p = cli("accept", case, "--supply", cassette, cwd=tmp_path)
    assert p.returncode == 0, p.stdout + p.stderr
    stubs = json.loads((case / "stubs.json").read_text())["calls"]
    assert [(s["tool"], s["input"]) for s in stubs] == [("get_weather", {"city": "Bergen"})]
    assert stubs[0]["result"]["content"] == [{"type": "text", "text": "sun, 9C"}]
    p = cli("run", case, "--impl", "threads-py", "--impl", "threads-ts", cwd=tmp_path)
    assert p.returncode == 0, p.stdout + p.stderr
