"""Helpers for tests that use the ``threads_case`` fixture of the pytest plugin.

::

    import pytest
    from threads_cases.pytest import cases

    @pytest.mark.parametrize("threads_case", cases("cases"), indirect=True)
    def test_case(threads_case):
        ...

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
    from threads_cases.harness.discovery import discover

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


__all__ = ["cases"]
