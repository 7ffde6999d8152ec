"""Agents and tools: what a thread runs (spec/thread-log.md, ``thread_started``).

An :class:`AgentSpec` is the JSON ``agent`` of ``thread_started``
(``{name, model, system, tools: [{name, description, input_schema, kind, effect}]}``) plus,
for running turns, a handler per tool:

* a *sandbox* tool's handler is ``handler(ctx: ToolContext, input: dict) -> ToolOutput``;
  the built-ins :data:`BUILTIN_TOOLS` (read_file, write_file, list_files, delete_file) need none;
* an *external* tool's handler is ``handler(input: dict) -> ToolOutput`` and runs only live;
  a replay answers external calls from the case's stubs.

``ToolOutput`` is a string, a list of content blocks, or :class:`ToolResult`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol

from ..core.events import Agent, Tool
from ..core.shapes import JsonObject, ToolResultRecord
from ..core.texts import quote

Kind = Literal["sandbox", "external"]
Effect = Literal["read", "write", "pure"]


@dataclass(frozen=True)
class ToolResult:
    """A tool's answer: ``{"content": str | [blocks], "is_error": bool}``."""

    content: str | list[JsonObject]
    is_error: bool = False

    def to_json(self) -> ToolResultRecord:
        return {"content": self.content, "is_error": self.is_error}


ToolOutput = str | list[dict[str, Any]] | ToolResult


class ToolContext(Protocol):
    """What a sandbox tool handler may do; every call is recorded as events."""

    def read(self, path: str) -> bytes: ...
    def write(self, path: str, data: bytes) -> None: ...
    def delete(self, path: str) -> None: ...
    def list(self, prefix: str = "") -> list[str]: ...


@dataclass(frozen=True)
class ToolSpec:
    """One tool: ``{name, description, input_schema, kind, effect}`` and an optional handler."""

    name: str
    description: str = ""
    input_schema: JsonObject = field(default_factory=lambda: {"type": "object"})
    kind: Kind = "external"
    effect: Effect = "read"
    handler: Callable[..., ToolOutput] | None = field(default=None, compare=False, repr=False)

    def to_json(self) -> Tool:
        """The tool as ``thread_started`` records it (``$defs/tool``)."""
        return {
            "name": self.name,
            "description": self.description,
            "input_schema": self.input_schema,
            "kind": self.kind,
            "effect": self.effect,
        }


def _text_input(props: dict[str, Any], required: list[str]) -> dict[str, Any]:
    return {"type": "object", "properties": props, "required": required}


class BadInput(Exception):
    """A built-in tool's input lacks a key or holds a non-string value (spec/replay.md 3.4).

    Its text is neutral: ``bad input for <tool>: <"key"> is missing`` or ``... is not a
    string``, the key quoted as canonical JSON."""

    def __init__(self, tool: str, key: str, problem: str) -> None:
        super().__init__(f"bad input for {tool}: {quote(key)} {problem}")


def _text(tool: str, inp: dict[str, Any], key: str, default: str | None = None) -> str:
    """The string value of ``key`` of a built-in tool's input (spec/replay.md 3.4)."""
    if key not in inp:
        if default is not None:
            return default
        raise BadInput(tool, key, "is missing")
    value = inp[key]
    if not isinstance(value, str):
        raise BadInput(tool, key, "is not a string")
    return value


def _read_file(ctx: ToolContext, inp: dict[str, Any]) -> ToolOutput:
    path = _text("read_file", inp, "path")
    data = ctx.read(path)
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return ToolResult(f"{path} is not UTF-8 text ({len(data)} bytes)", is_error=True)


def _write_file(ctx: ToolContext, inp: dict[str, Any]) -> ToolOutput:
    path = _text("write_file", inp, "path")
    data = _text("write_file", inp, "content").encode("utf-8")
    ctx.write(path, data)
    return f"wrote {len(data)} bytes to {path}"


def _list_files(ctx: ToolContext, inp: dict[str, Any]) -> ToolOutput:
    return "\n".join(ctx.list(_text("list_files", inp, "prefix", "")))


def _delete_file(ctx: ToolContext, inp: dict[str, Any]) -> ToolOutput:
    path = _text("delete_file", inp, "path")
    ctx.delete(path)
    return f"deleted {path}"


_PATH = {"type": "string", "description": "A relative POSIX path inside the sandbox."}

#: The built-in sandbox tools (spec/replay.md, section 3).
BUILTIN_TOOLS: dict[str, ToolSpec] = {
    "read_file": ToolSpec(
        "read_file",
        "Read a UTF-8 text file from the sandbox.",
        _text_input({"path": _PATH}, ["path"]),
        "sandbox",
        "read",
        _read_file,
    ),
    "write_file": ToolSpec(
        "write_file",
        "Write a UTF-8 text file in the sandbox, replacing it.",
        _text_input({"path": _PATH, "content": {"type": "string"}}, ["path", "content"]),
        "sandbox",
        "write",
        _write_file,
    ),
    "list_files": ToolSpec(
        "list_files",
        "List the sandbox's files whose path starts with prefix.",
        _text_input({"prefix": {"type": "string"}}, []),
        "sandbox",
        "read",
        _list_files,
    ),
    "delete_file": ToolSpec(
        "delete_file",
        "Delete a file from the sandbox.",
        _text_input({"path": _PATH}, ["path"]),
        "sandbox",
        "write",
        _delete_file,
    ),
}


@dataclass(frozen=True)
class AgentSpec:
    """An agent: ``{name, model, system, tools}``. Tools default to the four built-ins."""

    name: str
    model: str
    system: str = ""
    tools: tuple[ToolSpec, ...] = field(default_factory=lambda: tuple(BUILTIN_TOOLS.values()))

    def to_json(self) -> Agent:
        """The ``agent`` object of ``thread_started`` (``$defs/agent``)."""
        return {
            "name": self.name,
            "model": self.model,
            "system": self.system,
            "tools": [t.to_json() for t in self.tools],
        }

    def tool(self, name: str) -> ToolSpec | None:
        for t in self.tools:
            if t.name == name:
                return t
        return None

    @classmethod
    def from_json(
        cls, agent: JsonObject, handlers: dict[str, Callable[..., ToolOutput]] | None = None
    ) -> AgentSpec:
        """Rebuild an agent from its JSON; sandbox built-ins get their handlers back."""
        handlers = handlers or {}
        tools = []
        for t in agent.get("tools", []):
            builtin = BUILTIN_TOOLS.get(t["name"])
            handler = handlers.get(t["name"])
            if handler is None and builtin is not None and t["kind"] == "sandbox":
                handler = builtin.handler
            tools.append(
                ToolSpec(
                    t["name"],
                    t.get("description", ""),
                    t.get("input_schema", {}),
                    t["kind"],
                    t["effect"],
                    handler,
                )
            )
        return cls(agent["name"], agent["model"], agent.get("system", ""), tuple(tools))
