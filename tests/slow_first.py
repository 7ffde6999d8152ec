"""The slowest work first under pytest-xdist (``--dist loadgroup``), so that no long group
starts last and leaves one core idle while the other finishes it.

xdist's load-group scheduler hands out work units (an ``xdist_group``, or else one test) in
collection order, so the items are sorted, stably, by the time their unit took before: an
``xdist_group`` by its own total, any other test by its module's. The times come from
``tests/durations.json`` when it exists; a run with ``THREADS_CASES_RECORD_DURATIONS=1``
(``THREADS_CASES_RECORD_DURATIONS=1 nox -s tests``) writes that file at its end, from every
test's setup, call and teardown times. Without the file, the groups (each a shared, heavy
set-up: the README's wheels, the site, the live providers) go first. Every worker sorts the
same collection the same way, as xdist requires.
"""

from __future__ import annotations

import json
import os
from collections import defaultdict
from pathlib import Path

import pytest

DURATIONS = Path(__file__).with_name("durations.json")
RECORD = "THREADS_CASES_RECORD_DURATIONS"
#: The time a group is taken to need when the file does not know it (seconds)
UNKNOWN_GROUP_S = 30.0


def unit_of(nodeid: str) -> str:
    """``group:<name>`` for an item of an xdist group (its node id ends ``@<name>``), else
    its module's path."""
    tail = nodeid.rsplit("]", 1)[-1] if "[" in nodeid else nodeid
    if "@" in tail:
        return "group:" + tail.rsplit("@", 1)[1]
    return nodeid.split("::", 1)[0]


def _known() -> dict[str, float]:
    try:
        data = json.loads(DURATIONS.read_text("utf-8"))
    except (OSError, ValueError):
        return {}
    return {str(k): float(v) for k, v in data.items()} if isinstance(data, dict) else {}


def order(items: list[pytest.Item]) -> None:
    """Sort ``items`` in place, the slowest units first (stable within a unit)."""
    known = _known()

    def cost(item: pytest.Item) -> float:
        group = item.get_closest_marker("xdist_group")
        if group is not None:  # xdist adds "@<name>" to the node id after this hook
            unit = "group:" + str(group.args[0] if group.args else group.kwargs.get("name"))
        else:
            unit = unit_of(item.nodeid)
        if unit in known:
            return known[unit]
        return UNKNOWN_GROUP_S if unit.startswith("group:") else 0.0

    items.sort(key=lambda item: -cost(item))


class Recorder:
    """Adds up each unit's test times in the controller; writes DURATIONS at the end."""

    def __init__(self) -> None:
        self.seconds: defaultdict[str, float] = defaultdict(float)

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        self.seconds[unit_of(report.nodeid)] += report.duration

    def pytest_sessionfinish(self, session: pytest.Session) -> None:
        if self.seconds and not hasattr(session.config, "workerinput"):
            rounded = {k: round(v, 1) for k, v in sorted(self.seconds.items())}
            DURATIONS.write_text(json.dumps(rounded, indent=1) + "\n", "utf-8")


def register(config: pytest.Config) -> None:
    """Record durations in this run when ``THREADS_CASES_RECORD_DURATIONS`` says so."""
    if os.environ.get(RECORD) and not hasattr(config, "workerinput"):
        config.pluginmanager.register(Recorder(), "threads-cases-durations")
