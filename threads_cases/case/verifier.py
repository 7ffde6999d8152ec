"""Who replays a case that ``save`` built before it is written (spec/case-format.md 5.10).

The case layer cannot replay a case itself: replaying is the harness's work, two layers up
(tests/test_layers.py). A save is handed its :data:`Verifier` instead: explicitly
(``save_case(..., verifier=...)``), or the default the API layer registers when the package
is imported (``threads_cases/__init__.py`` registers the harness's
:func:`threads_cases.harness.run.verify.verify_case_dir` with :func:`use_verifier`).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

#: ``verifier(path, dialects, agent)``: replay the case directory ``path`` (saved in
#: ``dialects``, with ``agent``: an ``AgentSpec``, a ``"module:attribute"`` reference, or
#: ``None``) and raise ``CaseError("replay_failed")`` when its first run would not pass.
Verifier = Callable[[Path, Sequence[str], Any], None]

_registered: list[Verifier] = []


def use_verifier(verifier: Verifier) -> None:
    """Make ``verifier`` the one a save uses when it is given none (the API layer's call)."""
    _registered[:] = [verifier]


def default_verifier() -> Verifier:
    """The verifier :func:`use_verifier` registered. Raises ``LookupError`` when there is none
    (only possible when the package's ``__init__`` did not run, which Python never allows)."""
    if not _registered:
        raise LookupError("no case verifier registered (threads_cases/__init__.py registers it)")
    return _registered[0]
