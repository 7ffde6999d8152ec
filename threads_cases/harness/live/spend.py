"""When a live call's cost is unknown (spec/replay.md 11.4): the checks a provider's answer
goes through before its usage is priced.

A call's cost is known only when the provider answered it with a usage whose counts are all
integers from 0 to :data:`ABSURD_TOKENS` and the model the answer names (else the one
requested) has a price. Anything else makes the cost *unknown*: no usage, a negative count,
a count that is not an integer or is above the bound, an unpriced model, or a call that got
no readable answer (a timeout, a lost connection, a 200 whose body is not a reply: the
provider may have charged for it). An answer with an HTTP error status costs nothing.

Under ``--max-cost-usd`` the first unknown cost ends the run's live calls
(:class:`~.desk.LiveRun`): the spend can no longer be compared with the limit.
"""

from __future__ import annotations

from typing import Any

from ...core.texts import quote
from .prices import USAGE_RATES, PriceTable

#: a usage count above this many tokens in one call is not believed (no model reads or
#: writes 10^8 tokens in one call): the cost is then unknown, never priced
ABSURD_TOKENS = 100_000_000
#: the usage a reply carries into the turn when its reported usage is not believed
NO_USAGE = {"input_tokens": 0, "output_tokens": 0}


def usage_problem(usage: Any, reported: bool) -> str | None:
    """Why ``usage`` (a reply's, as the provider reported it) cannot be priced, or None.
    ``reported`` is False when the provider left usage out (or its two counts)."""
    if not reported or not isinstance(usage, dict):
        return "the provider did not report its usage"
    for key, _rate in USAGE_RATES:
        if key not in usage:
            continue
        value = usage[key]
        if not isinstance(value, int) or isinstance(value, bool):
            return f"the provider reported a usage {key} that is not an integer"
        if value < 0:
            return f"the provider reported a negative usage ({key} {value})"
        if value > ABSURD_TOKENS:
            return (
                f"the provider reported an absurd usage ({key} {value}, above "
                f"{ABSURD_TOKENS} tokens in one call)"
            )
    return None


def price_problem(prices: PriceTable, model: str) -> str | None:
    """Why a call answered by ``model`` cannot be priced (no price), or None."""
    if prices.price(model) is None:
        return f"the provider answered with model {quote(model)}, which has no price"
    return None
