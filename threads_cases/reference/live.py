"""A live turn on the reference runtime: model calls answered by the harness (spec/replay.md,
section 11, "Live rung").

A live turn replays a case's turn as section 3 says, except that:

* every model call is *asked of the harness*: ``ask(index, request, request_sha256)`` returns
  ``{"reply": <reply>}`` or ``{"stop": {"code", "stop_key", "message"}}``. The harness
  resolves the call down its ladder (reused, supplied, live; harness/live/desk.py); the
  runtime never talks to a provider;
* the agent's ``model`` and ``system`` may be replaced (``--model``, ``--system-file``)
  before the turn, so the requests carry them;
* an external call no stub (or supply) answers is run by the agent's own handler when it
  has one and its effect is ``read`` or ``pure``; a ``write`` effect stops with
  ``write_not_allowed`` unless the tool's name is in ``allow_write``; anything else stops
  with ``missing_stub``. Stubs are matched by tool name and canonical input, never by the
  tool-use id (a live reply brings new ids).

The driver protocol carries the same thing: a ``replay`` request with ``live``
``{model?, system?, allow_write?}`` (spec/driver-protocol.md 2.5.1).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from ..core.errors import CaseError
from ..core.request import request_sha256
from ..core.texts import quote
from .agent import AgentSpec, ToolResult
from .model import normalize_reply

#: ``ask(index, request, request_sha256) -> {"reply": reply} | {"stop": stop}``
AskModel = Callable[[int, dict[str, Any], str], dict[str, Any]]


class LiveStop(CaseError):
    """A stop the harness answered for a model call (``live_budget_exceeded``,
    ``live_call_failed``, ...), with its ``stop_key``."""

    def __init__(self, code: str, message: str, stop_key: str) -> None:
        super().__init__(code, message)
        self.stop_key = stop_key


class WriteNotAllowed(CaseError):
    """A live external call to a tool whose effect is ``write``, not allowed with
    ``--allow-write tool:<name>``: ``write_not_allowed``, stop key ``tool:<name>``."""

    def __init__(self, name: str) -> None:
        super().__init__(
            "write_not_allowed",
            f"the live turn called external tool {quote(name)}, whose effect is write, with "
            "an input no stub answers",
            hint=f"record the call as a stub, or allow it with --allow-write tool:{name}",
        )
        self.stop_key = f"tool:{name}"


@dataclass(frozen=True)
class LiveTurn:
    """How a live turn differs from a replay (module docstring). ``model`` and ``system``
    replace the agent's when given; ``allow_write`` names the write tools the agent's own
    handlers may run."""

    ask: AskModel
    model: str | None = None
    system: str | None = None
    allow_write: frozenset[str] = field(default_factory=frozenset)

    @classmethod
    def from_request(cls, doc: dict[str, Any], ask: AskModel) -> LiveTurn:
        """From the ``live`` object of a ``replay`` request (its schema is checked)."""
        return cls(
            ask,
            doc.get("model"),
            doc.get("system"),
            frozenset(doc.get("allow_write", [])),
        )

    def agent_json(self, agent: dict[str, Any]) -> dict[str, Any]:
        """The prefix state's agent with ``model`` and ``system`` replaced."""
        out = dict(agent)
        if self.model is not None:
            out["model"] = self.model
        if self.system is not None:
            out["system"] = self.system
        return out


class HarnessModel:
    """A model whose every call is asked of the harness (:class:`LiveTurn`). Records each
    request's sha256 in :attr:`requests`; :attr:`used` stays 0 (no recorded reply is used
    by the runtime itself)."""

    def __init__(self, live: LiveTurn) -> None:
        self.live = live
        self.requests: list[str] = []
        self.used = 0

    def respond(self, request: dict[str, Any], index: int) -> dict[str, Any]:
        sha = request_sha256(request)
        self.requests.append(sha)
        answer = self.live.ask(index, dict(request), sha)
        stop = answer.get("stop")
        if isinstance(stop, dict):
            raise LiveStop(
                str(stop.get("code", "live_call_failed")),
                str(stop.get("message", "")),
                str(stop.get("stop_key", f"model:{index}")),
            )
        return normalize_reply(answer.get("reply"), where=f"the harness's answer model:{index}")


#: The reason an external handler's refusal gives, by its type: its text never enters a log.
_REASONS: tuple[tuple[type[Exception], str], ...] = (
    (KeyError, "a required key is missing"),
    (TypeError, "a value has the wrong type"),
    (ValueError, "a value is not valid"),
)


class LiveExternal:
    """External calls of a live turn: ``stubs`` first (a :class:`~.replay.StubBook`: name and
    canonical input, then ``--supply``), then the agent's own handler as the module
    docstring says."""

    def __init__(
        self,
        stubs: Callable[[str, dict[str, Any]], ToolResult],
        agent: AgentSpec,
        allow_write: frozenset[str],
        answered: list[str] | None = None,
    ) -> None:
        self.stubs = stubs
        self.agent = agent
        self.allow_write = allow_write
        #: where each answered call came from: the stubs log theirs, a handler adds ``live``
        self.answered = [] if answered is None else answered

    def __call__(self, name: str, inp: dict[str, Any]) -> ToolResult:
        try:
            return self.stubs(name, inp)
        except CaseError as err:
            if err.code != "missing_stub":
                raise
            tool = self.agent.tool(name)
            if tool is not None and tool.effect == "write" and name not in self.allow_write:
                raise WriteNotAllowed(name) from None
            if tool is None or tool.handler is None:
                raise
            try:
                out = tool.handler(inp)
            except (KeyError, TypeError, ValueError) as exc:
                reason = next(r for t, r in _REASONS if isinstance(exc, t))
                out = ToolResult(f"bad input for {name}: the handler refused it ({reason})", True)
            self.answered.append("live")
            return out if isinstance(out, ToolResult) else ToolResult(out, False)
