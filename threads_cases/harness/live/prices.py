"""What a live model call costs (spec/replay.md 11.5).

A price table (``schemas/prices.schema.json``) gives, per model, USD per million tokens for
``input``, ``output``, ``cache_write`` and ``cache_read``, and optionally a ``long_context``
tier: when a call's input (``input_tokens`` + cache write + cache read tokens) is above its
``above_input_tokens``, the *whole* call is priced at the tier's rates. The package ships one
(``prices.json`` beside this module); ``--prices FILE`` adds models or replaces them.

A model is looked up by its exact name, then without a date suffix (``-YYYYMMDD`` or
``-YYYY-MM-DD``), so ``claude-sonnet-4-5-20250929`` is priced as ``claude-sonnet-4-5``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ...core.errors import CaseError
from ...core.strictjson import read_json_file

SHIPPED = Path(__file__).with_name("prices.json")
_DATED = re.compile(r"-(\d{8}|\d{4}-\d{2}-\d{2})$")
#: usage keys of a reply and the rate that prices each
USAGE_RATES = (
    ("input_tokens", "input"),
    ("output_tokens", "output"),
    ("cache_creation_input_tokens", "cache_write"),
    ("cache_read_input_tokens", "cache_read"),
)


@dataclass(frozen=True)
class PriceTable:
    """``models``: model name -> its price entry (the schema's ``models`` values)."""

    models: dict[str, dict[str, Any]]

    def price(self, model: str) -> dict[str, Any] | None:
        """The entry for ``model`` (exact, then without a date suffix), or None."""
        if model in self.models:
            return self.models[model]
        return self.models.get(_DATED.sub("", model))

    def cost(self, model: str, usage: dict[str, Any]) -> float | None:
        """USD for one call's ``usage``, or None when ``model`` has no price."""
        entry = self.price(model)
        if entry is None:
            return None
        tokens = {k: _count(usage.get(k)) for k, _ in USAGE_RATES}
        rates = entry
        tier = entry.get("long_context")
        prompt = tokens["input_tokens"] + tokens["cache_creation_input_tokens"]
        prompt += tokens["cache_read_input_tokens"]
        if tier is not None and prompt > tier["above_input_tokens"]:
            rates = tier
        micro = sum(tokens[k] * float(rates[r]) for k, r in USAGE_RATES)
        return micro / 1_000_000

    def merged(self, other: PriceTable) -> PriceTable:
        """This table with ``other``'s models added or replacing."""
        return PriceTable({**self.models, **other.models})


def _count(value: Any) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else 0


def read_prices(path: str | Path) -> PriceTable:
    """Read and check a price table. Raises ``CaseError("invalid_request")`` with the file and
    JSON pointer of the first problem (``json_invalid`` for a file that is not strict JSON)."""
    from ...core.schemas import schema_problems

    doc = read_json_file(Path(path))
    problems = schema_problems(doc, "prices.schema.json")
    if problems:
        pointer, text = problems[0]
        raise CaseError(
            "invalid_request",
            f"not a price table: {text}",
            file=str(path),
            pointer=pointer,
            hint='{"format": 1, "models": {"<model>": {"input": 3.0, "output": 15.0, '
            '"cache_write": 3.75, "cache_read": 0.3}}} (USD per million tokens)',
        )
    return PriceTable(dict(doc["models"]))


def load_prices(extra: str | Path | None = None) -> PriceTable:
    """The shipped table, with ``extra`` (``--prices FILE``) on top when given."""
    table = read_prices(SHIPPED)
    return table if extra is None else table.merged(read_prices(extra))
