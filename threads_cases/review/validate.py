"""``validate``: every problem of a case directory, not only the first.

What the case loader checks (:func:`threads_cases.case.loader.inspect_case`: files, schemas,
paths, artifacts, each log with its dialect's reader, the fork point, the fingerprint), and
then what only ``validate`` checks (spec/case-format.md 8.2): every JSON file canonical, each
expected file against its state schema and the state its log reduces to, and the logs of the
different dialects holding the same events.

Reason codes: ``case_invalid``, ``format_unsupported``, ``log_invalid``, ``state_mismatch``,
``fingerprint_stale``, ``dialect_unknown`` (spec/case-format.md, spec/reason-codes.md).
"""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any, cast

from ..case.directory import UPSTREAM_CASE_MESSAGE, walk_case
from ..case.loader import Case, inspect_case
from ..core.errors import CaseError, Location, Problem
from ..core.matchers import diff_values
from ..core.shapes import State
from .files import _EXPECTED, _UNPARSED, CANONICAL_DIALECT, is_canonical


def _problem(
    code: str,
    message: str,
    file: Path | str,
    pointer: str | None = None,
    line: int | None = None,
    hint: str = "",
) -> Problem:
    return Problem(code, message, Location(str(file), line, pointer), hint)


#: the loader's problems after which nothing else of the directory is checked
STOPS_VALIDATION = ("not a case directory", UPSTREAM_CASE_MESSAGE)


def validate_case(path: Path) -> list[Problem]:
    """Every problem of a case directory (module docstring), in the loader's order, then
    the non-canonical files, the expected states and the logs that disagree."""
    case, problems = inspect_case(path)
    if case is None and problems and problems[0].message.startswith(STOPS_VALIDATION):
        return problems  # no case directory, or another tool's case: its one line
    files = dict(case.files) if case is not None else walk_case(path)[0]
    documents = dict(case.documents) if case is not None else {}
    problems.extend(_canonical_problems(path, files, documents))
    if case is not None:
        problems.extend(_state_problems(case))
        problems.extend(_dialect_problems(case))
    if all(fmt_fixes(p) for p in problems):
        return problems
    return [_not_to_fmt(p) if fmt_fixes(p) else p for p in problems]


#: what ``fmt`` fixes ends with this; the message sends the user to ``fmt``
TO_FMT = "; run `threads-cases fmt`"
#: ... and, when the case has other problems (``fmt`` refuses it), ends with this instead
PAST_FMT = (
    "; fix the case's other problems first: `threads-cases fmt` refuses a case that does not "
    "validate"
)


def fmt_fixes(problem: Problem) -> bool:
    """True for a problem ``fmt`` fixes: a stale fingerprint or a file that is not canonical."""
    return problem.code == "fingerprint_stale" or problem.message.startswith("not canonical")


def _not_to_fmt(problem: Problem) -> Problem:
    """``problem`` (one ``fmt`` fixes) worded for a case ``fmt`` refuses: it sends the user to
    the other problems, not to ``fmt``."""
    message = problem.message.removesuffix(TO_FMT)
    if message == problem.message:
        return problem  # already worded so (the loader's, when it saw the other problems)
    return dataclasses.replace(problem, message=message + PAST_FMT)


def _canonical_problems(
    path: Path, files: dict[str, bytes], documents: dict[str, Any]
) -> list[Problem]:
    """A problem for each JSON file that is not canonical; a file the loader parsed is not
    parsed again (memory stays a small multiple of the largest file: issue 19)."""
    out = []
    for rel, data in sorted(files.items()):
        if rel.startswith("artifacts/") or not rel.endswith((".json", ".jsonl")):
            continue
        try:
            if not is_canonical(rel, data, str(path / rel), documents.get(rel, _UNPARSED)):
                out.append(
                    _problem(
                        "case_invalid",
                        "not canonical" + TO_FMT,
                        path / rel,
                        hint="`threads-cases fmt` rewrites the files of a case that validates "
                        "canonically (spec/strict-json.md)",
                    )
                )
        except CaseError:
            pass  # reported by the loader
    return out


def _state_problems(case: Case) -> list[Problem]:
    """Each expected file against its state schema, and the state its log reduces to."""
    from ..core.dialects import get_dialect
    from ..core.reducer import Reducer
    from ..core.schemas import schema_problems

    out: list[Problem] = []
    names = [n for n in case.documents if _EXPECTED.match(n)]
    for impl in [n.removeprefix("expected.").removesuffix(".json") for n in names]:
        exp_path = case.expected_path(impl)
        expected = case.documents[exp_path.name]
        for pointer, message in schema_problems(expected, "state.schema.json", f"state.{impl}"):
            out.append(_problem("case_invalid", f"schema: {message}", exp_path, pointer))
        if impl not in case.logs:
            continue
        reduced = case.state(impl)  # the loader reduced each log it checked (issue 33)
        if reduced is None:
            reducer = Reducer()
            for ev in case.logs[impl]:
                reducer.apply(ev)  # the loader checked the reducer rules
            reduced = cast(State, reducer.state)
        state = get_dialect(impl).encode_state(reduced)
        for d in diff_values(expected, state):
            out.append(
                _problem(
                    "state_mismatch",
                    f"the log reduces to another state: {d.render()}",
                    exp_path,
                    d.pointer,
                )
            )
    return out


def _dialect_problems(case: Case) -> list[Problem]:
    """The logs of the different dialects hold the same (canonical) events."""
    logs = case.logs
    if len(logs) < 2:
        return []
    out: list[Problem] = []
    base_name = CANONICAL_DIALECT if CANONICAL_DIALECT in logs else next(iter(logs))
    base = logs[base_name]
    for other, evs in logs.items():
        if other == base_name:
            continue
        where = case.log_path(other)
        if len(evs) != len(base):
            out.append(
                _problem(
                    "case_invalid",
                    f"{len(evs)} events, where log.{base_name}.jsonl has {len(base)}",
                    where,
                )
            )
        for i, (a, b) in enumerate(zip(base, evs, strict=False)):
            diffs = diff_values(a, b)
            if diffs:
                shown = "; ".join(d.render() for d in diffs[:3])
                more = f" (and {len(diffs) - 3} more)" if len(diffs) > 3 else ""
                out.append(
                    _problem(
                        "case_invalid",
                        f"event differs from log.{base_name}.jsonl: {shown}{more}",
                        where,
                        diffs[0].pointer,
                        i + 1,
                    )
                )
    return out
