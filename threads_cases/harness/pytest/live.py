"""The pytest plugin's live session (:mod:`.plugin`): its ``--threads-cases-live*``
options made into a :class:`~threads_cases.harness.live.desk.LiveRun`, and
``--threads-cases-repeat`` / ``--threads-cases-fail-under-rate`` into a
:class:`~threads_cases.harness.run.repeat.Repeat` (spec/replay.md 11, 11.9); a refusal is a
usage error worded as ``run``'s."""

from __future__ import annotations

from typing import Any

import pytest


def live_run(config: pytest.Config) -> Any:
    """The session's :class:`~threads_cases.harness.live.desk.LiveRun` (a usage error when
    the SDK or the key is missing)."""
    from threads_cases.core.errors import CaseError
    from threads_cases.harness.live.desk import LiveOptions, LiveRun
    from threads_cases.harness.live.prices import load_prices
    from threads_cases.harness.live.providers import ClientSettings

    options = LiveOptions(
        settings=ClientSettings(
            config.getoption("threads_cases_provider"), config.getoption("threads_cases_base_url")
        ),
        model=config.getoption("threads_cases_model"),
        budget=config.getoption("threads_cases_live_budget"),
        prices=load_prices(),
    )
    run = LiveRun(options)
    try:
        run.check()
    except CaseError as err:
        raise pytest.UsageError(f"threads-cases: {err.code}: {err.message}") from None
    return run


def repeat_of(config: pytest.Config, live: Any) -> Any:
    """The session's :class:`~threads_cases.harness.run.repeat.Repeat` (None for one run), refused
    as ``run`` refuses it (a usage error)."""
    from threads_cases.core.errors import CaseError
    from threads_cases.harness.run.repeat import repeat_for

    try:
        return repeat_for(
            config.getoption("threads_cases_repeat"),
            config.getoption("threads_cases_fail_under_rate"),
            live,
            None,
        )
    except CaseError as err:
        raise pytest.UsageError(f"threads-cases: {err.code}: {err.message}") from None
