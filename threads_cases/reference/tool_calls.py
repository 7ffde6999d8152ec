"""One tool call of a turn (spec/replay.md 3.3 and 8): what a tool's handler gives, the
neutral results of its refusals, and the refusal of a replay that needs a handler it does
not have (:class:`HandlerMissing`, ``handler_missing``)."""

from __future__ import annotations

import traceback
from collections.abc import Callable
from pathlib import Path
from typing import Any

from ..core.errors import CaseError
from ..core.texts import quote
from .agent import BadInput, ToolContext, ToolOutput, ToolResult, ToolSpec
from .sandbox import NoSuchFile

#: ``external(name, input) -> ToolResult``; raises CaseError("missing_stub") to stop.
ExternalCaller = Callable[[str, dict[str, Any]], ToolResult]


def as_result(out: ToolOutput) -> ToolResult:
    if isinstance(out, ToolResult):
        return out
    return ToolResult(out, False)


#: The reason a custom handler's exception gives, by its type (spec/replay.md 8.1): the
#: exception's own text never enters the log.
_HANDLER_REASONS: tuple[tuple[type[Exception], str], ...] = (
    (KeyError, "a required key is missing"),
    (TypeError, "a value has the wrong type"),
    (ValueError, "a value is not valid"),
)


def _lacks_named_key(tool: ToolSpec, inp: dict[str, Any], exc: KeyError) -> bool:
    """True when ``exc`` names a key of the tool's ``input_schema`` ``properties`` that the
    input lacks: the model's bad input (spec/replay.md 8.1). Any other KeyError is a lookup
    in the handler's own data, a bug of the handler's."""
    key = exc.args[0] if len(exc.args) == 1 else None
    properties = tool.input_schema.get("properties")
    named = isinstance(properties, dict) and isinstance(key, str) and key in properties
    return named and key not in inp


def _sandbox_call(tool: ToolSpec, ctx: ToolContext, inp: dict[str, Any]) -> ToolResult:
    """Run a sandbox tool's handler; its refusals become neutral error results (3.3)."""
    assert tool.handler is not None
    try:
        return as_result(tool.handler(ctx, inp))
    except NoSuchFile as exc:
        return ToolResult(f"no such file: {exc.path}", is_error=True)
    except BadInput as exc:
        return ToolResult(str(exc), is_error=True)
    except CaseError as exc:
        if exc.code in ("egress_blocked", "sandbox_content_missing"):
            raise
        return ToolResult(exc.message, is_error=True)
    except (KeyError, TypeError, ValueError) as exc:
        if isinstance(exc, KeyError) and not _lacks_named_key(tool, inp, exc):
            raise HandlerFailed(tool.name, exc) from exc  # the handler's own lookup failed
        reason = next(r for t, r in _HANDLER_REASONS if isinstance(exc, t))
        return ToolResult(f"bad input for {tool.name}: the handler refused it ({reason})", True)
    except Exception as exc:  # a bug in the agent's own handler, never threads-cases'
        raise HandlerFailed(tool.name, exc) from exc


class HandlerFailed(CaseError):
    """A sandbox tool's handler raised an error that is not an input refusal (spec/replay.md
    8.1): the replay is refused with ``handler_failed``, naming the tool, the error and where
    in the agent's code it was raised (the last frame of its traceback)."""

    def __init__(self, name: str, exc: BaseException) -> None:
        frames = traceback.extract_tb(exc.__traceback__)
        where = f" at {Path(frames[-1].filename).name}:{frames[-1].lineno}" if frames else ""
        text = str(exc).strip().splitlines()
        error = f"{type(exc).__name__}: {text[0][:300]}" if text else type(exc).__name__
        super().__init__(
            "handler_failed",
            f"the handler of sandbox tool {quote(name)} raised {error}{where}",
        )


class HandlerMissing(CaseError):
    """A replay called a sandbox tool that has no handler (spec/replay.md 3.3, 8.4): the
    replay is refused with ``handler_missing``; the case needs the user's own agent."""

    def __init__(self, name: str) -> None:
        super().__init__(
            "handler_missing",
            f"sandbox tool {quote(name)} has no handler: a case holds a tool's definition, "
            "not its code",
        )


def call_tool(
    tool: ToolSpec | None,
    block: dict[str, Any],
    ctx: ToolContext,
    external: ExternalCaller,
    refuse_missing: bool,
) -> ToolResult:
    """The result of one tool call (spec/replay.md 3.3); raises ``CaseError`` to stop, and
    :class:`HandlerMissing` (a replay's refusal) for a sandbox tool with no handler when
    ``refuse_missing``."""
    if tool is None:
        return ToolResult(f"unknown tool {quote(block['name'])}", is_error=True)
    if tool.kind != "sandbox":
        return external(tool.name, block["input"])
    if tool.handler is None:
        if refuse_missing:
            raise HandlerMissing(tool.name)
        return ToolResult(f"no handler for sandbox tool {quote(tool.name)}", True)
    return _sandbox_call(tool, ctx, block["input"])
