"""No ``Any`` in a public signature (issue 33): every callable of the public API (each function
``threads_cases`` exports and each public method, property and constructor of the classes it
exports) is annotated with the real shape, a TypedDict of core/shapes.py or core/events.py, a
``Literal``, or, where a value really is arbitrary JSON, the named aliases ``JsonValue`` and
``JsonObject`` (core/shapes.py). Counted from the annotations as written."""

from __future__ import annotations

import functools
import inspect
import re
from collections.abc import Callable, Iterator

import threads_cases

#: each public callable whose signature takes or gives arbitrary JSON (a tool's input, a
#: provider's reply, a document or envelope checked against its schema at run time), by name:
#: a new one is added here on purpose, never by accident
JSON_SIGNATURES = {
    "AgentRef.from_request",
    "AgentSpec.from_json",
    "Case.__init__",
    "Case.read",
    "CaseExpectation.__init__",
    "CaseResult.__init__",
    "Check.__init__",
    "Coverage.to_json",
    "Dialect.decode_event",
    "Dialect.decode_state",
    "Dialect.encode_event",
    "Dialect.encode_state",
    "Implementation.request",
    "LiveOptions.request_body",
    "LiveRun.book",
    "LiveRun.ledger",
    "Reducer.apply",
    "Reducer.apply_read",
    "SaveResult.to_json",
    "ScriptedModel.__init__",
    "ScriptedModel.respond",
    "Thread.__init__",
    "Thread.create",
    "Thread.open",
    "Thread.run_turn",
    "Thread.save_case",
    "ToolResult.__init__",
    "ToolSpec.__init__",
    "parse_json",
    "reduce",
    "run_case",
    "run_suite",
}


def public_callables() -> Iterator[tuple[str, Callable[..., object]]]:
    """``(name, function)`` of every public callable: exported functions, and the
    constructor and public methods, class methods and properties each exported class
    defines."""
    for name in threads_cases.__all__:
        obj = getattr(threads_cases, name)
        if inspect.isfunction(obj):
            yield name, obj
        if not inspect.isclass(obj):
            continue
        for attr, value in vars(obj).items():
            if attr.startswith("_") and attr != "__init__":
                continue
            if isinstance(value, (staticmethod, classmethod)):
                value = value.__func__
            elif isinstance(value, property):
                value = value.fget
            elif isinstance(value, functools.cached_property):
                value = value.func
            if inspect.isfunction(value):
                yield f"{name}.{attr}", value


def with_names(pattern: str) -> dict[str, dict[str, str]]:
    """Each public callable whose annotations name one of ``pattern``'s words."""
    words = re.compile(rf"\b({pattern})\b")
    out = {}
    for name, fn in public_callables():
        annotations = {k: str(v) for k, v in inspect.unwrap(fn).__annotations__.items()}
        found = {k: v for k, v in annotations.items() if words.search(v)}
        if found:
            out[name] = found
    return out


def test_the_count_covers_the_public_api() -> None:
    names = dict(public_callables())
    # classes, their constructors and methods, and the functions: over a hundred signatures
    assert len(names) > 100
    assert {"run_case", "Thread.run_turn", "Case.read", "CaseResult.to_json"} <= set(names)


def test_no_public_signature_says_any() -> None:
    # 41 of 116 public callables took or gave Any before issue 33
    assert with_names("Any") == {}


def test_arbitrary_json_goes_only_where_it_is_listed() -> None:
    assert set(with_names("JsonValue|JsonObject")) == JSON_SIGNATURES
