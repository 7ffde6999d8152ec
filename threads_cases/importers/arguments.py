"""Tool-call arguments written as JSON text, decoded to a tool input exactly once
(spec/importers.md section 4, "Arguments").

OpenAI-shaped recordings (Codex function calls, Chat Completions and Responses tool calls)
carry a call's ``arguments`` as the JSON text of an object. :func:`decode_arguments` turns
that text into the ``tool_called`` input:

* an object (already decoded by the writer) is the input as it is;
* text is decoded once, as the writer's own parser reads it (a repeated key keeps its last
  value, an integer beyond 2^53 becomes the JavaScript number...: each repair a
  :class:`~threads_cases.importers.lenient.Note`); an object is the input;
* a value that still holds JSON text after that decode (the arguments were encoded twice)
  is decoded once more when it holds an object: a ``double_encoded`` repair;
* anything else (text that is not JSON, or JSON that is not an object) is kept as the string
  it was, under ``{"arguments": text}``: an ``arguments_not_json`` repair. Empty text (a call
  without arguments) is ``{}`` with no note.

A decode never goes further than twice, so a string the tool really received stays one.
"""

from __future__ import annotations

from typing import Any

from ..core.errors import CaseError
from ..core.strictjson import parse
from .lenient import MAX_SAFE_INTEGER, Note, js_integer, js_loads

__all__ = ["decode_arguments", "js_numbers", "json_value"]

_MISSING = object()


def json_value(text: str, notes: list[Note] | None = None) -> Any:
    """The value a JSON text holds, read strictly first and then as ``JSON.parse`` reads it
    (repairs appended to ``notes``), or ``_MISSING`` when it is not JSON at all."""
    try:
        return parse(text.encode("utf-8", "surrogatepass"))
    except CaseError:
        pass
    try:
        value, more = js_loads(text)
    except (ValueError, RecursionError):
        return _MISSING
    if notes is not None:
        notes.extend(more)
    return value


def js_numbers(value: Any, notes: list[Note]) -> Any:
    """``value`` (already parsed, by a reader that keeps big integers) with every integer
    beyond +-(2^53-1) replaced by the JavaScript number, as section 4 reads one in text
    (``big_integer`` notes); the value itself when it holds none."""
    if isinstance(value, bool):
        return value
    if isinstance(value, int):
        if abs(value) <= MAX_SAFE_INTEGER:
            return value
        js = js_integer(str(value))
        notes.append(
            Note(
                "import_repaired",
                "big_integer",
                f"integer {value} is beyond 2^53: kept as the JavaScript number {js!r}",
            )
        )
        return js
    if isinstance(value, dict):
        return {k: js_numbers(v, notes) for k, v in value.items()}
    if isinstance(value, list):
        return [js_numbers(v, notes) for v in value]
    return value


def decode_arguments(args: Any, notes: list[Note]) -> dict[str, Any]:
    """The tool input of a call's ``arguments`` (module docstring); what had to be changed
    is appended to ``notes`` (``double_encoded``, ``arguments_not_json`` and the lenient
    reader's reasons)."""
    if isinstance(args, dict):
        return js_numbers(args, notes)  # type: ignore[no-any-return]
    if args is None or (isinstance(args, str) and not args.strip()):
        return {}
    if not isinstance(args, str):
        notes.append(
            Note("import_repaired", "arguments_not_json", "arguments are not JSON text; kept")
        )
        return {"arguments": args}
    first: list[Note] = []
    value = json_value(args, first)
    if isinstance(value, dict):
        notes.extend(first)
        return value
    if isinstance(value, str):
        second: list[Note] = []
        inner = json_value(value, second)
        if isinstance(inner, dict):
            notes.extend([*first, *second])
            notes.append(
                Note(
                    "import_repaired",
                    "double_encoded",
                    "arguments were JSON text encoded twice; decoded once more",
                )
            )
            return inner
    what = "not JSON" if value is _MISSING else f"JSON {_kind(value)}, not an object"
    notes.append(
        Note("import_repaired", "arguments_not_json", f"arguments are {what}; kept as text")
    )
    return {"arguments": args}


def _kind(value: Any) -> str:
    if isinstance(value, str):
        return "text that is not an object's JSON"
    if isinstance(value, list):
        return "an array"
    if isinstance(value, bool) or value is None:
        return "a literal"
    return "a number"
