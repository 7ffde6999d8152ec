"""The arguments of ``save_case`` a caller can get wrong (spec/case-format.md 5): each is
refused with ``CaseError("invalid_request")`` (``log_invalid`` for an event of the wrong
shape) and a hint written for the API, never a TypeError, as
ts/src/case/save-arguments.ts does for ``saveCase``."""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import Any

from ..core.dialects import get_dialect
from ..core.errors import CaseError
from ..core.texts import quote
from .directory import CaseExpectation, check_case_name
from .sandbox import SandboxProvider


def expectation(expect: Any) -> CaseExpectation:
    from ..core.matchers import validate_matcher

    if expect is None:
        return CaseExpectation()
    if isinstance(expect, dict):
        expect = CaseExpectation(list(expect.get("must", [])), list(expect.get("expect", [])))
    if not isinstance(expect, CaseExpectation):
        raise CaseError(
            "invalid_request", "expect must be a CaseExpectation(must=[...], expect=[...])"
        )
    must = [validate_matcher(m, pointer=f"/must/{i}") for i, m in enumerate(expect.must)]
    exp = [validate_matcher(m, pointer=f"/expect/{i}") for i, m in enumerate(expect.expect)]
    return CaseExpectation(must, exp)


def checked_dialects(dialects: Any) -> list[str]:
    """The case's dialects: a non-empty list of distinct dialect names (case.json requires
    minItems 1 and uniqueItems; a case without them could never be loaded)."""
    if isinstance(dialects, str) or not isinstance(dialects, Sequence):
        raise CaseError("invalid_request", "dialects must be a list of dialect names")
    names = list(dialects)
    if not names:
        raise CaseError("invalid_request", "dialects must name at least one dialect")
    if len(set(names)) != len(names):
        raise CaseError("invalid_request", f"dialects {quote(names)} repeat a name")
    for name in names:
        if not isinstance(name, str):
            raise CaseError("invalid_request", f"dialect {quote(name)} is not a name")
        get_dialect(name)
    return names


def describe(value: Any) -> str:
    """A wrong argument in a message: its type, and its value when short (as TypeScript's)."""
    if value is None or isinstance(value, bool | int | float):
        return f"{type(value).__name__} {value!r}"
    if isinstance(value, str):
        return f"the string {quote(value if len(value) <= 40 else value[:40] + '...')}"
    return f"a {type(value).__name__}"


def check_types(
    dir: Any, sandbox_dir: Any, *, overwrite: Any, verify: Any, draft: Any = None
) -> None:
    """The arguments save_case passes to the file system and as flags: ``dir`` a folder path,
    ``sandbox_dir`` one or None, ``overwrite`` and ``verify`` booleans, ``draft`` one or
    None; anything else is
    ``invalid_request`` with a hint for the API (ts/src/case/save-arguments.ts), never a
    TypeError from deep inside a save."""
    if not isinstance(dir, str | os.PathLike) or dir == "":
        raise CaseError(
            "invalid_request",
            f"dir must be the folder to save the case in, not {describe(dir)}",
            hint="pass dir= the path of a folder you can write to, as a str or Path",
        )
    if sandbox_dir is not None and (
        not isinstance(sandbox_dir, str | os.PathLike) or sandbox_dir == ""
    ):
        raise CaseError(
            "invalid_request",
            f"sandbox_dir must be a folder path, not {describe(sandbox_dir)}",
            hint="pass sandbox_dir= the path of the folder holding the sandbox files "
            "(a str or Path), or leave it out",
        )
    for key, value in (("overwrite", overwrite), ("verify", verify)):
        if not isinstance(value, bool):
            raise CaseError(
                "invalid_request",
                f"{key} must be True or False, not {describe(value)}",
                hint=f"pass {key}=True or {key}=False, or leave it out",
            )
    if draft is not None and not isinstance(draft, bool):
        raise CaseError(
            "invalid_request",
            f"draft must be True, False or None, not {describe(draft)}",
            hint="pass draft=False to save no matchers, draft=True to add drafted ones, "
            "or leave it out",
        )


def check_options(
    name: str,
    dir: str | os.PathLike[str],
    expect: CaseExpectation | dict[str, Any] | None,
    at: str,
    external_effects: str,
    dialects: Sequence[str],
    sandbox: SandboxProvider,
) -> tuple[CaseExpectation, list[str]]:
    """The checked expectation and dialects; ``invalid_request`` for a bad name, ``dir``,
    option or ``at``, ``egress_policy_unsupported`` for a sandbox that cannot block the network."""
    check_case_name(name)
    check_dir(dir)
    if external_effects not in ("stub", "forbid"):
        raise CaseError(
            "invalid_request",
            f"external_effects must be 'stub' or 'forbid', not {quote(external_effects)}",
        )
    if not isinstance(at, str) or not at:
        raise CaseError("invalid_request", "at must be an event_id")
    exp = expectation(expect)
    checked = checked_dialects(dialects)
    if not sandbox.blocks_egress:
        raise CaseError(
            "egress_policy_unsupported",
            f"the thread's sandbox ({type(sandbox).__name__}) cannot block network access, "
            "and a replay must never reach the outside world",
        )
    return exp, checked


def check_dir(dir: str | os.PathLike[str]) -> None:
    """``dir`` is a folder to create the case in (case-format.md 5.2 step 1): not a file nor
    below one, and neither a case directory nor inside one (a case holds only its files)."""
    from ..core.statedir import out_folder_problem

    problem = out_folder_problem(dir, "the folder to create the case in")
    if problem is not None:
        raise CaseError("invalid_request", problem[0], hint=problem[1])


LOG_HINT = (
    "pass the log as a list of canonical events, such as thread.events or list(read_log(path))"
)


def check_log(events: Any) -> None:
    """The log's shape, as the TypeScript saveCase checks it: a sequence (``invalid_request``)
    of objects with string ``event_id``, ``type`` and ``ts`` and an object ``data``
    (``log_invalid`` at ``/<index>/...``), so a bad argument is refused, never a TypeError or
    KeyError. The schema is not checked (a log read with read_log was checked then)."""
    if not isinstance(events, Sequence) or isinstance(events, (str, bytes)):
        what = "None" if events is None else type(events).__name__
        raise CaseError(
            "invalid_request", f"the log must be a list of events, not {what}", hint=LOG_HINT
        )
    for index, event in enumerate(events):
        problem = envelope_problem(event)
        if problem is not None:
            pointer = f"/{index}{problem[0]}"
            raise CaseError(
                "log_invalid", f"event {pointer}: {problem[1]}", pointer=pointer, hint=LOG_HINT
            )


def envelope_problem(event: Any) -> tuple[str, str] | None:
    """The first envelope field a save reads that ``event`` lacks, as (pointer, message)."""
    if not isinstance(event, dict):
        return "", f"an event must be an object, not {type(event).__name__}"
    for key in ("event_id", "type", "ts"):
        if not isinstance(event.get(key), str):
            return f"/{key}", f"{key} must be a string, not {quote(event.get(key))}"
    if not isinstance(event.get("data"), dict):
        return "/data", f"data must be an object, not {quote(event.get('data'))}"
    return None
