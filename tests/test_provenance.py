"""Where each answer came from (spec/replay.md 11.11): every model reply and tool result of
a --supply or --live run is recorded, supplied or live, reported by both implementations
alike, carried by the result line and counted in the footer and the terminal."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from conftest import cli, ts_built
from fake_provider import FakeProvider, Reply, fake_provider

from threads_cases.harness.live.desk import LiveOptions, LiveRun
from threads_cases.harness.live.providers import ClientSettings
from threads_cases.harness.run.runner import run_case, run_suite

pytestmark = pytest.mark.xdist_group("live")
CopyCase = Callable[[str], Path]
SUPPLY = {
    "calls": {
        "model:1": {
            "message": {"role": "assistant", "content": [{"type": "text", "text": "Rain."}]},
            "stop_reason": "end_turn",
        },
        "tool:get_weather": "Oslo: 3°C (supplied)",
    }
}


def _unrecorded(conformance_case: CopyCase) -> Path:
    """weather-stub without its last reply and without its stub: --supply answers both."""
    case = conformance_case("weather-stub")
    model = json.loads((case / "model.json").read_text("utf-8"))
    model["replies"] = model["replies"][:1]
    (case / "model.json").write_text(json.dumps(model), "utf-8")
    stubs = json.loads((case / "stubs.json").read_text("utf-8"))
    stubs["calls"] = []
    (case / "stubs.json").write_text(json.dumps(stubs), "utf-8")
    return case


@pytest.fixture
def fake(monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeProvider]:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-provenance-0000")
    with fake_provider() as server:
        yield server


def test_a_supplied_pass_is_marked_as_such(conformance_case: CopyCase) -> None:
    r = run_case(_unrecorded(conformance_case), supply=SUPPLY)
    assert r.verdict in ("pass", "drifted"), r.checks
    assert r.answers == {"model": ["recorded", "supplied"], "tools": ["supplied"]}
    assert r.to_json()["answers"] == r.answers


def test_a_plain_replay_carries_no_answers(conformance_case: CopyCase) -> None:
    r = run_case(conformance_case("weather-stub"))
    assert r.answers is None and "answers" not in r.to_json()


@pytest.mark.parametrize("case_name", ["weather-stub", "reads-notes", "parallel-calls"])
def test_both_implementations_report_the_same_provenance(
    conformance_case: CopyCase, case_name: str
) -> None:
    if not ts_built():
        pytest.skip("the TypeScript driver is not built")
    from threads_cases.harness.run.registry import open_implementation

    case = conformance_case(case_name)
    ts = open_implementation("threads-ts")
    try:
        py_r = run_case(case, supply=SUPPLY)
        ts_r = run_case(case, ts, supply=SUPPLY)
    finally:
        ts.close()
    assert py_r.answers is not None and py_r.answers == ts_r.answers
    assert py_r.answers["model"] and all(m == "recorded" for m in py_r.answers["model"])
    if case_name == "reads-notes":  # a sandbox tool runs now: live
        assert set(py_r.answers["tools"]) == {"live"}
    if case_name == "weather-stub":  # the stub answers first, the supply is not needed
        assert py_r.answers == {"model": ["recorded", "recorded"], "tools": ["recorded"]}


def test_a_live_turn_names_live_replies_and_recorded_stubs(
    fake: FakeProvider, conformance_case: CopyCase
) -> None:
    fake.push(Reply(calls=[("toolu_p", "get_weather", {"city": "Oslo"})]), Reply("ok"))
    settings = ClientSettings("anthropic", fake.url, 5.0, 0)
    run = LiveRun(LiveOptions(settings=settings, model="fake-2"))
    r = run_case(conformance_case("weather-stub"), live=run)
    assert r.answers == {"model": ["live", "live"], "tools": ["recorded"]}


def test_the_footer_and_the_terminal_count_the_answers(
    tmp_path: Path, conformance_case: CopyCase
) -> None:
    _unrecorded(conformance_case)
    (tmp_path / "supply.json").write_text(json.dumps(SUPPLY), "utf-8")
    args = ("run", "cases", "--supply", "supply.json")
    p = cli(*args, "--format", "json", cwd=tmp_path)
    lines = [json.loads(x) for x in p.stdout.splitlines() if x.strip()]
    footer: dict[str, Any] = lines[-1]
    results = [x for x in lines if x["kind"] == "result"]
    per_impl = len([r for r in results if "answers" in r])
    assert per_impl >= 1
    assert footer["answers"]["model"] == {"recorded": per_impl, "supplied": per_impl, "live": 0}
    assert footer["answers"]["tools"] == {"recorded": 0, "supplied": per_impl, "live": 0}
    p = cli(*args, cwd=tmp_path)
    assert (
        f"answers: model replies recorded {per_impl}, supplied {per_impl}, live 0; "
        f"tool results recorded 0, supplied {per_impl}, live 0" in p.stdout
    )


def test_repeated_runs_carry_every_runs_answers(conformance_case: CopyCase) -> None:
    from threads_cases.harness.run.repeat import Repeat

    suite = run_suite([_unrecorded(conformance_case)], supply=SUPPLY, repeat=Repeat(3))
    [r] = suite.results
    assert r.answers == {"model": ["recorded", "supplied"] * 3, "tools": ["supplied"] * 3}
