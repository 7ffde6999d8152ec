"""The options of ``run --live`` (spec/replay.md section 11) and the :class:`LiveRun` they
make. Kept apart from run_commands.py: the command only passes them through."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Literal

import typer

from ..core.errors import CaseError
from .params import check_file, checked

if TYPE_CHECKING:
    from ..harness.live.desk import LiveRun

LiveOpt = Annotated[
    bool,
    typer.Option(
        "--live",
        help="Answer the turn's model calls live: the recorded reply when the request is "
        "unchanged, else --supply, else a real provider call (within the budgets).",
    ),
]
ModelOpt = Annotated[
    str | None, typer.Option("--model", help="With --live: ask this model instead.")
]
SystemFileOpt = Annotated[
    Path | None,
    typer.Option(
        "--system-file",
        help="With --live: this file's text (UTF-8) replaces the system prompt.",
        callback=checked(check_file),
    ),
]
ProviderOpt = Annotated[
    Literal["anthropic", "openai"],
    typer.Option("--provider", help="With --live: the provider's API (its official SDK)."),
]
BaseUrlOpt = Annotated[
    str | None,
    typer.Option(
        "--base-url",
        help="With --live: the provider's base URL (default: the SDK's, or "
        "ANTHROPIC_BASE_URL / OPENAI_BASE_URL).",
    ),
]
BudgetOpt = Annotated[
    int,
    typer.Option("--live-budget", min=0, help="With --live: at most N live model calls."),
]
MaxCostOpt = Annotated[
    float | None,
    typer.Option(
        "--max-cost-usd",
        min=0.0,
        help="With --live: no live call once the spend reaches X USD (priced from the "
        "price table; a model without a price stops).",
    ),
]
PricesOpt = Annotated[
    Path | None,
    typer.Option(
        "--prices",
        help="With --live: a price table (schemas/prices.schema.json) over the shipped one.",
        callback=checked(check_file),
    ),
]
AllowWriteOpt = Annotated[
    list[str] | None,
    typer.Option(
        "--allow-write",
        help="With --live: tool:<name> (repeatable): the agent's own handler may run this "
        "write tool when no stub answers the call.",
    ),
]
LiveTimeoutOpt = Annotated[
    float,
    typer.Option("--live-timeout", min=0.01, help="With --live: seconds per provider attempt."),
]
LiveRetriesOpt = Annotated[
    int,
    typer.Option("--live-retries", min=0, help="With --live: the SDK's retries per call."),
]


def _allowed(values: list[str]) -> frozenset[str]:
    names = set()
    for v in values:
        kind, _, name = v.partition(":")
        if kind != "tool" or not name:
            raise CaseError(
                "invalid_request",
                f"--allow-write {v!r} must be tool:<name>",
                hint="for example --allow-write tool:send_email",
            )
        names.add(name)
    return frozenset(names)


def _system(path: Path) -> str:
    try:
        return path.read_bytes().decode("utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise CaseError(
            "invalid_request", f"cannot read it as UTF-8 text: {exc}", file=str(path)
        ) from None


def build_live(
    live: bool,
    *,
    model: str | None,
    system_file: Path | None,
    provider: str,
    base_url: str | None,
    budget: int,
    max_cost_usd: float | None,
    prices: Path | None,
    allow_write: list[str] | None,
    timeout: float,
    retries: int,
) -> LiveRun | None:
    """The run's ``LiveRun`` (checked, its provider client open), or None without
    ``--live``. Raises ``CaseError``: ``invalid_request`` (a live option without --live, a
    bad value), ``live_unavailable`` (no SDK, no API key)."""
    given = [
        name
        for name, value, default in (
            ("--model", model, None),
            ("--system-file", system_file, None),
            ("--provider", provider, "anthropic"),
            ("--base-url", base_url, None),
            ("--live-budget", budget, 20),
            ("--max-cost-usd", max_cost_usd, None),
            ("--prices", prices, None),
            ("--allow-write", allow_write, None),
            ("--live-timeout", timeout, 600.0),
            ("--live-retries", retries, 2),
        )
        if value != default
    ]
    if not live:
        if given:
            raise CaseError(
                "invalid_request",
                f"{', '.join(given)} only apply with --live",
                hint="add --live, or leave them out",
            )
        return None
    from ..harness.live.desk import LiveOptions, LiveRun
    from ..harness.live.prices import load_prices
    from ..harness.live.providers import ClientSettings

    options = LiveOptions(
        settings=ClientSettings(provider, base_url, timeout, retries),
        model=model,
        system=None if system_file is None else _system(system_file),
        budget=budget,
        max_cost_usd=max_cost_usd,
        prices=load_prices(prices),
        allow_write=_allowed(allow_write or []),
    )
    run = LiveRun(options)
    run.check()
    return run
