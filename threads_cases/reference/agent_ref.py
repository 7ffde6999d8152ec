"""Agent references: naming the user's own agent so any implementation can load it
(spec/replay.md section 8, spec/driver-protocol.md 2.5.2).

An :class:`AgentRef` is what ``--agent`` and ``agent`` under ``[tool.threads-cases]`` hold
for one implementation, and what the ``agent`` field of a ``replay`` request carries::

    {"ref": "notes_agent:agent", "app_dir": ["/abs/project/src"]}      # threads-py
    {"ref": "./agents/notes.mjs#notesBot", "app_dir": ["/abs/project"]} # threads-ts

The reference is in the syntax of the implementation's language and opaque to the harness.
For Python (:func:`load_python_agent`) it is ``module:attribute`` (the attribute may be
dotted): the module is imported with each ``app_dir`` folder first on ``sys.path``, and the
attribute is an :class:`~threads_cases.reference.agent.AgentSpec` or a callable taking no
argument that returns one. Anything that goes wrong is ``CaseError("agent_unavailable")``
naming the reference, the module and the first line of the error, never a traceback.
"""

from __future__ import annotations

import importlib
import re
import sys
import threading
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal, TypedDict

from ..core.errors import CaseError
from ..core.shapes import JsonObject
from ..core.texts import quote
from .agent import AgentSpec

Language = Literal["python", "javascript"]

#: ``module:attribute``, each a dotted Python name
_NAME = r"[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)*"
PYTHON_REF = re.compile(f"{_NAME}:{_NAME}")
#: file name endings that make a reference a JavaScript module
JS_SUFFIXES = (".js", ".mjs", ".cjs", ".ts", ".mts", ".cts")


def ref_language(ref: str) -> Language | None:
    """The language a reference is written for: ``"javascript"`` when it holds ``#`` or
    ``/`` or its module ends with a JavaScript or TypeScript suffix, ``"python"`` when it is
    ``module:attribute``, else None (not a reference; a ``.py`` file path among them)."""
    module = ref.split("#", 1)[0]
    if module.endswith(".py"):  # a Python file: Python agents are named module:attribute
        return None
    if "#" in ref or "/" in ref or module.endswith(JS_SUFFIXES):
        return "javascript"
    if PYTHON_REF.fullmatch(ref):
        return "python"
    return None


@dataclass(frozen=True)
class AgentRef:
    """One implementation's agent: ``ref`` in its language, ``app_dir`` the folders (absolute
    paths, in order) its imports are looked up in."""

    ref: str
    app_dir: tuple[str, ...] = ()

    def to_request(self) -> AgentRequest:
        """The ``agent`` field of a ``replay`` request (schemas/driver/replay.request)."""
        return {"ref": self.ref, "app_dir": list(self.app_dir)}

    @classmethod
    def from_request(cls, body: JsonObject) -> AgentRef:
        return cls(str(body["ref"]), tuple(str(d) for d in body.get("app_dir") or ()))


class AgentRequest(TypedDict):
    """The ``agent`` field of a ``replay`` request (spec/driver-protocol.md 2.5.2): the
    reference and the folders its imports are found in."""

    ref: str
    app_dir: list[str]


def unavailable(ref: str, what: str) -> CaseError:
    """``agent_unavailable`` for ``ref``: ``cannot load the agent <json(ref)>: <what>``."""
    return CaseError("agent_unavailable", f"cannot load the agent {quote(ref)}: {what}")


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return f"{type(exc).__name__}: {text[0][:300]}" if text else type(exc).__name__


def _agents_in(value: Any) -> str:
    """`` (its agents: "a", "b")`` naming the AgentSpec attributes of ``value``, or ``""``."""
    names = sorted(k for k, v in vars(value).items() if isinstance(v, AgentSpec))
    return f" (its agents: {', '.join(quote(n) for n in names)})" if names else ""


_cache: dict[AgentRef, AgentSpec] = {}
_lock = threading.Lock()


def load_python_agent(ref: str | AgentRef, app_dir: Sequence[str] = ()) -> AgentSpec:
    """Import the agent named ``module:attribute`` (once per process per reference).

    Each ``app_dir`` folder is put first on ``sys.path`` (in order) before the import. The
    attribute is an :class:`AgentSpec`, or a callable of no argument returning one (called
    once). Raises ``CaseError("agent_unavailable")``: a reference that is not
    ``module:attribute``, a module that cannot be imported (the message names it and gives
    the first line of the error), a missing attribute, or a value that is no agent."""
    key = ref if isinstance(ref, AgentRef) else AgentRef(ref, tuple(app_dir))
    with _lock:
        if key in _cache:
            return _cache[key]
        agent = _load(key)
        _cache[key] = agent
        return agent


def _load(key: AgentRef) -> AgentSpec:
    if ref_language(key.ref) != "python":
        raise unavailable(key.ref, "threads-py takes module:attribute (such as my_agent:agent)")
    module_name, attr = key.ref.split(":", 1)
    for folder in reversed(key.app_dir):
        if folder not in sys.path:
            sys.path.insert(0, folder)
    try:
        value: Any = importlib.import_module(module_name)
    except BaseException as exc:  # SystemExit and KeyboardInterrupt of an import too
        if isinstance(exc, KeyboardInterrupt):
            raise
        what = f"importing {quote(module_name)} failed: {_first_line(exc)}"
        raise unavailable(key.ref, what) from None
    for part in attr.split("."):
        if not hasattr(value, part):
            what = f"{quote(module_name)} has no attribute {quote(attr)}{_agents_in(value)}"
            raise unavailable(key.ref, what)
        value = getattr(value, part)
    if not isinstance(value, AgentSpec) and callable(value):
        try:
            value = value()
        except Exception as exc:
            what = f"calling {quote(attr)} failed: {_first_line(exc)}"
            raise unavailable(key.ref, what) from None
    if not isinstance(value, AgentSpec):
        raise unavailable(
            key.ref,
            f"{quote(attr)} is a {type(value).__name__}, not an AgentSpec "
            "(or a function returning one)",
        )
    return value
