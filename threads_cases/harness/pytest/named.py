"""The pytest plugin's refusals worded as the CLI's (:mod:`.plugin`): a
``--threads-cases`` path that is missing, a file, or holds no case (as ``threads-cases run``
refuses "no cases found"), and the
refusal of a named implementation whose selected cases all leave its dialect out of case.json
``dialects`` (:func:`~.setup.check_named_dialects`, as ``threads-cases run`` refuses it),
checked on the collected items or, under pytest-xdist, on the node ids the workers collected.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

import pytest

from ...core.errors import CaseError


def usage_error(err: CaseError) -> pytest.UsageError:
    """A refusal of the session, worded as the CLI's: the ``error[code]`` line and the hint."""
    from .text import pytest_wording

    hint = f"\n  hint: {pytest_wording(err.hint)}" if err.hint else ""
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
    from ..run.setup import check_named_dialects

    try:
        check_named_dialects(runs)
    except CaseError as err:
        raise usage_error(err) from None


def case_dir(path: Path) -> Path:
    """A path given to ``--threads-cases`` (or ``threads_cases_paths``): a case's case.json
    stands for its case, as `run` reads it (:func:`.discovery.discover`)."""
    return path.parent if path.name == "case.json" and path.is_file() else path


def check_case_dirs(dirs: list[Path]) -> None:
    """Raise the usage error of a path that does not exist or is a file, or of folders that
    hold no case (``threads-cases run`` refuses "no cases found", exit 2; else pytest would
    end "no tests ran", exit 5, with no reason)."""
    from ...case.discovery import NO_CASES_HINT, has_cases

    expected = "pass a folder holding case directories (each with a case.json)"
    for d in dirs:
        if not d.exists():
            missing = CaseError("invalid_request", "no such file or folder", file=str(d))
            missing.hint = expected
            raise usage_error(missing)
        if not d.is_dir():
            what = "is a file, not a folder holding cases"
            raise usage_error(CaseError("invalid_request", what, file=str(d), hint=expected))
    if not has_cases(dirs):  # stops at the first case: pytest's collection walks them
        where = str(dirs[0]) if len(dirs) == 1 else None
        err = CaseError("invalid_request", "no cases found", file=where, hint=NO_CASES_HINT)
        raise usage_error(err)
