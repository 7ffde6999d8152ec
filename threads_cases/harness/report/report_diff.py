"""Two run reports compared result by result (spec/reports.md section 8): the results keyed by
(case folder name, implementation) and the ones whose verdict, reasons or pass rate differ.
``threads-cases diff`` of two reports (:mod:`threads_cases.review.filediff`) and the
compliance page's comparison with a previous report (:mod:`..check.compliance`) both use it.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..check.divergence import ABSENT


def report_results(lines: Iterable[Any]) -> dict[tuple[str, str], dict[str, Any]]:
    """The result lines among ``lines`` by (case folder name, implementation)."""
    out = {}
    for line in lines:
        if isinstance(line, dict) and line.get("kind") == "result":
            # the case folder's name, not its path: reports of moved suites still pair up
            out[(Path(str(line.get("path"))).name, str(line.get("implementation")))] = line
    return out


@dataclass(frozen=True)
class ResultChange:
    """One result that differs between report A and report B: ``index`` (its place in A's
    order, then B's), ``case`` (the case folder's name), ``implementation``, ``pointer``
    (``/verdict``, ``/reasons``, or ``""`` for a result on one side only) and ``before`` /
    ``after`` (``{"verdict", "reasons"}``, ``None`` on the side that lacks it)."""

    index: int
    case: str
    implementation: str
    pointer: str
    before: dict[str, Any] | None
    after: dict[str, Any] | None
    #: for two repeated results: the pass rate's change against the noise
    #: (:func:`threads_cases.harness.run.noise.rate_change`), else None
    rate: dict[str, Any] | None = None

    @property
    def key(self) -> tuple[str, str]:
        return (self.case, self.implementation)

    @property
    def label(self) -> str:
        return f"{self.case} [{self.implementation}]"

    def values(self) -> tuple[Any, Any]:
        """The two values at :attr:`pointer` (``ABSENT`` for a missing result)."""
        if self.before is None or self.after is None:
            return _or_absent(self.before), _or_absent(self.after)
        if self.pointer == "/repeat/rate" and self.rate is not None:
            return self.rate["a"], self.rate["b"]
        key = self.pointer.lstrip("/")
        return self.before[key], self.after[key]


def _or_absent(value: dict[str, Any] | None) -> Any:
    return ABSENT if value is None else value


def compare_results(
    ra: dict[tuple[str, str], dict[str, Any]], rb: dict[tuple[str, str], dict[str, Any]]
) -> list[ResultChange]:
    """The results whose verdict, or else reasons, or else (two repeated results) pass rate
    differ, or that exist on one side only, keyed as :func:`report_results` keys them; in
    A's order, then B's. Each change of two repeated results carries its rate change
    against the noise (spec/replay.md 11.10)."""
    from ..run.noise import rate_change

    keys = list(ra) + [k for k in rb if k not in ra]
    out = []
    for i, key in enumerate(keys):
        x, y = ra.get(key), rb.get(key)
        rate = None if x is None or y is None else rate_change(x.get("repeat"), y.get("repeat"))
        if x is None or y is None:
            pointer = ""
        elif x["verdict"] != y["verdict"]:
            pointer = "/verdict"
        elif x["reasons"] != y["reasons"]:
            pointer = "/reasons"
        elif rate is not None and rate["delta"] != 0:
            pointer = "/repeat/rate"
        else:
            continue
        out.append(ResultChange(i, key[0], key[1], pointer, _brief(x), _brief(y), rate))
    return out


def _brief(result: dict[str, Any] | None) -> dict[str, Any] | None:
    return None if result is None else {k: result[k] for k in ("verdict", "reasons")}
