"""The harness's side of a live run (spec/replay.md section 11): where each model call of a
live turn is answered, and the budgets.

:class:`LiveRun` is one run's state: the options, the provider client (opened on the first
live call), and the budgets shared by every case (a lock keeps them exact). For each case
and implementation :meth:`LiveRun.ledger` gives a :class:`CaseLedger`, whose
:meth:`~CaseLedger.answer` is the ``ask_model`` callback of the runtime (in process) or of the
driver protocol's ``model_call`` (spec/driver-protocol.md 2.5.1). Call ``n`` goes down the
ladder:

1. ``reused``: the recorded reply ``n`` of model.json, when the request's sha256 equals its
   ``request_sha256`` and neither ``--model`` nor ``--system-file`` was given;
2. ``supplied``: the ``--supply`` answer ``model:<n>``;
3. ``live``: a provider call, when the budgets allow it;
4. else a stop: ``live_budget_exceeded`` or ``live_call_failed`` (stop key ``model:<n>``).

Budgets: at most ``budget`` live calls per run (``--live-budget``, default 20), and with
``max_cost_usd`` no call once the spend has reached it. A call is made only while the calls
made are below the budget and the spend is below the cost limit, so a run stops exactly at
the limit: with ``--live-budget 2`` the third live call stops. Under a cost limit a model
without a price stops before the call, and a call whose cost is unknown (:mod:`.spend`: no
usage, a negative, non-integer or absurd count, an unpriced answering model, no readable
answer) stops after it (the call counts) and ends the run's live calls: every later call
stops with ``live_budget_exceeded`` naming the first unknown cost. The calls and the spend
are counted from the provider's answers (their usage), never estimated from the requests.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, TypedDict, cast

from ...core.shapes import (
    DivergenceRecord,
    JsonObject,
    LiveProvenance,
    LiveSpend,
    LiveTotals,
    StopRecord,
)
from ...core.texts import quote
from .prices import PriceTable
from .providers import ClientSettings, Provider, ProviderError, host_of, open_provider
from .spend import NO_USAGE, price_problem, usage_problem

PROVENANCE = ("reused", "supplied", "live")


@dataclass(frozen=True)
class LiveOptions:
    """What ``run --live`` was asked: model and system prompt overrides, the provider
    settings, budgets, prices and the write tools allowed (``--allow-write tool:<name>``)."""

    settings: ClientSettings = field(default_factory=ClientSettings)
    model: str | None = None
    system: str | None = None
    budget: int = 20
    max_cost_usd: float | None = None
    prices: PriceTable = field(default_factory=lambda: PriceTable({}))
    allow_write: frozenset[str] = frozenset()

    def request_body(self) -> JsonObject:
        """The ``live`` object of a ``replay`` request (spec/driver-protocol.md 2.5.1)."""
        out: dict[str, Any] = {}
        if self.model is not None:
            out["model"] = self.model
        if self.system is not None:
            out["system"] = self.system
        if self.allow_write:
            out["allow_write"] = sorted(self.allow_write)
        return out


class StopAnswer(TypedDict):
    """The answer to a model call that is refused: ``{"stop": {code, stop_key, message}}``
    (spec/driver-protocol.md 2.5.1)."""

    stop: StopRecord


def _stop(code: str, index: int, message: str) -> StopAnswer:
    return {"stop": {"code": code, "stop_key": f"model:{index}", "message": message}}


def _answer(code: str, index: int, message: str) -> dict[str, Any]:
    """:func:`_stop` as the answer of a model call (an ``AskModel``'s)."""
    return dict(_stop(code, index, message))


class LiveRun:
    """One live run: the provider (opened lazily; ``provider`` replaces it in tests), the
    budgets and the totals (see the module docstring)."""

    def __init__(self, options: LiveOptions, provider: Provider | None = None) -> None:
        self.options = options
        self._provider = provider
        self._lock = threading.Lock()
        self.calls = 0
        self.spent = 0.0
        #: why the run's spend is unknown (the first live call whose cost is), else None
        self.unknown: str | None = None

    @property
    def priced(self) -> bool:
        """False once a live call's cost is unknown (:mod:`.spend`)."""
        return self.unknown is None

    def check(self) -> None:
        """Refuse bad options before anything runs (``invalid_request``) and open the
        provider client (``live_unavailable``: SDK missing or no API key)."""
        host_of(self.options.settings.url())
        self.provider()

    def provider(self) -> Provider:
        with self._lock:
            if self._provider is None:
                self._provider = open_provider(self.options.settings)
            return self._provider

    def ledger(
        self, replies: list[JsonObject], supply: JsonObject | None, where: str = ""
    ) -> CaseLedger:
        """The ledger of one case run: its recorded replies (model.json), the supply, and
        ``where`` (``<case> on <implementation>``, for the messages)."""
        return CaseLedger(self, replies, supply or {}, where)

    def reserve(self, model: str, index: int) -> StopAnswer | None:
        """Take one live call (model call ``index``) from the budgets; returns None, or the
        ``{"stop"}`` answer that refuses it (``live_budget_exceeded``)."""
        o = self.options
        with self._lock:
            if self.calls >= o.budget:
                return _stop(
                    "live_budget_exceeded",
                    index,
                    f"the live budget of {o.budget} model call(s) is spent",
                )
            if o.max_cost_usd is not None:
                if self.unknown is not None:
                    return _stop(
                        "live_budget_exceeded",
                        index,
                        f"no further live call: the run's spend is unknown since {self.unknown}, "
                        "and --max-cost-usd is set",
                    )
                if o.prices.price(model) is None:
                    return _stop(
                        "live_budget_exceeded",
                        index,
                        f"model {quote(model)} has no price and --max-cost-usd is set",
                    )
                if self.spent >= o.max_cost_usd:
                    return _stop(
                        "live_budget_exceeded",
                        index,
                        f"the spend reached the limit of {o.max_cost_usd:g} USD",
                    )
            self.calls += 1
            return None

    def book(self, model: str, usage: JsonObject, unknown: str | None) -> float | None:
        """Add a made call's cost to the spend; returns it (USD), or None when ``unknown``
        says why it cannot be known (the first such reason becomes the run's
        :attr:`unknown`: its spend is then unknown)."""
        cost = None if unknown is not None else self.options.prices.cost(model, usage)
        with self._lock:
            if cost is None:
                if self.unknown is None:
                    self.unknown = unknown or f"model {quote(model)} has no price"
            else:
                self.spent += cost
        return cost


class CaseLedger:
    """Answers one case run's model calls down the ladder and counts them: ``provenance``
    (reused, supplied, live), ``calls`` (live calls made), ``cost_usd`` (None when a live
    call could not be priced), and ``replies`` (every reply the turn got, in call order,
    each ``{index, reply, request_sha256, provenance}``; ``accept --from-live`` writes
    them)."""

    def __init__(
        self, run: LiveRun, replies: list[dict[str, Any]], supply: dict[str, Any], where: str = ""
    ):
        self.run = run
        self.where = where
        self.recorded = replies
        self.supply = supply
        self.provenance = dict.fromkeys(PROVENANCE, 0)
        self.calls = 0
        self.cost_usd: float | None = 0.0
        self.replies: list[dict[str, Any]] = []

    def _got(self, index: int, sha: str, reply: dict[str, Any], how: str) -> dict[str, Any]:
        self.provenance[how] += 1
        self.replies.append(
            {"index": index, "reply": reply, "request_sha256": sha, "provenance": how}
        )
        return {"reply": reply}

    def answer(self, index: int, request: dict[str, Any], sha: str) -> dict[str, Any]:
        """``{"reply": reply}`` or ``{"stop": {code, stop_key, message}}`` for call ``index``
        (the module docstring's ladder)."""
        o = self.run.options
        if o.model is None and o.system is None and index < len(self.recorded):
            rec = self.recorded[index]
            if rec.get("request_sha256") == sha:
                reply = {k: rec[k] for k in ("message", "stop_reason", "usage")}
                return self._got(index, sha, reply, "reused")
        supplied = self.supply.get(f"model:{index}")
        if supplied is not None:
            from ...reference.model import normalize_reply

            return self._got(index, sha, normalize_reply(supplied), "supplied")
        return self._live(index, request, sha)

    def _live(self, index: int, request: dict[str, Any], sha: str) -> dict[str, Any]:
        from ...reference.egress import only_to_host

        model = str(request["model"])
        refused = self.run.reserve(model, index)
        if refused is not None:
            return dict(refused)
        self.calls += 1
        provider = self.run.provider()
        try:
            with only_to_host(*provider.hosts):
                answer = provider.call(request)
        except ProviderError as exc:
            if not exc.cost_known:  # no readable answer: the provider may have charged
                self._book(model, NO_USAGE, index, f"it got no readable answer ({exc})")
            return _answer("live_call_failed", index, f"live model call {index} failed: {exc}")
        answered = answer.model or model
        problem = usage_problem(answer.reply["usage"], answer.usage_reported)
        problem = problem or price_problem(self.run.options.prices, answered)
        reply = answer.reply if problem is None else {**answer.reply, "usage": dict(NO_USAGE)}
        self._book(answered, reply["usage"], index, problem)
        if problem is not None and self.run.options.max_cost_usd is not None:
            return _answer(
                "live_budget_exceeded",
                index,
                f"the cost of live model call {index} is unknown: {problem}; --max-cost-usd "
                "is set, so no further live call is made in this run",
            )
        return self._got(index, sha, reply, "live")

    def _book(self, model: str, usage: dict[str, Any], index: int, problem: str | None) -> None:
        """Book call ``index``'s cost (None and the run's spend unknown with a problem)."""
        where = f" of {self.where}" if self.where else ""
        unknown = None if problem is None else f"live model call {index}{where}: {problem}"
        cost = self.run.book(model, usage, unknown)
        if cost is None:
            self.cost_usd = None
        elif self.cost_usd is not None:
            self.cost_usd += cost

    def divergence(self) -> DivergenceRecord | None:
        """The first reply that differs from the recorded one (:func:`.said.reply_divergence`,
        as a report's ``divergence``), or None."""
        from .said import reply_divergence

        found = reply_divergence(self.recorded, self.replies)
        return None if found is None else found.to_json()

    def to_json(self) -> LiveSpend:
        """``{"provenance": {reused, supplied, live}, "calls", "cost_usd"}`` for a report."""
        cost = None if self.cost_usd is None else round(self.cost_usd, 6)
        counts = cast(LiveProvenance, dict(self.provenance))  # PROVENANCE's three keys
        return {"provenance": counts, "calls": self.calls, "cost_usd": cost}


def live_totals(live: LiveRun, results: Sequence[Any]) -> LiveTotals:
    """A live run's totals (spec/replay.md 11.6): provenance summed over the results, the
    live calls made, the spend (None when a call could not be priced), and the limits."""
    provenance: LiveProvenance = {"reused": 0, "supplied": 0, "live": 0}
    for r in results:
        for k, v in (r.live or {}).get("provenance", {}).items():
            provenance[k] += v  # type: ignore[literal-required]  # the three keys
    return {
        "provenance": provenance,
        "calls": live.calls,
        "cost_usd": round(live.spent, 6) if live.priced else None,
        "budget": live.options.budget,
        "max_cost_usd": live.options.max_cost_usd,
        "spend_unknown": live.unknown,
    }
