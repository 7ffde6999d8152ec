"""Helpers for tests that use the ``threads_case`` fixture of the pytest plugin.

::

    import pytest
    from threads_cases.pytest import cases

    @pytest.mark.parametrize("threads_case", cases("cases"), indirect=True)
    def test_case(threads_case):
        assert_passes(threads_case, agent="my_agent:agent")

This module is named ``pytest`` inside the package; it (and the package) only ever use
absolute imports, so ``import pytest`` below is the real pytest.
"""

from __future__ import annotations

import inspect
from pathlib import Path
from typing import Any

import pytest


def cases(directory: str | Path, *, marks: Any = ()) -> list[Any]:
    """One ``pytest.param(<case path>, id=<case name>)`` per case directory under
    ``directory`` (found as ``threads-cases run`` finds them), sorted by path.

    A relative ``directory`` is taken from the current folder, or, when it does not exist
    there, from the folder of the test file calling ``cases``. Raises ``ValueError`` when
    no folder is found (so a typo fails collection instead of silently running nothing).
    """
    from threads_cases.case.directory import peek_case_name
    from threads_cases.case.discovery import discover

    base = Path(directory)
    if not base.is_absolute() and not base.exists():
        caller = inspect.stack()[1].filename
        candidate = Path(caller).resolve().parent / base
        if candidate.exists():
            base = candidate
    if not base.exists():
        raise ValueError(f"threads_cases.pytest.cases: no such folder: {directory}")
    out = []
    for path in discover([base]):
        name = peek_case_name(path) or path.name  # only case.json's name: loaded when run
        out.append(pytest.param(str(path), id=name, marks=marks))
    return out


def assert_passes(
    case: Any,
    agent: Any = None,
    *,
    implementation: Any = "threads-py",
    strict: bool = False,
    app_dir: Any = (),
) -> Any:
    """Run ``case`` (the ``threads_case`` fixture's case, or a case path) and fail the test
    with the result as text (verdict, what differs in the agent, the first divergence, each
    failing check: ``str(CaseResult)``) unless it passes (``drifted`` fails too with
    ``strict``). ``agent``, ``implementation`` and ``app_dir`` are those of
    :func:`threads_cases.run_case`: your own agent (an ``AgentSpec``, ``"my_agent:agent"``,
    or ``"./agent.mjs#agent"`` with ``implementation="threads-ts"``). Returns the
    :class:`~threads_cases.harness.run.runner.CaseResult` when it passes."""
    from threads_cases.harness.run.runner import run_case

    path = getattr(case, "path", case)
    result = run_case(path, implementation, agent, app_dir=app_dir)
    if not result.passed(strict):
        pytest.fail(str(result), pytrace=False)
    return result


__all__ = ["assert_passes", "cases"]
