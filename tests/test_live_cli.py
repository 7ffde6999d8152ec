"""``threads-cases run --live`` end to end through the CLI (spec/replay.md section 11), on
both implementations, against the fake provider of tests/fake_provider.py: provenance and
costs in the JSON report, the terminal view and JUnit; the budget stopping exactly at the
limit; write refusals; provider failures; a tool's egress blocked while the harness reaches
the provider; and the API key in no output at all.
"""

from __future__ import annotations

import json
import socket
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from conftest import START_MS, cli, ts_built
from fake_provider import Fail, FakeProvider, Reply, fake_provider

from threads_cases.case.directory import CaseExpectation
from threads_cases.core.schemas import validator
from threads_cases.reference.agent import BUILTIN_TOOLS, AgentSpec, ToolSpec
from threads_cases.reference.model import ScriptedModel, text_reply, tool_reply
from threads_cases.reference.runtime import Clock
from threads_cases.reference.sandbox import FakeSandbox
from threads_cases.reference.thread import Thread

#: the worker that runs test_live.py runs these too (its SDK imports are paid once)
pytestmark = pytest.mark.xdist_group("live")

CopyCase = Callable[[str], Path]
KEY = "sk-ant-api03-CLI-secret-key-9f8e7d6c5b4a"
DRIVERS = Path(__file__).resolve().parent / "drivers"
PRICES = {
    "format": 1,
    "models": {"fake-2": {"input": 100000, "output": 0, "cache_write": 0, "cache_read": 0}},
}


@pytest.fixture
def fake() -> Iterator[FakeProvider]:
    with fake_provider() as server:
        yield server


def _lines(text: str) -> list[dict[str, Any]]:
    return [json.loads(line) for line in text.splitlines() if line.strip()]


def _both_available() -> bool:
    return ts_built()


def test_a_live_run_on_both_implementations_reports_provenance_cost_and_no_key(
    tmp_path: Path, conformance_case: CopyCase, fake: FakeProvider
) -> None:
    if not _both_available():
        pytest.skip("the TypeScript driver is not built")
    email = ("toolu_m", "send_email", {"to": "bob@example.com", "body": "hi"})
    weather = ("toolu_w", "get_weather", {"city": "Oslo"})
    # cases run in order, each on threads-py then threads-ts (a live run is serial)
    fake.push(
        Reply(calls=[email]),  # email-write-effect, threads-py: write_not_allowed
        Reply(calls=[email]),  # email-write-effect, threads-ts: write_not_allowed
        Fail(500),  # weather-stub, threads-py: live_call_failed (no retries)
        Reply(calls=[weather]),  # weather-stub, threads-ts: the 4th and last call...
    )
    conformance_case("email-write-effect")
    conformance_case("weather-stub")
    (tmp_path / "prices.json").write_text(json.dumps(PRICES), "utf-8")
    junit = tmp_path / "out.xml"
    p = cli(
        "run", "cases", "--live", "--base-url", fake.url, "--model", "fake-2",
        "--prices", "prices.json", "--live-budget", "4", "--live-retries", "0",
        "--format", "json", "--junit", junit,
        cwd=tmp_path,
        env={"ANTHROPIC_API_KEY": KEY},
    )  # fmt: skip
    assert p.returncode == 3, p.stderr
    lines = _lines(p.stdout)
    v = validator("report.schema.json")
    for line in lines:
        assert not list(v.iter_errors(line)), line
    results = {(r["case"], r["implementation"]): r for r in lines if r["kind"] == "result"}
    stops = {k: (r["stop"] or {}).get("code") for k, r in results.items()}
    assert stops == {
        ("email-write-effect", "threads-py"): "write_not_allowed",
        ("email-write-effect", "threads-ts"): "write_not_allowed",
        ("weather-stub", "threads-py"): "live_call_failed",
        ("weather-stub", "threads-ts"): "live_budget_exceeded",  # ...so the 5th is refused
    }
    for r in results.values():
        assert r["live"] is True and r["verdict"] == "fail"
    ts_weather = results[("weather-stub", "threads-ts")]
    assert ts_weather["provenance"] == {"reused": 0, "supplied": 0, "live": 1}
    assert ts_weather["spend"] == {"calls": 1, "cost_usd": 1.0}
    assert results[("weather-stub", "threads-py")]["spend"] == {"calls": 1, "cost_usd": 0.0}
    footer = lines[-1]
    assert footer["live"] == {
        "provenance": {"reused": 0, "supplied": 0, "live": 3},
        "calls": 4,
        "cost_usd": 3.0,
        "budget": 4,
        "max_cost_usd": None,
        "spend_unknown": None,
    }
    assert len(fake.requests) == 4  # exactly the budget
    # the key reached the provider, and nothing else
    sent = fake.headers[0]
    assert KEY in (sent.get("x-api-key"), sent.get("authorization", "").removeprefix("Bearer "))
    outputs = [p.stdout, p.stderr, junit.read_text("utf-8")]
    outputs.append((tmp_path / ".threads-cases" / "last-report.jsonl").read_text("utf-8"))
    outputs += [f.read_text("utf-8", "replace") for f in (tmp_path / "cases").rglob("*.json*")]
    for text in outputs:
        assert KEY not in text and KEY[:20] not in text


def test_live_refusals_before_start(tmp_path: Path, conformance_case: CopyCase) -> None:
    conformance_case("weather-stub")
    p = cli(
        "run", "cases", "--live", "--format", "json", cwd=tmp_path, env={"ANTHROPIC_API_KEY": ""}
    )
    assert p.returncode == 2
    out = json.loads(p.stdout)
    assert out["code"] == "live_unavailable" and "ANTHROPIC_API_KEY" in out["message"]
    p = cli("run", "cases", "--model", "fake-2", cwd=tmp_path)
    assert p.returncode == 2 and "--model only apply with --live" in p.stdout + p.stderr
    p = cli(
        "run", "cases", "--live", "--allow-write", "send_email", cwd=tmp_path,
        env={"ANTHROPIC_API_KEY": KEY},
    )  # fmt: skip
    assert p.returncode == 2 and "tool:<name>" in p.stdout + p.stderr
    assert KEY not in p.stdout + p.stderr


def _probe_case(root: Path) -> None:
    tool = ToolSpec(
        "probe",
        "Try to reach the network.",
        {"type": "object", "properties": {"how": {"type": "string"}}, "required": ["how"]},
        "sandbox",
        "read",
        lambda ctx, inp: "tried",
    )
    agent = AgentSpec("egress-agent", "model-e", "Probe.", (*BUILTIN_TOOLS.values(), tool))
    t = Thread.create(agent=agent, sandbox=FakeSandbox({}), thread_id="t", clock=Clock(START_MS, 3))
    t.run_turn("warm up", ScriptedModel([text_reply("ok")]))
    at = t.events[-1]["event_id"]
    t.run_turn(
        "probe",
        ScriptedModel([tool_reply(("tu_1", "probe", {"how": "socket"})), text_reply("done")]),
    )
    saved = t.save_case(
        "probe",
        at=at,
        expect=CaseExpectation(must=[{"type": "turn_completed"}], expect=[]),
        dir=root,
    )
    assert saved.ok, saved.error


def test_a_live_tool_is_still_blocked_while_the_harness_reaches_the_provider(
    tmp_path: Path, fake: FakeProvider
) -> None:
    _probe_case(tmp_path / "cases")
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen(4)
        listener.settimeout(0.2)
        port = listener.getsockname()[1]
        command = json.dumps([sys.executable, str(DRIVERS / "egress_driver.py")])
        (tmp_path / "threads-cases.toml").write_text(
            f"[implementations.probe-py]\ncommand = {command}\n", "utf-8"
        )
        # the live reply has the tool try a socket to another port (the provider's host)
        fake.push(Reply(calls=[("toolu_p", "probe", {"how": "socket"})]), Reply("done"))
        p = cli(
            "run", "cases", "--impl", "probe-py", "--live", "--base-url", fake.url,
            "--model", "fake-2", "--isolation", "guard", "--format", "json",
            cwd=tmp_path, env={"ANTHROPIC_API_KEY": KEY, "PROBE_PORT": str(port)},
        )  # fmt: skip
        with pytest.raises(TimeoutError):
            listener.accept()
    result = next(r for r in _lines(p.stdout) if r["kind"] == "result")
    assert result["stop"]["code"] == "egress_blocked", result
    assert result["provenance"] == {"reused": 0, "supplied": 0, "live": 1}
    assert len(fake.requests) == 1


def test_accept_from_live_records_the_live_replies_then_a_live_rerun_reuses_them(
    tmp_path: Path, conformance_case: CopyCase, fake: FakeProvider
) -> None:
    case = conformance_case("weather-stub")
    env = {"ANTHROPIC_API_KEY": KEY}
    live = ("--live", "--base-url", fake.url, "--model", "fake-2", "--impl", "threads-py")
    # nothing to accept before a live run
    p = cli("accept", "cases/weather-stub", "--from-live", cwd=tmp_path)
    assert p.returncode == 3 and "run it first" in p.stdout + p.stderr
    before = (case / "model.json").read_bytes()
    fake.push(Reply(calls=[("toolu_new", "get_weather", {"city": "Oslo"})]), Reply("Rainy."))
    (tmp_path / "prices.json").write_text(json.dumps(PRICES), "utf-8")
    limits = ("--prices", "prices.json", "--max-cost-usd", "5")
    p = cli("run", "cases", *live, *limits, cwd=tmp_path, env=env)
    assert p.returncode == 0, p.stdout + p.stderr
    # the terminal view: calls and spend per case and in total
    line = "live weather-stub on threads-py: reused 0, supplied 0, live 2; 2 call(s), $2.000000"
    assert line in p.stdout
    assert "live total: reused 0, supplied 0, live 2; 2 of 20 call(s), $2.000000 of $5" in p.stdout
    assert KEY not in p.stdout + p.stderr
    assert (case / "model.json").read_bytes() == before  # --live never writes to a case
    p = cli("accept", "cases/weather-stub", "--from-live", cwd=tmp_path)
    assert p.returncode == 0, p.stdout + p.stderr
    assert "accepted" in p.stdout
    replies = json.loads((case / "model.json").read_text("utf-8"))["replies"]
    assert [r["request"]["model"] for r in replies][:1] == ["fake-2"]
    assert replies[0]["message"]["content"][0]["id"] == "toolu_new"
    assert replies[1]["message"]["content"] == [{"type": "text", "text": "Rainy."}]
    # a plain replay answers from them; the requests were fake-2's, so their hashes differ
    # from what the recorded agent asks (reused needs no --model: spec/replay.md 11.2)
    p = cli("run", "cases", "--impl", "threads-py", "--format", "json", cwd=tmp_path)
    assert p.returncode == 0, p.stdout + p.stderr
    result = next(r for r in _lines(p.stdout) if r["kind"] == "result")
    assert (result["verdict"], result["reasons"]) == ("drifted", ["request_diverged"])
    live_file = (tmp_path / ".threads-cases" / "last-live.jsonl").read_text("utf-8")
    assert KEY not in live_file


def test_the_conformance_cases_run_live_on_both_implementations(
    tmp_path: Path, fake: FakeProvider
) -> None:
    """The issue's acceptance run: every conformance case, live on a fake model, reports
    provenance counts and costs for both implementations."""
    if not _both_available():
        pytest.skip("the TypeScript driver is not built")
    from conftest import CONFORMANCE

    (tmp_path / "prices.json").write_text(json.dumps(PRICES), "utf-8")
    p = cli(
        "run", CONFORMANCE, "--live", "--base-url", fake.url, "--model", "fake-2",
        "--prices", "prices.json", "--live-budget", "500", "--format", "json",
        cwd=tmp_path, env={"ANTHROPIC_API_KEY": KEY},
    )  # fmt: skip
    lines = _lines(p.stdout)
    results = [r for r in lines if r["kind"] == "result"]
    live = [r for r in results if r["verdict"] != "skip"]
    assert {r["implementation"] for r in live} == {"threads-py", "threads-ts"}
    for r in live:
        assert r["live"] is True
        assert r["provenance"]["live"] == r["spend"]["calls"] >= 1
        assert r["spend"]["cost_usd"] == r["spend"]["calls"] * 1.0  # 10 input tokens: 1 USD
    footer = lines[-1]["live"]
    assert footer["calls"] == len(fake.requests) == sum(r["spend"]["calls"] for r in live)
    assert footer["cost_usd"] == float(footer["calls"])
    assert KEY not in p.stdout + p.stderr


def test_a_provider_without_usage_gets_one_live_call_in_a_run_under_a_cost_limit(
    tmp_path: Path, conformance_case: CopyCase, fake: FakeProvider
) -> None:
    """The issue's 6 cases that made 6 calls with cost null: now one call, on both
    implementations, and every later case ends live_budget_exceeded naming the first."""
    if not _both_available():
        pytest.skip("the TypeScript driver is not built")
    weather = ("toolu_w", "get_weather", {"city": "Oslo"})
    fake.respond = lambda body: Reply(calls=[weather], usage=None)
    for k in range(3):
        conformance_case("weather-stub", tmp_path / "cases" / f"c{k}")
    (tmp_path / "prices.json").write_text(json.dumps(PRICES), "utf-8")
    p = cli(
        "run", "cases", "--live", "--base-url", fake.url, "--model", "fake-2",
        "--prices", "prices.json", "--max-cost-usd", "100", "--format", "json",
        cwd=tmp_path, env={"ANTHROPIC_API_KEY": KEY},
    )  # fmt: skip
    assert p.returncode == 3, p.stderr
    lines = _lines(p.stdout)
    results = [r for r in lines if r["kind"] == "result"]
    assert len(results) == 6 and len(fake.requests) == 1
    footer = lines[-1]["live"]
    assert footer["calls"] == 1 and footer["cost_usd"] is None
    assert footer["spend_unknown"] == (
        "live model call 0 of weather-stub on threads-py: the provider did not report its usage"
    )
    assert all(r["stop"]["code"] == "live_budget_exceeded" for r in results)
    assert {r["implementation"] for r in results[1:]} == {"threads-py", "threads-ts"}
    assert all("the run's spend is unknown since" in r["stop"]["message"] for r in results[1:])
    p = cli(
        "run", "cases", "--live", "--base-url", fake.url, "--model", "fake-2",
        "--prices", "prices.json", "--max-cost-usd", "100",
        cwd=tmp_path, env={"ANTHROPIC_API_KEY": KEY},
    )  # fmt: skip
    assert "live spend unknown since live model call 0 of weather-stub on threads-py" in p.stdout
    assert len(fake.requests) == 2
