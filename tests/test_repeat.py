"""``run --repeat N`` (spec/replay.md 11.9): the statistics of repeated runs (Wilson 95%
interval, pass^k, flips), the verdict rules, and, against the fake provider answering at
random with a fixed seed, pass rates that hold the provider's true rate on both
implementations."""

from __future__ import annotations

import itertools
import json
import math
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from conftest import cli, ts_built
from fake_provider import FakeProvider, Reply, fake_provider, tool_at_random
from hypothesis import given
from hypothesis import strategies as st

from threads_cases.core.errors import CaseError
from threads_cases.harness.live.desk import LiveOptions, LiveRun
from threads_cases.harness.live.prices import PriceTable
from threads_cases.harness.live.providers import ClientSettings
from threads_cases.harness.run.repeat import Repeat, combine, flips_of, pass_hat, summary, wilson
from threads_cases.harness.run.runner import CaseResult, run_suite

pytestmark = pytest.mark.xdist_group("live")
CopyCase = Callable[[str], Path]
KEY = "sk-ant-api03-repeat-test-key-000"
WEATHER = ("toolu_r", "get_weather", {"city": "Oslo"})
PRICES = PriceTable(
    {"fake-2": {"input": 100_000.0, "output": 0.0, "cache_write": 0.0, "cache_read": 0.0}}
)


@pytest.fixture
def fake(monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeProvider]:
    monkeypatch.setenv("ANTHROPIC_API_KEY", KEY)
    with fake_provider(seed=0) as server:
        yield server


def live(fake: FakeProvider, **kw: Any) -> LiveRun:
    settings = ClientSettings("anthropic", fake.url, 5.0, 0)
    kw.setdefault("prices", PRICES)
    kw.setdefault("model", "fake-2")
    return LiveRun(LiveOptions(settings=settings, **kw))


def test_the_wilson_interval_is_the_textbook_one() -> None:
    # Wilson (1927), as in Agresti & Coull (1998): 14 of 20 at 95%
    lo, hi = wilson(14, 20)
    assert (round(lo, 4), round(hi, 4)) == (0.4810, 0.8545)
    assert wilson(0, 10)[0] == 0.0 and wilson(10, 10)[1] == 1.0
    assert round(wilson(10, 10)[0], 4) == 0.7225


@given(c=st.integers(0, 60), extra=st.integers(0, 60))
def test_the_interval_holds_the_rate_and_pass_k_falls(c: int, extra: int) -> None:
    n = c + extra
    if n == 0:
        return
    lo, hi = wilson(c, n)
    assert 0 <= lo <= c / n <= hi <= 1
    ks = [pass_hat(c, n, k) for k in range(1, n + 1)]
    assert math.isclose(ks[0], c / n)
    assert all(a >= b for a, b in itertools.pairwise(ks))
    assert ks[-1] == (1.0 if c == n else 0.0)


def _result(verdict: str, code: str | None = None) -> CaseResult:
    r = CaseResult("c", "cases/c", "threads-py", verdict, [] if verdict == "pass" else ["x"])
    if code is not None:
        r.stop = {"code": code, "stop_key": "model:0", "message": "m"}
    return r


def test_flips_and_the_summary() -> None:
    runs = [_result(v) for v in ("pass", "fail", "fail", "pass", "pass")]
    assert flips_of([r.passed() for r in runs]) == 2
    info = summary(runs, Repeat(5), strict=False)
    assert info["passes"] == 3 and info["judged"] == 5 and info["rate"] == 0.6
    assert info["flips"] == 2 and info["flip_rate"] == 0.5
    assert info["verdicts"] == ["pass", "fail", "fail", "pass", "pass"]
    assert info["pass_k"] == [0.6, 0.3, 0.1, 0.0, 0.0]


def test_the_verdict_rules() -> None:
    mixed = [_result("pass"), _result("fail"), _result("pass")]
    r = combine(mixed, Repeat(3), strict=False)
    assert (r.verdict, r.reasons) == ("fail", ["x"])  # the first run that did not pass
    r = combine([_result("pass")] * 20, Repeat(20, 0.8), strict=False)
    assert r.verdict == "pass"  # lower bound 0.839 >= 0.8
    r = combine([_result("pass")] * 5, Repeat(5, 0.8), strict=False)
    assert (r.verdict, r.reasons) == ("fail", ["pass_rate_below"])  # 5/5: bound 0.566
    assert "Wilson lower bound 0.566 is below --fail-under-rate 0.8" in r.message
    r = combine(mixed * 10, Repeat(30, 0.4), strict=False)
    assert (r.verdict, r.reasons) == ("pass", [])  # 20/30: bound 0.488 >= 0.4
    cut = [_result("pass"), _result("fail", "live_budget_exceeded")]
    r = combine(cut, Repeat(2, 0.1), strict=False)
    assert r.verdict == "fail" and r.repeat is not None
    assert (r.repeat["runs"], r.repeat["judged"]) == (2, 1)
    r = combine([_result("error")] * 3, Repeat(3, 0.5), strict=False)
    assert r.verdict == "error"


def test_bad_repeats_are_refused() -> None:
    with pytest.raises(CaseError, match="--repeat must be 1 or more"):
        Repeat(0)
    with pytest.raises(CaseError, match="from 0 to 1"):
        Repeat(3, 1.5)


@pytest.mark.parametrize(("rate", "seed"), [(0.3, 1), (0.7, 2), (0.95, 3)])
def test_repeated_live_runs_hold_the_providers_true_rate(
    fake: FakeProvider, conformance_case: CopyCase, rate: float, seed: int
) -> None:
    import random

    fake.random = random.Random(seed)
    fake.respond = tool_at_random(rate, WEATHER)
    suite = run_suite(
        [conformance_case("weather-stub")], live=live(fake, budget=1000), repeat=Repeat(20)
    )
    [r] = suite.results
    info = r.repeat
    assert info is not None and info["runs"] == info["judged"] == 20
    lo, hi = info["interval"]
    assert lo <= rate <= hi, info
    # the counts are the provider's: one or two calls a run, as its answers said
    tools = sum(1 for s in fake.answered if isinstance(s, Reply) and s.calls)
    assert info["passes"] == tools
    assert suite.live is not None and suite.live["calls"] == len(fake.requests) == 20 + tools
    assert r.live is not None and r.live["calls"] == suite.live["calls"]


def test_the_cli_repeats_on_both_implementations(
    tmp_path: Path, conformance_case: CopyCase, fake: FakeProvider
) -> None:
    """The issue's acceptance run: `run --live --repeat 20` against the seeded-random fake
    provider reports pass rates within the stated interval of the true rate, on both
    implementations, in the JSON report, the terminal, JUnit and the GitHub output."""
    if not ts_built():
        pytest.skip("the TypeScript driver is not built")
    fake.respond = tool_at_random(0.6, WEATHER)
    conformance_case("weather-stub")
    (tmp_path / "prices.json").write_text(json.dumps({"format": 1, "models": {
        "fake-2": {"input": 100000, "output": 0, "cache_write": 0, "cache_read": 0}}}))  # fmt: skip
    base = ("run", "cases", "--live", "--base-url", fake.url, "--model", "fake-2",
            "--prices", "prices.json", "--live-budget", "200", "--repeat", "20")  # fmt: skip
    env = {"ANTHROPIC_API_KEY": KEY}
    p = cli(*base, "--format", "json", "--junit", "out.xml", cwd=tmp_path, env=env)
    lines = [json.loads(x) for x in p.stdout.splitlines() if x.strip()]
    from threads_cases.core.schemas import validator

    v = validator("report.schema.json")
    for line in lines:  # repeat, answers and live_replies as schemas/report.schema.json says
        assert not list(v.iter_errors(line)), line
    results = [x for x in lines if x["kind"] == "result"]
    assert {r["implementation"] for r in results} == {"threads-py", "threads-ts"}
    assert all(len(r["answers"]["model"]) == r["spend"]["calls"] for r in results)
    for r in results:
        info = r["repeat"]
        assert info["runs"] == 20 and info["interval"][0] <= 0.6 <= info["interval"][1], info
        assert r["verdict"] == ("pass" if info["passes"] == 20 else "fail")
    assert lines[-1]["repeat"]["runs"] == 20 and lines[-1]["repeat"]["results"] == 2
    junit = (tmp_path / "out.xml").read_text("utf-8")
    assert '<property name="repeat.runs" value="20" />' in junit
    assert 'name="repeat.wilson95"' in junit
    # the terminal and the GitHub summary show the rate lines; a rate below P fails the run
    p = cli(*base, "--fail-under-rate", "0.9", cwd=tmp_path, env=env)
    assert p.returncode == 3
    assert "repeat weather-stub on threads-py: " in p.stdout and "(Wilson 95% " in p.stdout
    assert "below --fail-under-rate 0.9 (the Wilson 95% lower bound is compared)" in p.stdout
    p = cli(*base, "--fail-under-rate", "0.1", "--format", "github", cwd=tmp_path, env=env)
    assert p.returncode == 0, p.stdout
    assert "repeat weather-stub on threads-ts: " in p.stdout


def test_repeat_needs_live_or_supply(tmp_path: Path, conformance_case: CopyCase) -> None:
    conformance_case("weather-stub")
    p = cli("run", "cases", "--repeat", "3", cwd=tmp_path)
    assert p.returncode == 2 and "--repeat applies to --live and --supply runs" in p.stderr
    p = cli("run", "cases", "--fail-under-rate", "0.5", cwd=tmp_path)
    assert p.returncode == 2 and "needs --repeat N with N of 2 or more" in p.stderr


pytest_plugins = ["pytester"]


def test_the_pytest_plugin_repeats_live_items(
    fake: FakeProvider, conformance_case: CopyCase, pytester: pytest.Pytester
) -> None:
    import shutil

    import threads_cases.harness.live.anthropic_api  # noqa: F401  (kept across the inner run)

    shutil.copytree(conformance_case("weather-stub"), pytester.path / "cases" / "weather-stub")
    fake.respond = tool_at_random(0.5, WEATHER)
    args = ("--threads-cases", "cases", "--threads-cases-live", "--threads-cases-model",
            "fake-2", "--threads-cases-base-url", fake.url, "--threads-cases-live-budget",
            "100", "--threads-cases-repeat", "8", "-p", "no:cacheprovider",
            "-p", "no:hypothesispytest", "--junitxml", "out.xml")  # fmt: skip
    result = pytester.runpytest_inprocess(*args, "--threads-cases-fail-under-rate", "0.05")
    result.assert_outcomes(passed=1)
    junit = (pytester.path / "out.xml").read_text("utf-8")
    assert '<property name="repeat.runs" value="8" />' in junit
    assert len(fake.requests) >= 8
    result = pytester.runpytest_inprocess(*args, "--threads-cases-fail-under-rate", "0.99")
    result.assert_outcomes(failed=1)
    assert "pass_rate_below" in result.stdout.str()
    assert "repeat: " in result.stdout.str() and "(Wilson 95% " in result.stdout.str()


# -- the noise floor (spec/replay.md 11.10) ------------------------------------------------


def test_the_noise_of_a_rate_change() -> None:
    from threads_cases.harness.run.noise import change_text, rate_change

    a = {"rate": 0.6, "judged": 20, "flip_rate": 0.45}
    b = {"rate": 0.7, "judged": 20, "flip_rate": 0.4}
    change = rate_change(a, b)
    assert change is not None and change["delta"] == 0.1
    # v = max(flip rate, 2r(1-r)): 0.48 and 0.42; noise = 2.576 * sqrt(0.48/40 + 0.42/40)
    assert change["noise"] == pytest.approx(2.575829 * math.sqrt(0.9 / 40), abs=1e-6)
    assert change["significant"] is False
    assert change_text(change) == "rate 0.600 -> 0.700 (+0.100; noise ±0.386): within the noise"
    sure = rate_change({"rate": 1.0, "judged": 20, "flip_rate": 0.0},
                       {"rate": 0.0, "judged": 20, "flip_rate": 0.0})  # fmt: skip
    assert sure is not None and sure["noise"] == 0 and sure["significant"] is True
    one = rate_change({"rate": 1.0, "judged": 1, "flip_rate": None}, b)
    assert one is not None and one["significant"] is None
    assert rate_change(None, b) is None


def _repeat_report(tmp: Path, fake: FakeProvider, rate: float, name: str) -> Path:
    fake.respond = tool_at_random(rate, WEATHER)
    p = cli(
        "run", "cases", "--impl", "threads-py", "--live", "--base-url", fake.url,
        "--model", "fake-2", "--live-budget", "500", "--repeat", "20",
        "--format", "json",
        cwd=tmp, env={"ANTHROPIC_API_KEY": KEY},
    )  # fmt: skip
    assert p.returncode in (0, 3), p.stderr
    (tmp / name).write_text(p.stdout, "utf-8")
    return tmp / name


def test_a_diff_of_unchanged_runs_stays_within_the_noise_and_a_real_change_does_not(
    tmp_path: Path, conformance_case: CopyCase, fake: FakeProvider
) -> None:
    """The issue's acceptance: two repeated runs of an unchanged case never call their
    difference significant when it is within the measured noise; a real change is."""
    from threads_cases.harness.check.compliance import build_page
    from threads_cases.harness.report.compliance_html import render_page

    conformance_case("weather-stub")
    a = _repeat_report(tmp_path, fake, 0.6, "a.jsonl")
    b = _repeat_report(tmp_path, fake, 0.6, "b.jsonl")
    c = _repeat_report(tmp_path, fake, 0.05, "c.jsonl")
    ra = [json.loads(x) for x in a.read_text().splitlines()]
    assert ra[1]["repeat"]["flip_rate"] is not None  # the noise floor is in the report
    p = cli("diff", str(a), str(b), "--format", "json", cwd=tmp_path)
    answer = json.loads(p.stdout)
    rates = answer["summary"].get("rates", {})
    for change in rates.values():
        assert abs(change["delta"]) <= change["noise"] and change["significant"] is False
    assert answer["summary"].get("significant", []) == []
    p = cli("diff", "a.jsonl", "c.jsonl", cwd=tmp_path)
    assert p.returncode == 1
    assert "weather-stub [threads-py]: rate 0." in p.stdout and "larger than the noise" in p.stdout
    assert "1 rate change(s) larger than the noise" in p.stdout
    page = render_page(build_page([c], compare=a))
    assert "larger than the noise" in page and "(Wilson 95% " in page


def test_unchanged_repeated_runs_are_never_called_significant(
    fake: FakeProvider, conformance_case: CopyCase, tmp_path: Path
) -> None:
    """Six pairs of repeated runs of an unchanged case (true rate 0.5, the noisiest): their
    rates differ, yet no change is larger than the noise the runs measured."""
    from threads_cases.harness.report.report_diff import compare_results, report_results

    case = conformance_case("weather-stub")
    fake.respond = tool_at_random(0.5, WEATHER)
    run = live(fake, budget=10_000)

    def one() -> dict[str, Any]:
        [r] = run_suite([case], live=run, repeat=Repeat(20)).results
        return dict(r.to_json())

    deltas = []
    for _ in range(6):
        a, b = one(), one()
        for change in compare_results(report_results([a]), report_results([b])):
            assert change.rate is not None and change.rate["significant"] is False, change
            deltas.append(change.rate["delta"])
    assert any(d != 0 for d in deltas)  # the runs did differ
