"""The runner API: run_case / run_suite verdicts, supply, missing stubs, skips, egress."""

from __future__ import annotations

import socket
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from conftest import EXPECT, build_thread

from threads_cases.case.discovery import discover
from threads_cases.core.canonical import canonical_document
from threads_cases.core.errors import CaseError
from threads_cases.core.strictjson import read_json_file
from threads_cases.harness.run.runner import run_case, run_suite
from threads_cases.reference.agent import AgentSpec, ToolContext
from threads_cases.reference.replay import check_supply

CopyCase = Callable[[str], Path]


def rewrite(path: Path, change: Callable[[Any], None]) -> None:
    doc = read_json_file(path)
    change(doc)
    path.write_bytes(canonical_document(doc))


def drop_last_reply(case: Path) -> dict[str, Any]:
    doc = read_json_file(case / "model.json")
    dropped = doc["replies"].pop()
    (case / "model.json").write_bytes(canonical_document(doc))
    return {k: dropped[k] for k in ("message", "stop_reason", "usage")}


def test_a_freshly_saved_case_passes(saved_case: Path) -> None:
    r = run_case(saved_case, "threads-py")
    assert (r.verdict, r.reasons, r.warnings) == ("pass", [], []), r.to_json()
    checks = {c.id: c for c in r.checks}
    assert checks["must[0]"].result == "pass" and checks["must[1]"].result == "pass"
    assert checks["expect"].result == "pass"


def test_a_suite_with_pass_fail_error_and_skip(tmp_path: Path, conformance_case: CopyCase) -> None:
    ok = conformance_case("reads-notes")
    bad = conformance_case("weather-stub")
    drop_last_reply(bad)
    broken = tmp_path / "cases" / "broken"
    broken.mkdir()
    (broken / "case.json").write_text("{not json")
    ts_only = conformance_case("lists-files")
    rewrite(ts_only / "case.json", lambda d: d.__setitem__("dialects", ["threads-ts"]))
    (tmp_path / "cases" / ".hidden").mkdir()
    (tmp_path / "cases" / ".hidden" / "case.json").write_text("{}")  # never discovered
    assert discover([tmp_path / "cases"]) == sorted([ok, bad, broken, ts_only])
    seen: list[str] = []
    suite = run_suite([tmp_path / "cases"], ["threads-py"], on_result=lambda r: seen.append(r.case))
    by = {Path(r.path).name: r for r in suite.results}
    assert by["reads-notes"].verdict == "pass"
    assert by["weather-stub"].verdict == "fail"
    assert by["broken"].verdict == "error" and by["broken"].reasons == ["case_invalid"]
    assert "case.json" in by["broken"].message
    assert by["lists-files"].verdict == "skip" and by["lists-files"].reasons == ["not_listed"]
    assert suite.counts == {
        "pass": 1,
        "drifted": 0,
        "fail": 1,
        "error": 1,
        "skip": 1,
        "xfail": 0,
        "xpass": 0,
    }
    assert suite.exit_status == 3
    assert sorted(seen) == sorted(r.case for r in suite.results)


def test_no_cases_is_invalid_request(tmp_path: Path) -> None:
    with pytest.raises(CaseError) as exc:
        run_suite([tmp_path], ["threads-py"])
    assert exc.value.code == "invalid_request"


def test_strict_counts_drifted_as_failing(conformance_case: CopyCase) -> None:
    path = conformance_case("weather-stub")
    rewrite(path / "stubs.json", lambda d: d["calls"][0]["result"].__setitem__("content", "x"))
    assert run_suite([path.parent], ["threads-py"]).exit_status == 0
    strict = run_suite([path.parent], ["threads-py"], strict=True)
    assert strict.results[0].verdict == "drifted" and strict.exit_status == 3


def test_pattern_max_fail_and_only(tmp_path: Path, conformance_case: CopyCase) -> None:
    for n in ("reads-notes", "weather-stub", "writes-summary", "lists-files"):
        conformance_case(n)
    for n in ("weather-stub", "writes-summary", "lists-files"):
        drop_last_reply(tmp_path / "cases" / n)
    cases = tmp_path / "cases"
    assert [r.case for r in run_suite([cases], pattern="notes").results] == ["reads-notes"]
    assert [r.case for r in run_suite([cases], pattern="w*").results] == [
        "weather-stub",
        "writes-summary",
    ]
    stopped = run_suite([cases], max_fail=1, jobs=1)
    assert [r.verdict for r in stopped.results] == ["fail"]  # lists-files, then stop
    only = {(str(cases / "weather-stub"), "threads-py")}
    assert [r.case for r in run_suite([cases], only=only).results] == ["weather-stub"]


def test_supply_answers_a_dropped_reply(conformance_case: CopyCase) -> None:
    path = conformance_case("weather-stub")
    reply = drop_last_reply(path)
    assert run_case(path).reasons[0] == "model_exhausted"
    r = run_case(path, supply={"model:1": reply})
    assert r.stop is None
    assert (r.verdict, r.reasons) == ("pass", []), r.to_json()
    # a supplied reply at another index does not help
    r = run_case(path, supply={"model:5": reply})
    assert r.stop is not None and r.stop["stop_key"] == "model:1"


@pytest.mark.parametrize(
    "supply",
    [
        {"calls": []},
        [],
        {"calls": {}, "more": 1},
        {"calls": {"bogus": 1}},
        {"calls": {"model:": {}}},
        {"calls": {"model:1": "not a reply"}},
        {"calls": {"model:0": {"message": {}}}},
        {"calls": {"tool:x": 3}},
        {"calls": {"tool:": "x"}},
        {"calls": {"tool:x": {"content": "c", "is_error": "no"}}},
        {"calls": {f"tool:t{i}": "x" for i in range(201)}},
        {"calls": {"tool:x": "y" * 70_000}},
    ],
)
def test_a_malformed_supply_is_invalid_request(supply: Any) -> None:
    with pytest.raises(CaseError) as exc:
        check_supply(supply)
    assert exc.value.code == "invalid_request"


def test_a_good_supply_is_its_calls() -> None:
    reply = {"message": {"role": "assistant", "content": []}, "stop_reason": "end_turn"}
    calls = {"model:3": reply, "tool:x": "text", "tool:y": {"content": [], "is_error": True}}
    assert check_supply({"calls": calls}) == calls


def test_a_removed_stub_is_missing_stub(conformance_case: CopyCase) -> None:
    path = conformance_case("weather-stub")
    calls = read_json_file(path / "stubs.json")["calls"]
    rewrite(path / "stubs.json", lambda d: d.__setitem__("calls", []))
    r = run_case(path, "threads-py")
    assert r.verdict == "fail"
    assert r.reasons[0] == "missing_stub"
    assert r.stop is not None
    assert (r.stop["code"], r.stop["stop_key"]) == ("missing_stub", "tool:get_weather")
    # the supply answers it
    r = run_case(path, supply={"tool:get_weather": calls[0]["result"]})
    assert (r.verdict, r.reasons) == ("pass", []), r.to_json()


def test_a_stub_for_another_input_is_missing_stub_and_unused(conformance_case: CopyCase) -> None:
    path = conformance_case("weather-stub")
    rewrite(path / "stubs.json", lambda d: d["calls"][0]["input"].__setitem__("city", "Bergen"))
    r = run_case(path)
    assert r.stop is not None and r.stop["stop_key"] == "tool:get_weather"
    assert r.verdict == "fail" and "missing_stub" in r.reasons


def test_an_unused_reply_and_stub_drift(conformance_case: CopyCase) -> None:
    path = conformance_case("weather-stub")
    rewrite(path / "model.json", lambda d: d["replies"].append(d["replies"][-1]))
    rewrite(path / "stubs.json", lambda d: d["calls"].append(d["calls"][0]))
    r = run_case(path)
    assert (r.verdict, r.reasons) == ("drifted", ["reply_unused", "stub_unused"]), r.to_json()


def test_format_and_missing_files_are_errors(conformance_case: CopyCase) -> None:
    path = conformance_case("reads-notes")
    rewrite(path / "case.json", lambda d: d.__setitem__("format", 3))
    r = run_case(path)
    assert (r.verdict, r.reasons) == ("error", ["format_unsupported"])
    path = conformance_case("lists-files")
    (path / "stubs.json").unlink()
    r = run_case(path)
    assert (r.verdict, r.reasons) == ("error", ["case_invalid"])
    assert "stubs.json" in r.message


def test_a_saved_case_on_the_threads_ts_log_is_read_in_its_dialect(saved_case: Path) -> None:
    # the threads-ts files exist and reduce to the expected state (read by the Python reducer)
    from threads_cases.core.dialects import get_dialect
    from threads_cases.core.log import reduce_log

    d = get_dialect("threads-ts")
    state = reduce_log(saved_case / "log.threads-ts.jsonl", dialect=d)
    assert d.encode_state(state) == read_json_file(saved_case / "expected.threads-ts.json")


# --------------------------------------------------------------------------- egress


def _closed_port() -> int:
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()  # nobody listens there any more
    return int(port)


def _agent_with_read_file(
    case: Path, handler: Callable[[ToolContext, dict[str, Any]], Any]
) -> AgentSpec:
    recorded = read_json_file(case / "expected.threads-py.json")["agent"]
    return AgentSpec.from_json(recorded, {"read_file": handler})


@pytest.mark.parametrize(
    "how",
    ["connect-caught", "connect", "create_connection-caught", "connect_ex-caught", "udp-caught"],
)
def test_a_tool_reaching_the_network_is_egress_blocked(
    conformance_case: CopyCase, how: str
) -> None:
    path = conformance_case("reads-notes")
    port = _closed_port()
    tried: list[str] = []

    def read_file(ctx: ToolContext, inp: dict[str, Any]) -> str:
        tried.append(how)
        try:
            if how.startswith("connect_ex"):
                with socket.socket() as s:
                    s.connect_ex(("127.0.0.1", port))
            elif how.startswith("create_connection"):
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
            elif how.startswith("udp"):
                with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
                    s.sendto(b"hello", ("127.0.0.1", port))
            else:
                with socket.socket() as s:
                    s.settimeout(1)
                    s.connect(("127.0.0.1", port))
        except Exception:
            if not how.endswith("caught"):
                raise
        return ctx.read(inp["path"]).decode()

    r = run_case(path, agent=_agent_with_read_file(path, read_file))
    assert tried == [how]
    assert r.verdict == "fail", r.to_json()
    assert r.reasons[0] == "egress_blocked"
    assert r.stop is not None and r.stop["code"] == "egress_blocked"
    assert r.stop["stop_key"] == "egress"
    assert r.stop["message"] == (
        f'network access to "127.0.0.1:{port}" was blocked during a replay'
    )
    # the block ends with the replay: the port is simply closed again
    with pytest.raises(ConnectionRefusedError), socket.socket() as s:
        s.connect(("127.0.0.1", port))


def test_the_same_agent_without_network_passes(conformance_case: CopyCase) -> None:
    path = conformance_case("reads-notes")
    calls: list[str] = []

    def read_file(ctx: ToolContext, inp: dict[str, Any]) -> str:
        calls.append(inp["path"])
        return ctx.read(inp["path"]).decode()

    r = run_case(path, agent=_agent_with_read_file(path, read_file))
    assert calls == ["notes.txt"]
    assert (r.verdict, r.reasons) == ("pass", [])


def test_an_agent_with_another_system_prompt_drifts(saved_case: Path) -> None:
    t, _ = build_thread()
    agent = t.agent
    assert agent is not None
    other = AgentSpec(agent.name, agent.model, agent.system + " Be kind.", agent.tools)
    r = run_case(saved_case, agent=other)
    assert (r.verdict, r.reasons) == ("drifted", ["request_diverged"]), r.to_json()
    assert EXPECT.must  # the musts still hold


def test_a_results_duration_counts_reading_the_case(
    conformance_case: CopyCase, monkeypatch: pytest.MonkeyPatch
) -> None:
    """spec/reports.md 1.3: ``duration_ms`` includes reading and checking the case, so the
    durations of a suite's results add up to its work (the JUnit times, `--durations`)."""
    import time

    from threads_cases.harness.run import opened

    real = opened.inspect_case

    def slow_inspect(path: Path) -> Any:
        time.sleep(0.25)  # a lower bound the result must carry, whatever the load
        return real(path)

    monkeypatch.setattr(opened, "inspect_case", slow_inspect)
    report = run_suite([conformance_case("reads-notes")], ["threads-py"])
    [result] = report.results
    assert result.verdict == "pass"
    assert result.duration_ms >= 250


def test_a_named_implementation_with_only_unlisted_cases_is_refused(
    tmp_path: Path, conformance_case: CopyCase
) -> None:
    from types import SimpleNamespace

    from threads_cases.harness.run.setup import check_named_runs

    py_only = conformance_case("reads-notes")
    rewrite(py_only / "case.json", lambda d: d.__setitem__("dialects", ["threads-py"]))
    both = conformance_case("lists-files")
    broken = tmp_path / "cases" / "broken"
    broken.mkdir()
    (broken / "case.json").write_text("{not json")
    ts = SimpleNamespace(name="threads-ts", dialect="threads-ts", required=True)
    with pytest.raises(CaseError) as info:
        check_named_runs([(py_only, ts)])  # type: ignore[list-item]
    assert info.value.code == "invalid_request"
    assert "threads-ts would run none of the 1 selected case(s)" in info.value.message
    assert "(reads-notes: threads-py)" in info.value.message
    check_named_runs([(py_only, ts), (both, ts)])  # type: ignore[list-item]
    check_named_runs([(py_only, ts), (broken, ts)])  # type: ignore[list-item]  # errors say why
    unnamed = SimpleNamespace(name="threads-ts", dialect="threads-ts", required=False)
    check_named_runs([(py_only, unnamed)])  # type: ignore[list-item]  # skips, as the spec says
    with pytest.raises(CaseError):
        run_suite([py_only], [ts])  # type: ignore[list-item]
