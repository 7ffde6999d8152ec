"""The pytest plugin's refusals worded as the CLI's (:mod:`.pytest_plugin`), among them the
refusal of a named implementation whose selected cases all leave its dialect out of case.json
``dialects`` (:func:`~.run_setup.check_named_dialects`, as ``threads-cases run`` refuses it),
checked on the collected items or, under pytest-xdist, on the node ids the workers collected.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

import pytest

from ..core.errors import CaseError


def usage_error(err: CaseError) -> pytest.UsageError:
    """A refusal of the session, worded as the CLI's: the ``error[code]`` line and the hint."""
    hint = f"\n  hint: {err.hint}" if err.hint else ""
    return pytest.UsageError(f"threads-cases: {err.render()}{hint}")


def runs_of_node_ids(
    ids: Iterable[str], root: Path, named: dict[str, str]
) -> list[tuple[Path, str, str]]:
    """(case folder, implementation, dialect) of each node id of a case item
    (``<case dir>/case.json::<name>[<impl>]``, relative to ``root``) of a ``named``
    implementation (name: dialect)."""
    runs = []
    for node_id in ids:
        path, _, name = node_id.partition("::")
        impl = name.rpartition("[")[2].removesuffix("]")
        if Path(path).name == "case.json" and name.endswith("]") and impl in named:
            runs.append((Path(root, path).parent, impl, named[impl]))
    return runs


def check_named(runs: list[tuple[Path, str, str]]) -> None:
    """Raise the usage error of a named implementation that none of its cases lists."""
    from .run_setup import check_named_dialects

    try:
        check_named_dialects(runs)
    except CaseError as err:
        raise usage_error(err) from None
