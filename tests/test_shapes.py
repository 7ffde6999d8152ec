"""The typed shapes of the public API and schemas/ do not drift apart, and the committed
schemas are what tools/gen_schemas.py writes."""

from __future__ import annotations

import importlib.util
import typing
from pathlib import Path
from typing import Any, get_args, get_origin, is_typeddict

import pytest

from threads_cases.core.canonical import canonical_document
from threads_cases.core.reducer import initial_state
from threads_cases.core.shapes import SCHEMA_OF
from threads_cases.core.strictjson import read_json_file

ROOT = Path(__file__).resolve().parent.parent
SCHEMAS = ROOT / "schemas"


def resolve(doc: dict[str, Any], pointer: str) -> dict[str, Any]:
    node: Any = doc
    for part in pointer.split("/")[1:]:
        node = node[part.replace("~1", "/").replace("~0", "~")]
    assert isinstance(node, dict)
    return node


def object_schema(doc: dict[str, Any], node: dict[str, Any]) -> dict[str, Any] | None:
    """The object schema ``node`` stands for (a local ``$ref`` followed, a nullable
    ``oneOf`` opened), or None when it is not an object with properties."""
    if "$ref" in node and node["$ref"].startswith("#"):
        return object_schema(doc, resolve(doc, node["$ref"][1:]))
    if "properties" in node:
        return node
    for alt in node.get("oneOf", []) + node.get("anyOf", []):
        found = object_schema(doc, alt)
        if found is not None:
            return found
    return None


def typed_dicts_in(hint: Any) -> list[Any]:
    """The TypedDicts a field's type holds (``X | None``, ``list[X]``)."""
    if is_typeddict(hint):
        return [hint]
    if get_origin(hint) in (list, typing.Union) or type(hint).__name__ == "UnionType":
        return [t for a in get_args(hint) for t in typed_dicts_in(a)]
    return []


def check(shape: Any, doc: dict[str, Any], node: dict[str, Any], where: str) -> list[str]:
    problems = []
    props = set(node["properties"])
    keys = set(shape.__annotations__)
    if keys != props:
        problems.append(
            f"{where}: keys only in the shape {sorted(keys - props)}, "
            f"only in the schema {sorted(props - keys)}"
        )
    if set(shape.__required_keys__) != set(node.get("required", [])):
        problems.append(
            f"{where}: required in the shape {sorted(shape.__required_keys__)}, "
            f"in the schema {sorted(node.get('required', []))}"
        )
    hints = typing.get_type_hints(shape)
    for key in sorted(keys & props):
        for inner in typed_dicts_in(hints[key]):
            child = node["properties"][key]
            sub = object_schema(doc, child.get("items", child))
            if sub is None and isinstance(child.get("additionalProperties"), dict):
                sub = object_schema(doc, child["additionalProperties"])
            if sub is None:
                problems.append(f"{where}/{key}: the schema has no object for {inner.__name__}")
            else:
                problems.extend(check(inner, doc, sub, f"{where}/{key}"))
    return problems


@pytest.mark.parametrize("name", sorted(SCHEMA_OF))
def test_shape_matches_its_schema(name: str) -> None:
    shape, file, pointer = SCHEMA_OF[name]
    doc = read_json_file(SCHEMAS / file)
    node = resolve(doc, pointer) if pointer else doc
    assert check(shape, doc, node, f"{file}#{pointer}") == []


def test_a_drifted_shape_is_caught() -> None:
    class Usage(typing.TypedDict):
        input_tokens: int

    doc = read_json_file(SCHEMAS / "state.schema.json")
    node = resolve(doc, "/$defs/state.threads-py/properties/usage")
    problems = check(Usage, doc, node, "usage")
    assert any("only in the schema ['output_tokens']" in p for p in problems), problems


def test_the_empty_state_has_every_key_of_the_shape() -> None:
    shape = SCHEMA_OF["State"][0]
    assert set(initial_state()) == set(shape.__annotations__)


def test_committed_schemas_are_what_the_generator_writes() -> None:
    spec = importlib.util.spec_from_file_location("gen_schemas", ROOT / "tools" / "gen_schemas.py")
    assert spec is not None and spec.loader is not None
    gen = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(gen)
    for file, build in (
        ("event.schema.json", gen.event_schema),
        ("state.schema.json", gen.state_schema),
    ):
        assert (SCHEMAS / file).read_bytes() == canonical_document(build()), (
            f"schemas/{file} differs from tools/gen_schemas.py: run python tools/gen_schemas.py"
        )
