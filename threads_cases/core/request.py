"""The model request a state asks for, and its ``request_sha256``, kept incrementally.

A request is ``{model, system, messages, tools}`` (spec/thread-log.md, ``model_requested``);
its hash is the hex sha256 of its RFC 8785 bytes, which are (keys in UTF-16 order)::

    {"messages":[m1,...,mk],"model":...,"system":...,"tools":[...]}

Re-encoding the whole conversation on every model call makes a turn's cost quadratic in its
size (spec/replay.md, "Cost"). The reducer only ever appends messages or extends the last
one, and a ``restored`` event replaces the list, so every message before the last is final
once the list object is the same: :class:`RequestHasher` feeds each of them once into a
running sha256 and, per call, encodes only the last message and the tail.
"""

from __future__ import annotations

import hashlib
from typing import Any

from .canonical import canonical_line

_NO_AGENT: dict[str, Any] = {"model": "", "system": "", "tools": []}


class ModelRequest(dict[str, Any]):
    """A request dict that carries its own ``request_sha256`` (:attr:`sha256`), so a model that
    records the hash of what it was asked (:class:`~threads_cases.reference.model.ScriptedModel`)
    does not encode the conversation again."""

    sha256: str = ""


def _tools(agent: dict[str, Any]) -> list[dict[str, Any]]:
    return [
        {"name": t["name"], "description": t["description"], "input_schema": t["input_schema"]}
        for t in agent["tools"]
    ]


def build_request(state: dict[str, Any]) -> dict[str, Any]:
    """The model request a state asks for: ``{model, system, messages, tools}`` with tools as
    ``{name, description, input_schema}`` (spec/thread-log.md, ``model_requested``)."""
    agent = state["agent"] or _NO_AGENT
    return {
        "model": agent["model"],
        "system": agent["system"],
        "messages": state["messages"],
        "tools": _tools(agent),
    }


def request_sha256(request: dict[str, Any]) -> str:
    """Hex sha256 of the RFC 8785 form of ``{model, system, messages, tools}``.

    A :class:`ModelRequest` built by :meth:`RequestHasher.request` answers from its
    :attr:`~ModelRequest.sha256` without encoding anything."""
    known = getattr(request, "sha256", "")
    if known:
        return str(known)
    return hashlib.sha256(canonical_line(request)).hexdigest()


class RequestHasher:
    """``request_sha256(build_request(state))`` in time proportional to what changed since the
    previous call on the same thread (amortised: every message is encoded once after it is
    final, the last one once per call).

    One hasher follows one reducer state. A ``messages`` list whose last sealed slot holds
    another message (a ``restored`` event), a shorter list or a changed agent starts again
    from the beginning, so the result is always
    exactly :func:`request_sha256` of :func:`build_request`.
    """

    def __init__(self) -> None:
        self._sealed = 0
        self._last_sealed: dict[str, Any] | None = None
        self._h = hashlib.sha256(b'{"messages":[')
        self._agent: dict[str, Any] | None = None
        self._tail = b""

    def copy(self) -> RequestHasher:
        """An independent hasher in the same position (a fork's, at the end of the log)."""
        other = RequestHasher()
        other._sealed, other._last_sealed = self._sealed, self._last_sealed
        other._h = self._h.copy()
        other._agent, other._tail = self._agent, self._tail
        return other

    def _reset(self) -> None:
        self._sealed = 0
        self._last_sealed = None
        self._h = hashlib.sha256(b'{"messages":[')

    def _tail_for(self, agent: dict[str, Any]) -> bytes:
        if agent is not self._agent:
            self._agent = agent
            self._tail = (
                b'],"model":'
                + canonical_line(agent["model"])
                + b',"system":'
                + canonical_line(agent["system"])
                + b',"tools":'
                + canonical_line(_tools(agent))
                + b"}"
            )
        return self._tail

    def sha256(self, state: dict[str, Any]) -> str:
        """The hex ``request_sha256`` of the request ``state`` asks for."""
        messages: list[dict[str, Any]] = state["messages"]
        # Sealed messages are never changed in place (only the last slot is replaced), so the
        # same object at the last sealed slot means the same sealed prefix, also in a copy of
        # the list (a fork's reducer copies a shared list on its first change).
        if len(messages) < self._sealed or (
            self._sealed and messages[self._sealed - 1] is not self._last_sealed
        ):
            self._reset()
        while self._sealed < len(messages) - 1:
            msg = messages[self._sealed]
            if self._sealed:
                self._h.update(b",")
            self._h.update(canonical_line(msg))
            self._sealed += 1
            self._last_sealed = msg
        h = self._h.copy()
        if len(messages) > self._sealed:
            if self._sealed:
                h.update(b",")
            h.update(canonical_line(messages[-1]))
        h.update(self._tail_for(state["agent"] or _NO_AGENT))
        return h.hexdigest()

    def request(self, state: dict[str, Any]) -> ModelRequest:
        """:func:`build_request` of ``state`` as a :class:`ModelRequest` carrying its hash."""
        req = ModelRequest(build_request(state))
        req.sha256 = self.sha256(state)
        return req
