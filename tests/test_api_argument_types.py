"""The Python API refuses arguments of a wrong type as the TypeScript one does
(ts/src/case/save-arguments.ts): ``save_case`` returns an ``invalid_request`` refusal (it
never raises for a refusal, README), ``run_case`` and ``run_suite`` raise
``CaseError("invalid_request")``; never a TypeError, and the hint speaks of the API's
arguments, not of the command line's ``--help``."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from conftest import EXPECT

import threads_cases
from threads_cases.core.errors import CaseError
from threads_cases.reference.thread import Thread


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"dir": 5}, "dir must be the folder to save the case in, not int 5"),
        ({"dir": None}, "dir must be the folder to save the case in, not NoneType None"),
        ({"dir": ""}, 'dir must be the folder to save the case in, not the string ""'),
        ({"dir": ["cases"]}, "dir must be the folder to save the case in, not a list"),
        ({"sandbox_dir": 5}, "sandbox_dir must be a folder path, not int 5"),
        ({"overwrite": "yes"}, 'overwrite must be True or False, not the string "yes"'),
        ({"verify": "no"}, 'verify must be True or False, not the string "no"'),
    ],
)
def test_save_case_refuses_wrong_argument_types(
    recorded: tuple[Thread, str], tmp_path: Path, options: dict[str, Any], message: str
) -> None:
    thread, at = recorded
    kwargs: dict[str, Any] = {"dir": tmp_path / "cases", **options}
    saved = thread.save_case("x", at=at, expect=EXPECT, **kwargs)
    assert not saved.ok
    assert saved.error is not None
    assert saved.error.code == "invalid_request"
    assert saved.error.message == message
    assert saved.error.hint and "--help" not in saved.error.hint
    assert not (tmp_path / "cases").exists()


def test_save_case_still_takes_a_path_and_a_string(
    recorded: tuple[Thread, str], tmp_path: Path
) -> None:
    thread, at = recorded
    assert thread.save_case("a", at=at, expect=EXPECT, dir=tmp_path).ok
    assert thread.save_case("b", at=at, expect=EXPECT, dir=str(tmp_path), verify=False).ok


@pytest.mark.parametrize(
    ("args", "kwargs", "message"),
    [
        ((5,), {}, "the case path must be a str or Path, not int 5"),
        ((None,), {}, "the case path must be a str or Path, not NoneType None"),
        (("c", 5), {}, "implementation must be a name or an Implementation, not int 5"),
        (("c",), {"supply": 5}, "supply must be a dict, not int"),
    ],
)
def test_run_case_raises_case_error_for_wrong_argument_types(
    args: tuple[Any, ...], kwargs: dict[str, Any], message: str
) -> None:
    with pytest.raises(CaseError) as err:
        threads_cases.run_case(*args, **kwargs)
    assert err.value.code == "invalid_request"
    assert err.value.message == message
    assert err.value.hint and "--help" not in err.value.hint


def test_run_case_still_runs_a_path(saved_case: Path) -> None:
    assert threads_cases.run_case(saved_case).verdict == "pass"
    assert threads_cases.run_case(str(saved_case), "threads-py").verdict == "pass"
