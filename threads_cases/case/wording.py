"""How a save's hints name its switches: the Python API's keywords or a command's flags.

The library words a hint for whoever acts on it without knowing who that is, so it is told:
the API's hints (the default) name the keyword beside the flag, as every implementation's
API words them (``pass --overwrite (overwrite=True) to replace it``, pinned by
spec/conformance/save-errors/); a command line asks for :data:`CLI` and its hints name only
its flag (``pass --overwrite to replace it``). The command line passes that choice down
(``save_log(..., hints="cli")``); the library never imports the command line.
"""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING, Literal

if TYPE_CHECKING:  # the writer and the verifier import this module: nothing at run time
    from .save import SaveResult

#: who reads a hint: the Python API (keywords) or the command line (flags)
Hints = Literal["api", "cli"]
API: Hints = "api"
CLI: Hints = "cli"

#: ``case_exists`` of a different case already there (case/writer.py), API wording
OVERWRITE_HINT = "pass --overwrite (overwrite=True) to replace it"
#: ``replay_failed`` with no remedy of its own (case/verify.py), API wording
NO_VERIFY_HINT = "save with --no-verify (verify=False) to keep a case that fails today on purpose"

#: each API hint above -> the same hint naming only the command's flag
_FLAGS = {
    OVERWRITE_HINT: "pass --overwrite to replace it",
    NO_VERIFY_HINT: "save with --no-verify to keep a case that fails today on purpose",
}


def hint_for(hint: str, hints: Hints) -> str:
    """``hint`` worded for ``hints``: one of this module's API hints becomes its command-line
    form under :data:`CLI`; every other hint is the same for both."""
    return _FLAGS.get(hint, hint) if hints == CLI else hint


def worded(result: SaveResult, hints: Hints) -> SaveResult:
    """``result`` with its refusal's hint worded for ``hints`` (:func:`hint_for`)."""
    err = result.error
    if err is None or hint_for(err.hint, hints) == err.hint:
        return result
    fixed = dataclasses.replace(err, hint=hint_for(err.hint, hints))
    return dataclasses.replace(result, error=fixed)
