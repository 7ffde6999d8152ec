"""Properties of the live budgets and prices (spec/replay.md 11.4, 11.5), with a provider
stand-in (no HTTP): whatever the calls cost, a run makes exactly the calls its limits allow."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from threads_cases.harness.live.desk import LiveOptions, LiveRun
from threads_cases.harness.live.prices import PriceTable
from threads_cases.harness.live.providers import ProviderAnswer

#: one input token costs exactly 1 USD, everything else nothing
PRICES = PriceTable({"m": {"input": 1e6, "output": 0.0, "cache_write": 0.0, "cache_read": 0.0}})


class Provider:
    name = "stand-in"
    hosts = ("127.0.0.1",)

    def __init__(self, costs: list[int]) -> None:
        self.costs = costs
        self.calls = 0

    def call(self, request: dict[str, Any]) -> ProviderAnswer:
        tokens = self.costs[self.calls % len(self.costs)]
        self.calls += 1
        reply = {
            "message": {"role": "assistant", "content": []},
            "stop_reason": "end_turn",
            "usage": {"input_tokens": tokens, "output_tokens": 1},
        }
        return ProviderAnswer(reply, True)


@settings(max_examples=60, deadline=None)
@given(
    costs=st.lists(st.integers(0, 5), min_size=1, max_size=8),
    budget=st.integers(0, 12),
    limit=st.one_of(st.none(), st.integers(0, 20)),
    asked=st.integers(0, 15),
)
def test_a_run_makes_exactly_the_calls_its_limits_allow(
    costs: list[int], budget: int, limit: int | None, asked: int
) -> None:
    provider = Provider(costs)
    run = LiveRun(
        LiveOptions(model="m", budget=budget, max_cost_usd=limit, prices=PRICES), provider
    )
    ledger = run.ledger([], None)
    answers = [ledger.answer(i, {"model": "m"}, "0" * 64) for i in range(asked)]
    # what the rule says: call k is made while k < budget and the spend so far < limit
    made, spent = 0, 0
    for _ in range(asked):
        if made >= budget or (limit is not None and spent >= limit):
            break
        spent += costs[made % len(costs)]
        made += 1
    assert provider.calls == run.calls == ledger.calls == made
    assert run.spent == spent and ledger.cost_usd == spent
    assert all("reply" in a for a in answers[:made])
    assert all(a["stop"]["code"] == "live_budget_exceeded" for a in answers[made:])
    assert [a["stop"]["stop_key"] for a in answers[made:]] == [
        f"model:{i}" for i in range(made, asked)
    ]
    assert ledger.provenance == {"reused": 0, "supplied": 0, "live": made}


@given(
    tokens=st.fixed_dictionaries(
        {
            "input_tokens": st.integers(0, 300_000),
            "output_tokens": st.integers(0, 10_000),
            "cache_creation_input_tokens": st.integers(0, 100_000),
            "cache_read_input_tokens": st.integers(0, 100_000),
        }
    )
)
def test_the_long_context_tier_prices_the_whole_call(tokens: dict[str, int]) -> None:
    base = {"input": 3.0, "output": 15.0, "cache_write": 3.75, "cache_read": 0.3}
    tier = {"above_input_tokens": 200_000, "input": 6.0, "output": 22.5}
    tier |= {"cache_write": 7.5, "cache_read": 0.6}
    table = PriceTable({"s": {**base, "long_context": tier}})
    prompt = (
        tokens["input_tokens"]
        + tokens["cache_creation_input_tokens"]
        + tokens["cache_read_input_tokens"]
    )
    rates = tier if prompt > 200_000 else base
    expected = (
        tokens["input_tokens"] * rates["input"]
        + tokens["output_tokens"] * rates["output"]
        + tokens["cache_creation_input_tokens"] * rates["cache_write"]
        + tokens["cache_read_input_tokens"] * rates["cache_read"]
    ) / 1e6
    assert table.cost("s", tokens) == expected
    assert table.cost("s-20250929", tokens) == expected  # a dated name has the same price
    assert table.cost("other", tokens) is None


def test_the_shipped_price_table_is_valid_and_prices_known_models() -> None:
    from threads_cases.harness.live.prices import load_prices

    table = load_prices()
    usage = {"input_tokens": 100_000, "output_tokens": 0}
    assert table.cost("claude-sonnet-4-5-20250929", usage) == pytest.approx(0.3)
    assert table.cost("gpt-4o-mini", usage) == pytest.approx(0.015)
    long = {"input_tokens": 300_000, "output_tokens": 0}  # above 200k: the tier's rate
    assert table.cost("claude-sonnet-4-5", long) == pytest.approx(1.8)


def test_a_bad_price_table_is_refused_with_its_pointer(tmp_path: Any) -> None:
    from threads_cases.core.errors import CaseError
    from threads_cases.harness.live.prices import load_prices

    bad = tmp_path / "prices.json"
    bad.write_text('{"format": 1, "models": {"m": {"input": -1, "output": 1}}}', "utf-8")
    with pytest.raises(CaseError) as err:
        load_prices(bad)
    assert err.value.code == "invalid_request"
    assert err.value.location.file == str(bad)
    assert err.value.location.pointer is not None and err.value.location.pointer.startswith(
        "/models/m"
    )


def test_merging_live_shards_sums_their_totals() -> None:
    from threads_cases.harness.run.merge import _footer

    def shard(live: int, cost: float | None, unknown: str | None = None) -> dict[str, Any]:
        prov = {"reused": 1, "supplied": 0, "live": live}
        return {
            "kind": "footer",
            "live": {
                "provenance": prov,
                "calls": live,
                "cost_usd": cost,
                "budget": 20,
                "max_cost_usd": None,
                "spend_unknown": unknown,
            },
        }

    merged = _footer([shard(2, 0.5), shard(3, 0.25)], [])["live"]
    assert merged == {
        "provenance": {"reused": 2, "supplied": 0, "live": 5},
        "calls": 5,
        "cost_usd": 0.75,
        "budget": 40,
        "max_cost_usd": None,
        "spend_unknown": None,
    }
    unknown = _footer([shard(2, 0.5), shard(1, None, "live model call 0 of a: x")], [])["live"]
    assert unknown["cost_usd"] is None and unknown["spend_unknown"] == "live model call 0 of a: x"
    assert "live" not in _footer([{"kind": "footer"}], [])


def test_merging_shards_sums_their_repeat_and_answer_counts() -> None:
    from threads_cases.harness.run.merge import _footer

    def shard(flipped: int, live: int) -> dict[str, Any]:
        return {
            "kind": "footer",
            "repeat": {"runs": 20, "fail_under_rate": 0.5, "results": 2, "flipped": flipped,
                       "below_rate": 1},
            "answers": {"model": {"recorded": 1, "supplied": 0, "live": live},
                        "tools": {"recorded": 2, "supplied": 1, "live": 0}},
        }  # fmt: skip

    merged = _footer([shard(1, 3), shard(0, 4)], [])
    assert merged["repeat"] == {
        "runs": 20, "fail_under_rate": 0.5, "results": 4, "flipped": 1, "below_rate": 2
    }  # fmt: skip
    assert merged["answers"]["model"] == {"recorded": 2, "supplied": 0, "live": 7}
    assert merged["answers"]["tools"] == {"recorded": 4, "supplied": 2, "live": 0}
