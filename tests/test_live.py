"""The live rung through the library API (spec/replay.md section 11): the ladder and its
provenance, budgets that stop exactly at the limit, provider failures through the SDKs' own
retries, write refusals and egress, all against the fake provider of tests/fake_provider.py
(a real HTTP server on 127.0.0.1 spoken to by the official SDKs).

The end-to-end CLI runs (both implementations, the API key in no output) are in
tests/test_live_cli.py.
"""

from __future__ import annotations

import json
import shutil
import socket
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from conftest import ts_built
from fake_provider import Fail, FakeProvider, Hang, Raw, Reply, fake_provider

from threads_cases.harness.live.desk import LiveOptions, LiveRun
from threads_cases.harness.live.prices import PriceTable
from threads_cases.harness.live.providers import ClientSettings
from threads_cases.harness.run.runner import CaseResult, run_case, run_suite
from threads_cases.protocol.client import Implementation
from threads_cases.reference.agent import AgentSpec, ToolResult, ToolSpec

pytest_plugins = ["pytester"]
CopyCase = Callable[[str], Path]
KEY = "sk-ant-api03-live-test-key-0123456789"
#: 10 input tokens cost exactly 1 USD, output tokens nothing: spends are exact in floats
PRICES = PriceTable(
    {"fake-2": {"input": 100_000.0, "output": 0.0, "cache_write": 0.0, "cache_read": 0.0}}
)
WEATHER = ("toolu_live_1", "get_weather", {"city": "Oslo"})

#: One worker runs the live tests of this module and of test_live_cli.py: importing the
#: providers' SDKs (anthropic's alone is about 3 CPU-s) is paid by that worker and its CLI
#: fork server once, not by every worker; the module's TypeScript driver starts once too.
pytestmark = pytest.mark.xdist_group("live")


@pytest.fixture
def fake(monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeProvider]:
    monkeypatch.setenv("ANTHROPIC_API_KEY", KEY)
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    monkeypatch.delenv("ANTHROPIC_BASE_URL", raising=False)
    with fake_provider() as server:
        yield server


def live(fake: FakeProvider, **kw: Any) -> LiveRun:
    settings = ClientSettings(
        kw.pop("provider", "anthropic"),
        fake.url,
        kw.pop("timeout", 5.0),
        kw.pop("retries", 0),
    )
    kw.setdefault("prices", PRICES)
    return LiveRun(LiveOptions(settings=settings, **kw))


def stop_code(r: CaseResult) -> str | None:
    return None if r.stop is None else r.stop["code"]


def test_unchanged_requests_reuse_the_recording_and_call_nobody(
    fake: FakeProvider, conformance_case: CopyCase
) -> None:
    r = run_case(conformance_case("weather-stub"), live=live(fake))
    assert r.verdict == "pass", r.checks
    assert r.live == {
        "provenance": {"reused": 2, "supplied": 0, "live": 0},
        "calls": 0,
        "cost_usd": 0.0,
    }
    assert fake.requests == []
    # judged by must/expect and state only: no recording checks in a live result
    assert [c.id for c in r.checks] == ["state", "must[0]", "expect"]
    assert r.to_json()["live"] is True


def test_a_new_model_goes_live_and_stubs_match_by_name_and_input_not_id(
    fake: FakeProvider, conformance_case: CopyCase
) -> None:
    fake.push(Reply(calls=[WEATHER]), Reply("Oslo: rain."))
    case = conformance_case("weather-stub")
    before = {p: p.read_bytes() for p in case.rglob("*") if p.is_file()}
    r = run_case(case, live=live(fake, model="fake-2"))
    assert r.verdict == "pass", r.checks
    assert r.live == {
        "provenance": {"reused": 0, "supplied": 0, "live": 2},
        "calls": 2,
        "cost_usd": 2.0,
    }
    first = fake.requests[0]
    assert first["model"] == "fake-2"
    assert first["messages"] == [{"role": "user", "content": "Weather in Oslo?"}]
    assert first["system"].startswith("You are a careful assistant")
    assert {t["name"] for t in first["tools"]} >= {"get_weather", "send_email"}
    # the second request holds the stub's answer under the live tool-use id
    result = fake.requests[1]["messages"][-1]["content"][0]
    assert result["tool_use_id"] == "toolu_live_1"
    assert result["content"] == "Oslo: 4°C, light rain"
    sent = fake.headers[0]
    assert KEY in (sent.get("x-api-key"), sent.get("authorization", "").removeprefix("Bearer "))
    # --live never writes to a case
    assert {p: p.read_bytes() for p in case.rglob("*") if p.is_file()} == before


def test_the_ladder_reuses_then_supplies_then_goes_live(
    fake: FakeProvider, conformance_case: CopyCase
) -> None:
    case = conformance_case("weather-stub")
    doc = json.loads((case / "model.json").read_text("utf-8"))
    doc["replies"] = doc["replies"][:1]  # the recording lacks reply 1
    (case / "model.json").write_text(json.dumps(doc), "utf-8")
    supply = {
        "calls": {
            "model:1": {"message": {"role": "assistant", "content": []}, "stop_reason": "end_turn"}
        }
    }
    r = run_case(case, live=live(fake), supply=supply)
    assert r.live is not None and r.live["provenance"] == {"reused": 1, "supplied": 1, "live": 0}
    r = run_case(case, live=live(fake))
    assert r.live is not None and r.live["provenance"] == {"reused": 1, "supplied": 0, "live": 1}
    assert len(fake.requests) == 1


def test_a_system_file_change_is_never_reused(
    fake: FakeProvider, conformance_case: CopyCase
) -> None:
    r = run_case(conformance_case("weather-stub"), live=live(fake, system="Be brief."))
    assert r.live is not None and r.live["provenance"]["reused"] == 0
    assert fake.requests[0]["system"] == "Be brief."


@pytest.mark.parametrize("budget", [0, 1, 2, 3])
def test_the_call_budget_stops_exactly_at_the_limit(
    fake: FakeProvider, conformance_case: CopyCase, tmp_path: Path, budget: int
) -> None:
    fake.push(Reply(calls=[WEATHER]), Reply("a"), Reply(calls=[WEATHER]), Reply("b"))
    a = conformance_case("weather-stub")
    b = conformance_case("weather-stub", tmp_path / "more")
    suite = run_suite([a, b], live=live(fake, model="fake-2", budget=budget))
    assert len(fake.requests) == budget
    assert suite.live is not None and suite.live["calls"] == budget
    made = [r.live["calls"] for r in suite.results if r.live is not None]
    assert made == [min(budget, 2), max(budget - 2, 0)]
    stopped = [r for r in suite.results if stop_code(r) == "live_budget_exceeded"]
    assert len(stopped) == (2 if budget < 2 else 1)
    for r in stopped:
        assert r.verdict == "fail" and "live_budget_exceeded" in r.reasons
        assert (
            r.stop is not None and r.stop["stop_key"] == f"model:{r.live['calls'] if r.live else 0}"
        )


def test_the_cost_limit_stops_once_the_spend_reaches_it(
    fake: FakeProvider, conformance_case: CopyCase, tmp_path: Path
) -> None:
    fake.push(Reply(calls=[WEATHER]), Reply("a"), Reply(calls=[WEATHER]), Reply("b"))
    a = conformance_case("weather-stub")
    b = conformance_case("weather-stub", tmp_path / "more")
    # each call costs exactly 1 USD: calls are made while the spend is below 3
    suite = run_suite([a, b], live=live(fake, model="fake-2", max_cost_usd=3.0))
    assert len(fake.requests) == 3
    assert suite.live is not None and suite.live["cost_usd"] == 3.0
    assert [stop_code(r) for r in suite.results] == [None, "live_budget_exceeded"]
    second = suite.results[1]
    assert second.live == {
        "provenance": {"reused": 0, "supplied": 0, "live": 1},
        "calls": 1,
        "cost_usd": 1.0,
    }


def test_under_a_cost_limit_a_model_without_a_price_is_never_called(
    fake: FakeProvider, conformance_case: CopyCase
) -> None:
    r = run_case(conformance_case("weather-stub"), live=live(fake, model="fake-3", max_cost_usd=1))
    assert stop_code(r) == "live_budget_exceeded"
    assert r.stop is not None and '"fake-3" has no price' in r.stop["message"]
    assert fake.requests == []


def test_unreported_usage_stops_under_a_cost_limit_and_is_unknown_without(
    fake: FakeProvider, conformance_case: CopyCase
) -> None:
    case = conformance_case("weather-stub")
    fake.push(Reply(calls=[WEATHER], usage=None))
    r = run_case(case, live=live(fake, model="fake-2", max_cost_usd=9))
    assert stop_code(r) == "live_budget_exceeded"
    assert r.live is not None and r.live["calls"] == 1 and r.live["cost_usd"] is None
    fake.push(Reply(calls=[WEATHER], usage=None), Reply("done"))
    r = run_case(case, live=live(fake, model="fake-2"))
    assert r.verdict == "pass" and r.live is not None and r.live["cost_usd"] is None


def test_a_429_with_retry_after_is_retried_by_the_sdk(
    fake: FakeProvider, conformance_case: CopyCase
) -> None:
    fake.push(Fail(429, {"retry-after": "0.01"}), Reply(calls=[WEATHER]), Reply("done"))
    r = run_case(conformance_case("weather-stub"), live=live(fake, model="fake-2", retries=1))
    assert r.verdict == "pass", r.checks
    assert len(fake.requests) == 3
    assert r.live is not None and r.live["calls"] == 2  # the retry is the SDK's, one call


@pytest.mark.parametrize(
    ("steps", "text"),
    [
        ([Fail(500, {"retry-after": "0.01"}), Fail(500, {"retry-after": "0.01"})], "HTTP 500"),
        ([Raw(b"{not json")], "not JSON"),
        ([Raw(b'{"type": "message", "content": "x"}')], "no content list"),
        ([Hang(3.0), Hang(3.0)], "APITimeoutError"),
    ],
)
def test_a_failed_provider_call_stops_with_live_call_failed(
    fake: FakeProvider, conformance_case: CopyCase, steps: list[Any], text: str
) -> None:
    fake.push(*steps)
    r = run_case(
        conformance_case("weather-stub"),
        live=live(fake, model="fake-2", retries=1 if len(steps) == 2 else 0, timeout=0.3),
    )
    assert r.verdict == "fail" and stop_code(r) == "live_call_failed"
    assert r.stop is not None and text in r.stop["message"] and r.stop["stop_key"] == "model:0"
    assert KEY not in json.dumps(r.to_json())


def test_the_openai_provider_speaks_chat_completions(
    fake: FakeProvider, conformance_case: CopyCase
) -> None:
    fake.push(Reply(calls=[WEATHER]), Reply("done"))
    r = run_case(
        conformance_case("weather-stub"), live=live(fake, provider="openai", model="fake-2")
    )
    assert r.verdict == "pass", r.checks
    assert fake.paths == ["/chat/completions", "/chat/completions"]
    second = fake.requests[1]["messages"]
    assert second[0]["role"] == "system"
    assert second[-2]["tool_calls"][0]["function"] == {
        "name": "get_weather",
        "arguments": '{"city": "Oslo"}',
    }
    assert second[-1] == {
        "role": "tool",
        "tool_call_id": "toolu_live_1",
        "content": "Oslo: 4°C, light rain",
    }
    assert fake.headers[0]["authorization"] == f"Bearer {KEY}"


EMAIL = ("toolu_mail", "send_email", {"to": "bob@example.com", "body": "hi"})


def test_a_write_tool_without_a_stub_is_refused_unless_allowed(
    fake: FakeProvider, conformance_case: CopyCase
) -> None:
    fake.push(Reply(calls=[EMAIL]))
    case = conformance_case("email-write-effect")
    r = run_case(case, live=live(fake, model="fake-2"))
    assert stop_code(r) == "write_not_allowed"
    assert r.stop is not None and r.stop["stop_key"] == "tool:send_email"
    # allowed, but nothing can send it: no stub answers, so it is still missing
    fake.push(Reply(calls=[EMAIL]))
    r = run_case(case, live=live(fake, model="fake-2", allow_write=frozenset({"send_email"})))
    assert stop_code(r) == "missing_stub"


def _agent(case: Path, **handlers: Callable[..., Any]) -> AgentSpec:
    from threads_cases.case.loader import open_case
    from threads_cases.core.reducer import reduce

    state = reduce(open_case(case).logs["threads-py"])
    return AgentSpec.from_json(state["agent"], handlers)


def test_the_users_handler_answers_a_read_tool_and_an_allowed_write(
    fake: FakeProvider, conformance_case: CopyCase
) -> None:
    case = conformance_case("email-write-effect")
    sent: list[dict[str, Any]] = []
    agent = _agent(
        case,
        send_email=lambda inp: sent.append(inp) or "queued",
        web_search=lambda inp: ToolResult("3 results"),
    )
    search = ("toolu_s", "web_search", {"q": "green builds"})
    fake.push(Reply(calls=[search, EMAIL]), Reply("Sent."))
    options = live(fake, model="fake-2", allow_write=frozenset({"send_email"}))
    r = run_case(case, agent=agent, live=options)
    assert r.verdict == "pass", r.checks
    assert sent == [EMAIL[2]]
    fake.push(Reply(calls=[search, EMAIL]))
    r = run_case(case, agent=agent, live=live(fake, model="fake-2"))
    assert stop_code(r) == "write_not_allowed" and len(sent) == 1


def _probe_agent(case: Path, target: tuple[str, int]) -> AgentSpec:
    def probe(ctx: Any, inp: dict[str, Any]) -> str:
        with socket.create_connection(target, timeout=1):
            return "connected"

    base = _agent(case)
    tool = ToolSpec("probe", "Open a connection.", {"type": "object"}, "sandbox", "read", probe)
    return AgentSpec(base.name, base.model, base.system, (*base.tools, tool))


@pytest.mark.parametrize("where", ["another host", "the provider's host"])
def test_a_tool_cannot_reach_the_network_while_the_provider_can(
    fake: FakeProvider, conformance_case: CopyCase, where: str
) -> None:
    case = conformance_case("weather-stub")
    port = int(fake.url.rsplit(":", 1)[1])
    target = ("192.0.2.1", 80) if where == "another host" else ("127.0.0.1", port)
    fake.push(Reply(calls=[("toolu_p", "probe", {})]), Reply("done"))
    r = run_case(case, agent=_probe_agent(case, target), live=live(fake, model="fake-2"))
    assert stop_code(r) == "egress_blocked", r.stop
    assert len(fake.requests) == 1  # the provider was reached; the tool was not


def test_builtin_tools_run_against_the_restored_sandbox(
    fake: FakeProvider, conformance_case: CopyCase
) -> None:
    case = conformance_case("reads-notes")
    fake.push(Reply(calls=[("toolu_r", "read_file", {"path": "notes.txt"})]), Reply("done"))
    r = run_case(case, live=live(fake, model="fake-2"))
    tool_result = fake.requests[1]["messages"][-1]["content"][0]
    assert tool_result["is_error"] is False and tool_result["content"]
    assert r.live is not None and r.live["calls"] == 2


@pytest.fixture(scope="module")
def ts_driver() -> Iterator[Implementation]:
    """One threads-ts driver for the cases of a module (as a suite run keeps one per
    implementation): its start-up is most of a case's CPU."""
    from threads_cases.harness.run.registry import open_implementation

    if not ts_built():
        pytest.skip("the TypeScript driver is not built")
    impl = open_implementation("threads-ts")
    try:
        yield impl
    finally:
        impl.close()


@pytest.mark.parametrize("case_name", ["weather-stub", "email-write-effect", "reads-notes"])
def test_both_implementations_record_the_same_live_turn(
    conformance_case: CopyCase, case_name: str, ts_driver: Implementation
) -> None:
    """Byte for byte: the same answers give the same events on threads-py (in process) and
    threads-ts (through model_call / model_answer lines), after decoding the dialects."""
    from threads_cases.core.canonical import canonical_line
    from threads_cases.core.dialects import get_dialect
    from threads_cases.protocol.server import PythonImplementation

    case = conformance_case(case_name)
    script = [
        {"message": {"role": "assistant", "content": [
            {"type": "text", "text": "Looking…"},
            {"type": "tool_use", "id": "toolu_x", "name": "read_file",
             "input": {"path": "notes.txt"}},
            {"type": "tool_use", "id": "toolu_y", "name": "send_email", "input": {"to": "z"}},
        ]}, "stop_reason": "tool_use", "usage": {"input_tokens": 7, "output_tokens": 3,
                                                "cache_read_input_tokens": 2}},
        {"message": {"role": "assistant", "content": [{"type": "text", "text": "done"}]},
         "stop_reason": "end_turn", "usage": {"input_tokens": 1, "output_tokens": 1}},
    ]  # fmt: skip
    message = {"cmd": "replay", "case": {"path": str(case)}, "live": {"model": "fake-2"}}
    spent = {"code": "live_budget_exceeded", "message": "spent"}
    outs = []
    py = PythonImplementation()
    for impl in (py, ts_driver):
        asked: list[str] = []

        def answer(
            index: int, request: dict[str, Any], sha: str, asked: list[str] = asked
        ) -> dict[str, Any]:
            asked.append(sha)
            if index < len(script):
                return {"reply": script[index]}
            return {"stop": {**spent, "stop_key": f"model:{index}"}}

        try:
            out = impl.request(message, on_model_call=answer)
        finally:
            if impl is py:  # the driver is the fixture's to close
                impl.close()
        d = get_dialect(impl.dialect)
        events = [canonical_line(d.decode_event(e)) for e in out["events"]]
        outs.append((events, out["stop"], asked))
    assert outs[0] == outs[1]


def test_accepting_a_live_turn_makes_the_next_live_run_reuse_it(
    fake: FakeProvider, conformance_case: CopyCase
) -> None:
    from threads_cases.harness.live.record import live_records
    from threads_cases.harness.run.accept import accept_from_live
    from threads_cases.harness.run.runner import SuiteResult
    from threads_cases.protocol.server import PythonImplementation

    case = conformance_case("weather-stub")
    doc = json.loads((case / "model.json").read_text("utf-8"))
    doc["replies"] = doc["replies"][:1]  # the recording lacks its last reply
    (case / "model.json").write_text(json.dumps(doc), "utf-8")
    run = live(fake)
    r = run_case(case, live=run)
    assert r.live is not None and r.live["provenance"] == {"reused": 1, "supplied": 0, "live": 1}
    [entry] = live_records(SuiteResult([r], ["threads-py"]), run.options)
    done = accept_from_live(case, PythonImplementation(), entry)
    assert done.changed and len(json.loads(done.after["model.json"])["replies"]) == 2
    r = run_case(case, live=live(fake))
    assert r.verdict == "pass", r.checks
    assert r.live is not None and r.live["provenance"] == {"reused": 2, "supplied": 0, "live": 0}
    assert len(fake.requests) == 1


def test_accept_from_live_refuses_a_stopped_or_failing_live_turn(
    fake: FakeProvider, conformance_case: CopyCase
) -> None:
    from threads_cases.core.errors import CaseError
    from threads_cases.harness.run.accept import accept_from_live
    from threads_cases.protocol.server import PythonImplementation

    case = conformance_case("weather-stub")
    before = (case / "model.json").read_bytes()
    stopped = {"verdict": "fail", "reasons": ["live_call_failed"], "replies": [], "live": {}}
    stopped["stop"] = {"code": "live_call_failed", "stop_key": "model:0", "message": "x"}
    with pytest.raises(CaseError, match="live_call_failed at model:0"):
        accept_from_live(case, PythonImplementation(), stopped)
    failing = {**stopped, "stop": None, "reasons": ["must_unmatched"]}
    with pytest.raises(CaseError, match="accepting would record it"):
        accept_from_live(case, PythonImplementation(), failing)
    # forced, the replies must still lead the turn to its end
    with pytest.raises(CaseError, match="no longer lead the turn to its end"):
        accept_from_live(case, PythonImplementation(), failing, force=True)
    assert (case / "model.json").read_bytes() == before


def test_the_pytest_plugin_runs_cases_live(
    fake: FakeProvider, conformance_case: CopyCase, pytester: pytest.Pytester
) -> None:
    # imported before the inner run, which keeps it (pytester drops the modules a run imports)
    import threads_cases.harness.live.anthropic_api  # noqa: F401

    shutil.copytree(conformance_case("weather-stub"), pytester.path / "cases" / "weather-stub")
    fake.push(Reply(calls=[WEATHER]), Reply("done"))
    result = pytester.runpytest_inprocess(
        "--threads-cases", "cases", "--threads-cases-live", "--threads-cases-model", "fake-2",
        "--threads-cases-base-url", fake.url, "-p", "no:cacheprovider",
        "-p", "no:hypothesispytest",  # it would import (and assertion-rewrite) all hypothesis
    )  # fmt: skip
    result.assert_outcomes(passed=1)
    assert [r["model"] for r in fake.requests] == ["fake-2", "fake-2"]


def test_only_the_provider_host_and_its_proxy_are_reachable(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from threads_cases.harness.live.providers import reachable_hosts
    from threads_cases.reference.egress import EgressBlocked, only_to_host

    for var in ("HTTPS_PROXY", "https_proxy", "HTTP_PROXY", "http_proxy", "NO_PROXY", "no_proxy"):
        monkeypatch.delenv(var, raising=False)
    assert reachable_hosts("https://api.anthropic.com") == ("api.anthropic.com",)
    monkeypatch.setenv("HTTPS_PROXY", "http://proxy.internal:3128")
    assert reachable_hosts("https://api.anthropic.com") == ("api.anthropic.com", "proxy.internal")
    monkeypatch.setenv("NO_PROXY", "api.anthropic.com")
    assert reachable_hosts("https://api.anthropic.com") == ("api.anthropic.com",)
    with only_to_host("localhost") as attempts:
        assert socket.getaddrinfo("localhost", 9)  # allowed, and its addresses with it
        with pytest.raises(EgressBlocked):
            socket.create_connection(("192.0.2.7", 80), timeout=0.5)
        with pytest.raises(EgressBlocked):
            socket.getaddrinfo("example.org", 80)
    assert [e.code for e in attempts] == ["egress_blocked", "egress_blocked"]
    assert '"192.0.2.7:80"' in attempts[0].message


def test_the_openai_provider_fails_like_the_anthropic_one(
    fake: FakeProvider, conformance_case: CopyCase
) -> None:
    fake.push(Fail(429, {"retry-after": "0.01"}), Fail(500, {"retry-after": "0.01"}))
    r = run_case(
        conformance_case("weather-stub"),
        live=live(fake, provider="openai", model="fake-2", retries=1),
    )
    assert stop_code(r) == "live_call_failed" and len(fake.requests) == 2
    assert r.stop is not None and "HTTP 500" in r.stop["message"]


def test_the_github_output_carries_the_live_lines(
    fake: FakeProvider, conformance_case: CopyCase
) -> None:
    import io

    from threads_cases.harness.report.github import write_github

    suite = run_suite([conformance_case("weather-stub")], live=live(fake))
    out = io.StringIO()
    write_github(suite, "case", out)
    assert "live weather-stub on threads-py: reused 2, supplied 0, live 0; 0 call(s)" in (
        out.getvalue()
    )
    assert "live total: reused 2, supplied 0, live 0; 0 of 20 call(s), $0.000000" in out.getvalue()


def test_an_implementation_without_the_live_capability_errors(
    fake: FakeProvider, conformance_case: CopyCase
) -> None:
    from threads_cases.protocol.server import PythonImplementation

    class NoLive(PythonImplementation):
        def hello(self) -> dict[str, Any]:
            out = super().hello()
            return {**out, "capabilities": [c for c in out["capabilities"] if c != "live"]}

    r = run_case(conformance_case("weather-stub"), NoLive(), live=live(fake))
    assert (r.verdict, r.reasons) == ("error", ["invalid_request"])
    assert "does not announce the live capability" in r.message
    assert fake.requests == []


# -- spend that cannot run away (spec/replay.md 11.4) ------------------------------------


def _six(conformance_case: CopyCase, tmp_path: Path) -> list[Path]:
    return [conformance_case("weather-stub", tmp_path / f"c{k}") for k in range(6)]


def _served_cost(fake: FakeProvider) -> float:
    """What the fake provider's own answers cost at PRICES (1 USD per 10 input tokens)."""
    return sum(u["input_tokens"] / 10 for u in fake.usage_served() if u is not None)


@pytest.mark.parametrize(
    ("usage", "why"),
    [
        (None, "did not report its usage"),
        ({"input_tokens": -4, "output_tokens": 5}, "negative usage (input_tokens -4)"),
        ({"input_tokens": 10**9, "output_tokens": 5}, "absurd usage (input_tokens 1000000000"),
        ({"input_tokens": 10, "output_tokens": 5.5}, "did not report its usage"),
    ],
)
@pytest.mark.parametrize("provider", ["anthropic", "openai"])
def test_an_unknown_cost_ends_the_runs_live_calls_under_a_cost_limit(
    fake: FakeProvider,
    conformance_case: CopyCase,
    tmp_path: Path,
    usage: dict[str, Any] | None,
    why: str,
    provider: str,
) -> None:
    fake.push(Reply(calls=[WEATHER], usage=usage))  # then Reply("ok") with usage, if asked
    run = live(fake, provider=provider, model="fake-2", max_cost_usd=50.0)
    suite = run_suite(_six(conformance_case, tmp_path), live=run)
    assert len(fake.requests) == 1  # at most one live call in the run
    assert suite.live is not None and suite.live["calls"] == 1
    assert suite.live["cost_usd"] is None and why in suite.live["spend_unknown"]
    first, *later = suite.results
    assert first.stop is not None and first.stop["code"] == "live_budget_exceeded"
    assert why in first.stop["message"] and "no further live call" in first.stop["message"]
    assert first.live is not None and first.live["calls"] == 1 and first.live["cost_usd"] is None
    for r in later:
        assert r.verdict == "fail" and r.stop is not None, r
        assert r.stop["code"] == "live_budget_exceeded" and r.stop["stop_key"] == "model:0"
        since = "the run's spend is unknown since live model call 0 of weather-stub on "
        assert since in r.stop["message"]
        assert why in r.stop["message"]
        none = {"reused": 0, "supplied": 0, "live": 0}
        assert r.live == {"provenance": none, "calls": 0, "cost_usd": 0.0}


def test_without_a_cost_limit_an_unknown_cost_is_reported_and_the_run_goes_on(
    fake: FakeProvider, conformance_case: CopyCase, tmp_path: Path
) -> None:
    bad = {"input_tokens": -4, "output_tokens": 5}
    fake.push(Reply(calls=[WEATHER], usage=bad), Reply("a"), Reply(calls=[WEATHER]), Reply("b"))
    cases = _six(conformance_case, tmp_path)[:2]
    suite = run_suite(cases, live=live(fake, model="fake-2"))
    assert [r.verdict for r in suite.results] == ["pass", "pass"]  # the reply is used, usage 0
    assert suite.live is not None and suite.live["calls"] == 4 == len(fake.requests)
    assert suite.live["cost_usd"] is None and "negative usage" in suite.live["spend_unknown"]
    assert [r.live["cost_usd"] for r in suite.results if r.live] == [None, 2.0]


def test_an_answer_naming_an_unpriced_model_makes_the_spend_unknown(
    fake: FakeProvider, conformance_case: CopyCase, tmp_path: Path
) -> None:
    fake.push(Reply(calls=[WEATHER], model="routed-elsewhere"))
    run = live(fake, model="fake-2", max_cost_usd=50.0)
    suite = run_suite(_six(conformance_case, tmp_path)[:3], live=run)
    assert len(fake.requests) == 1
    assert suite.live is not None
    unknown = suite.live["spend_unknown"]
    assert 'answered with model "routed-elsewhere", which has no price' in unknown
    assert all(stop_code(r) == "live_budget_exceeded" for r in suite.results)


@pytest.mark.parametrize(
    ("steps", "unknown"),
    [
        ([Hang(3.0)], True),  # no answer: the provider may have charged
        ([Raw(b"{not json")], True),  # a 200 that is not a reply: the same
        ([Fail(500)], False),  # an error status costs nothing: the run goes on calling
    ],
)
def test_a_call_without_a_readable_answer_makes_the_spend_unknown(
    fake: FakeProvider, conformance_case: CopyCase, tmp_path: Path, steps: list[Any], unknown: bool
) -> None:
    from fake_provider import tool_at_random

    fake.push(*steps)
    fake.respond = tool_at_random(1.0, WEATHER)  # then every turn passes, if asked
    run = live(fake, model="fake-2", max_cost_usd=50.0, timeout=0.3)
    suite = run_suite(_six(conformance_case, tmp_path)[:3], live=run)
    assert stop_code(suite.results[0]) == "live_call_failed"
    assert suite.live is not None
    if unknown:
        assert len(fake.requests) == 1 and suite.live["cost_usd"] is None
        assert "got no readable answer" in suite.live["spend_unknown"]
        assert [stop_code(r) for r in suite.results[1:]] == ["live_budget_exceeded"] * 2
    else:  # the next two cases made their two calls each
        assert len(fake.requests) == 5 and suite.live["spend_unknown"] is None
        assert suite.live["cost_usd"] == 4.0
        assert [r.verdict for r in suite.results[1:]] == ["pass", "pass"]


def test_calls_and_spend_are_the_providers_answers_summed(
    fake: FakeProvider, conformance_case: CopyCase, tmp_path: Path
) -> None:
    """Usage varies per answer; the report's spend is what the provider said, to the cent."""
    for k in range(6):
        fake.push(
            Reply(calls=[WEATHER], usage={"input_tokens": 3 * k + 1, "output_tokens": 9}),
            Reply("done", usage={"input_tokens": 7, "output_tokens": 2 * k}),
        )
    suite = run_suite(_six(conformance_case, tmp_path), live=live(fake, model="fake-2"))
    assert suite.live is not None
    assert suite.live["calls"] == len(fake.requests) == 12
    assert suite.live["cost_usd"] == pytest.approx(_served_cost(fake)) == pytest.approx(9.3)
    per_case = [r.live["cost_usd"] for r in suite.results if r.live]
    assert sum(per_case) == pytest.approx(suite.live["cost_usd"])


def test_a_slow_provider_is_waited_for_within_the_timeout(
    fake: FakeProvider, conformance_case: CopyCase
) -> None:
    from fake_provider import Delay

    fake.push(Delay(0.05, Reply(calls=[WEATHER])), Delay(0.05, Reply("done")))
    r = run_case(conformance_case("weather-stub"), live=live(fake, model="fake-2", timeout=5))
    assert r.verdict == "pass" and r.live is not None and r.live["cost_usd"] == 2.0


# -- what the model said (spec/replay.md 11.6, spec/reports.md 7) ------------------------


def test_a_live_failure_keeps_and_shows_what_the_model_said(
    fake: FakeProvider, conformance_case: CopyCase
) -> None:
    from rich.console import Console

    from threads_cases.harness.live.said import PANEL_TEXT
    from threads_cases.harness.report.result_text import describe
    from threads_cases.harness.report.suite_view import render_failure

    long = "No tool needed. " + "x" * 400
    fake.push(Reply(long))
    r = run_case(conformance_case("weather-stub"), live=live(fake, model="fake-2"))
    assert r.verdict == "fail" and "must_unmatched" in r.reasons
    line = r.to_json()
    [entry] = line["live_replies"]
    assert entry["provenance"] == "live" and entry["index"] == 0
    assert entry["reply"]["message"]["content"] == [{"type": "text", "text": long}]  # whole
    assert entry["request_sha256"] == r.live_replies[0]["request_sha256"]
    # the first divergence names the first live reply that differs from the recording
    d = line["divergence"]
    assert d is not None and (d["kind"], d["call"]) == ("reply", 0)
    assert d["pointer"] == "/message/content/0"  # a text where the tool call was: both blocks
    assert d["recorded"]["type"] == "tool_use" and "id" not in d["recorded"]
    assert d["replayed"] == {"type": "text", "text": long}
    assert d["summary"].startswith(
        'reply (model call 0) on model_responded at /message/content/0: recorded {"input":'
    )
    assert '!= live {"text":"No tool needed. xxx' in d["summary"]
    assert d["summary"].endswith("... (a live reply)")
    # the panel shows it, cut to the stated size
    console = Console(width=1000, record=True)
    console.print(render_failure(r))
    shown = console.export_text()
    cut = len(long) - PANEL_TEXT
    assert "live replies (text cut to 300 and tool inputs to 200 characters" in shown
    assert 'model:0 live, end_turn: "No tool needed. xxx' in shown and f"... (+{cut})" in shown
    assert f"... (+{cut})" in describe(r)  # JUnit and GitHub output carry the same lines


def test_the_first_differing_reply_is_named_after_equal_ones(
    fake: FakeProvider, conformance_case: CopyCase
) -> None:
    """The live model repeats the recorded tool call (a new id is not a difference) and then
    answers differently: call 1 is the first divergence, at the text."""
    case = conformance_case("weather-stub")
    recorded = json.loads((case / "model.json").read_text("utf-8"))["replies"]
    fake.push(Reply(calls=[("toolu_new_id", "get_weather", {"city": "Oslo"})]), Reply("Sunny!"))
    r = run_case(case, live=live(fake, model="fake-2"))
    assert r.verdict == "pass"
    assert [e["provenance"] for e in r.to_json()["live_replies"]] == ["live", "live"]
    d = r.divergence
    assert d is not None and d["call"] == 1 and d["pointer"] == "/message/content/0/text"
    assert d["recorded"] == recorded[1]["message"]["content"][0]["text"]
    assert d["replayed"] == "Sunny!"
    # a tool call shows as its name and input in the panel lines
    from threads_cases.harness.live.said import panel_lines

    lines = panel_lines(r.live_replies)
    assert lines[1] == '  model:0 live, tool_use: tool get_weather {"city":"Oslo"}'
    assert lines[2] == '  model:1 live, end_turn: "Sunny!"'


def test_reused_replies_never_diverge_and_are_only_named(
    fake: FakeProvider, conformance_case: CopyCase
) -> None:
    from threads_cases.harness.live.said import panel_lines

    r = run_case(conformance_case("weather-stub"), live=live(fake))
    assert r.divergence is None
    assert panel_lines(r.live_replies)[1:] == [
        "  model:0 reused: the recorded reply",
        "  model:1 reused: the recorded reply",
    ]


def test_a_tool_input_is_cut_in_the_panel() -> None:
    from threads_cases.harness.live.said import PANEL_INPUT, reply_line

    block = {"type": "tool_use", "id": "t", "name": "write_file", "input": {"c": "y" * 500}}
    reply = {"message": {"content": [block]}, "stop_reason": "tool_use"}
    line = reply_line({"index": 3, "provenance": "supplied", "reply": reply})
    whole = len('{"c":"' + "y" * 500 + '"}')
    assert line.startswith("model:3 supplied, tool_use: tool write_file {")
    assert line.endswith(f"... (+{whole - PANEL_INPUT})")


def test_the_github_annotation_of_a_live_failure_shows_the_live_reply(
    fake: FakeProvider, conformance_case: CopyCase
) -> None:
    from threads_cases.harness.report.github import annotation

    fake.push(Reply("I cannot tell."))
    r = run_case(conformance_case("weather-stub"), live=live(fake, model="fake-2"))
    text = annotation(r)
    assert text is not None and 'model:0 live, end_turn: "I cannot tell."' in text
