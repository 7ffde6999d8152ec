"""The event typed dicts (threads_cases/core/events.py) are what tools/gen_event_types.py
writes from schemas/event.schema.json, every event of the conformance logs fits the typed dict
its ``type`` picks, and the union narrows on ``type`` under mypy."""

from __future__ import annotations

import importlib.util
import types
import typing
from pathlib import Path
from typing import Any, Literal, get_args, get_origin, get_type_hints, is_typeddict

from threads_cases.core import events
from threads_cases.core.log import read_log

ROOT = Path(__file__).resolve().parent.parent
LOGS = sorted((ROOT / "spec" / "conformance" / "cases").glob("*/log.threads-py.jsonl"))


def _tool() -> Any:
    spec = importlib.util.spec_from_file_location(
        "gen_event_types", ROOT / "tools" / "gen_event_types.py"
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_committed_module_is_what_the_tool_writes() -> None:
    tool = _tool()
    assert tool.generate() == tool.MODULE.read_text(encoding="utf-8"), (
        "threads_cases/core/events.py is out of date: run python tools/gen_event_types.py"
    )
    assert tool.main(["--check"]) == 0


def test_every_type_of_the_schema_has_its_event_and_nothing_else() -> None:
    kinds = _tool().event_types(_tool().read_json_file(_tool().SCHEMA))
    known = {get_args(get_type_hints(t)["type"])[0]: t for t in get_args(events.KnownEvent)}
    assert sorted(known) == sorted(kinds)
    assert set(get_args(events.Event)) == {*get_args(events.KnownEvent), events.ExtensionEvent}


def fits(value: Any, hint: Any, where: str) -> list[str]:
    """Where ``value`` does not fit ``hint`` (the subset of typing the generated module uses)."""
    origin = get_origin(hint)
    if hint is Any:
        return []
    if hint is None or hint is type(None):
        return [] if value is None else [f"{where}: {value!r} is not None"]
    if origin is Literal:
        return [] if value in get_args(hint) else [f"{where}: {value!r} not in {get_args(hint)}"]
    if origin in (typing.Union, types.UnionType):
        tries = [fits(value, alt, where) for alt in get_args(hint)]
        return [] if any(not t for t in tries) else [p for t in tries for p in t]
    if origin is list:
        if not isinstance(value, list):
            return [f"{where}: not a list"]
        return [p for i, v in enumerate(value) for p in fits(v, get_args(hint)[0], f"{where}/{i}")]
    if origin is dict:
        return [] if isinstance(value, dict) else [f"{where}: not an object"]
    if is_typeddict(hint):
        if not isinstance(value, dict):
            return [f"{where}: not an object"]
        hints = get_type_hints(hint)
        problems = [f"{where}: no {k}" for k in sorted(hint.__required_keys__ - set(value))]
        extra = "other keys allowed" in (hint.__doc__ or "")
        problems += (
            [] if extra else [f"{where}: extra {k}" for k in sorted(set(value) - set(hints))]
        )
        for key in set(value) & set(hints):
            problems += fits(value[key], hints[key], f"{where}/{key}")
        return problems
    if hint is int:  # bool is an int in Python, not in JSON
        ok = isinstance(value, int) and not isinstance(value, bool)
        return [] if ok else [f"{where}: {value!r} is not an integer"]
    return [] if isinstance(value, hint) else [f"{where}: {value!r} is not {hint.__name__}"]


def test_every_event_of_the_conformance_logs_fits_its_typed_dict() -> None:
    by_type = {get_args(get_type_hints(t)["type"])[0]: t for t in get_args(events.KnownEvent)}
    seen: set[str] = set()
    for log in LOGS:
        for n, ev in enumerate(read_log(log)):
            shape = by_type.get(ev["type"], events.ExtensionEvent)
            seen.add(ev["type"])
            assert fits(ev, shape, f"{log.parent.name} event {n}") == []
    # the logs hold most types: a fit test over two types would prove little
    assert len(seen & set(by_type)) >= 10, seen


def test_a_wrong_event_does_not_fit() -> None:
    good = {
        "type": "turn_started",
        "actor_kind": "system",
        "branch_id": "main",
        "critical": False,
        "epoch": 0,
        "event_id": "e1",
        "seq": 0,
        "thread_id": "t",
        "ts": "2026-01-01T00:00:00.000Z",
        "data": {"turn_id": "turn-1"},
    }
    assert fits(good, events.TurnStartedEvent, "") == []
    assert fits({**good, "data": {}}, events.TurnStartedEvent, "") == ["/data: no turn_id"]
    assert fits({**good, "actor_kind": "robot"}, events.TurnStartedEvent, "") != []


SNIPPET = """
from threads_cases.core.events import Event, is_known

def name_of(ev: Event) -> str:
    if is_known(ev) and ev["type"] == "tool_called":
        reveal_type(ev["data"]["kind"])
        return ev["data"]["name"]
    return ev["type"]
"""


def test_the_union_narrows_on_type_under_mypy(tmp_path: Path) -> None:
    from mypy import api

    snippet = tmp_path / "narrow.py"
    snippet.write_text(SNIPPET, encoding="utf-8")
    out, err, status = api.run(
        ["--strict", "--no-incremental", "--follow-imports=silent", str(snippet)]
    )
    # the revealed type is the Literal of ToolCalledData.kind (an ExtensionEvent's data is Any)
    assert (
        "Literal['sandbox'] | Literal['external']" in out or "Literal['sandbox', 'external']" in out
    ), out
    assert status == 0 and out.count("error") == 0, (out, err)
