"""Generate threads_cases/core/events.py, the typed dicts of thread-log events, from
schemas/event.schema.json.

One ``TypedDict`` per event type (the canonical ``threads-py`` envelope with ``type`` a
``Literal`` and ``data`` that type's data schema), their union ``KnownEvent`` (discriminated by
``type``: ``if ev["type"] == "tool_called"`` narrows it), ``ExtensionEvent`` for the ``x_``
types and ``Event``, the two together. The schema stays the normative text: run
``python tools/gen_event_types.py`` after changing it (or tools/gen_schemas.py);
``--check`` exits 1 when the committed module differs (tests/test_event_types.py runs the same
comparison).

Mapping: ``string`` -> ``str``, ``integer`` -> ``int``, ``boolean`` -> ``bool``, ``null`` ->
``None``, ``enum``/``const`` -> ``Literal``, ``oneOf`` -> a union, an array -> ``list``, an
object with properties -> a ``TypedDict`` named after where it sits, an object without
(free-form JSON, and content blocks, whose types are open) -> ``dict[str, Any]``; a property
outside ``required`` is ``NotRequired``.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from threads_cases.core.strictjson import read_json_file  # noqa: E402

SCHEMA = ROOT / "schemas" / "event.schema.json"
MODULE = ROOT / "threads_cases" / "core" / "events.py"
DIALECT = "threads-py"  # the canonical spelling (spec/dialects.md)
#: $defs that stay free-form: a block's ``type`` is open (spec/thread-log.md)
FREE = {"block"}

HEADER = '''"""Thread-log events as typed dicts (spec/thread-log.md), generated from
schemas/event.schema.json by tools/gen_event_types.py: do not edit, run it.

:data:`Event` is what :func:`threads_cases.read_log` yields and :attr:`threads_cases.Thread.events`
holds: a canonical (``threads-py``) envelope. :data:`KnownEvent` is the union of the
specified types, discriminated by ``type`` (``if ev["type"] == "tool_called":`` narrows it
to :class:`ToolCalledEvent`); :class:`ExtensionEvent` is an ``x_`` type's event, and
:func:`is_known` tells the two apart (``if is_known(ev) and ev["type"] == ...``). The types
add no runtime check: the log reader checks every event against the schema.
"""

from typing import {imports}'''


GUARD = '''def is_known(ev: Event) -> TypeGuard[KnownEvent]:
    """Whether ``ev`` is of a type the spec defines: then ``ev["type"]`` narrows it (the
    ``x_`` types' ``type`` is any string, so :data:`Event` itself does not narrow)."""
    return ev["type"] in KNOWN_TYPES'''


def camel(name: str) -> str:
    return "".join(part[:1].upper() + part[1:] for part in name.replace(".", "_").split("_"))


class Writer:
    """Collects class definitions in the order they are first needed."""

    def __init__(self, schema: dict[str, Any]) -> None:
        self.defs: dict[str, Any] = schema["$defs"]
        self.classes: list[str] = []
        self.named: dict[str, str] = {}  # $defs key -> class name

    def ref(self, key: str) -> str:
        if key in FREE:
            return "dict[str, Any]"
        if key not in self.named:
            name = camel(key.removeprefix("data.")) + ("Data" if key.startswith("data.") else "")
            self.named[key] = name
            self.typed_dict(name, self.defs[key], f"``$defs/{key}``")
        return self.named[key]

    def hint(self, node: dict[str, Any], owner: str, prop: str) -> str:
        if "$ref" in node:
            return self.ref(node["$ref"].removeprefix("#/$defs/"))
        if "const" in node:
            return f"Literal[{node['const']!r}]".replace("'", '"')
        if "enum" in node:
            return "Literal[" + ", ".join(f'"{v}"' for v in node["enum"]) + "]"
        if "oneOf" in node:
            return " | ".join(self.hint(alt, owner, prop) for alt in node["oneOf"])
        kind = node.get("type")
        if kind == "object":
            if "properties" not in node:
                return "dict[str, Any]"
            name = owner.removesuffix("Data") + camel(prop)
            self.typed_dict(name, node, f"``{prop}`` of :class:`{owner}`")
            return name
        if kind == "array":
            return f"list[{self.hint(node['items'], owner, prop)}]"
        simple = {"string": "str", "integer": "int", "boolean": "bool", "null": "None"}
        return simple[kind]

    def typed_dict(self, name: str, node: dict[str, Any], where: str) -> None:
        required = set(node.get("required", []))
        fields = []
        for prop, sub in node["properties"].items():
            hint = self.hint(sub, name, prop)
            fields.append(f"    {prop}: {hint if prop in required else f'NotRequired[{hint}]'}")
        extra = node.get("additionalProperties") is not False
        doc = f"{where}" + (" (other keys allowed)" if extra else "")
        self.classes.append(f'class {name}(TypedDict):\n    """{doc}."""\n\n' + "\n".join(fields))


def event_types(schema: dict[str, Any]) -> list[str]:
    envelope = schema["$defs"][f"envelope.{DIALECT}"]
    return list(envelope["properties"]["type"]["oneOf"][0]["enum"])


def generate() -> str:
    schema = read_json_file(SCHEMA)
    writer = Writer(schema)
    envelope = schema["$defs"][f"envelope.{DIALECT}"]
    props = {k: v for k, v in envelope["properties"].items() if k not in ("type", "data")}
    actor = writer.hint(props.pop("actor_kind"), "", "")
    common = [f"    {k}: {writer.hint(v, '', k)}" for k, v in sorted(props.items())]
    common.insert(0, "    actor_kind: ActorKind")
    doc = f'    """The envelope every event shares (``$defs/envelope.{DIALECT}``)."""'
    writer.classes.append(f"class Envelope(TypedDict):\n{doc}\n\n" + "\n".join(common))
    events = []
    for kind in event_types(schema):
        data = writer.ref(f"data.{kind}")
        name = camel(kind) + "Event"
        events.append(name)
        body = f'    type: Literal["{kind}"]\n    data: {data}'
        doc = f'    """A ``{kind}`` event (``$defs/event.{DIALECT}``)."""'
        writer.classes.append(f"class {name}(Envelope):\n{doc}\n\n{body}")
    body = "    type: str\n    data: dict[str, Any]"
    doc = '    """An event of an ``x_`` type (spec/thread-log.md): its data is free-form."""'
    writer.classes.append(f"class ExtensionEvent(Envelope):\n{doc}\n\n{body}")
    out = [f"#: Who acted (``actor_kind``).\nActorKind: TypeAlias = {actor}", *writer.classes]
    union = "".join(f"    | {e}\n" for e in events).removeprefix("    | ")
    out.append(f"#: An event of a type the spec defines.\nKnownEvent: TypeAlias = (\n    {union})")
    out.append(
        "#: Any event of a log: a known type's or an ``x_`` one's.\n"
        "Event: TypeAlias = KnownEvent | ExtensionEvent"
    )
    kinds = "".join(f'        "{k}",\n' for k in event_types(schema))
    out.append(
        f"#: The types the spec defines.\nKNOWN_TYPES = frozenset(\n    {{\n{kinds}    }}\n)"
    )
    out.append(GUARD)
    names = [
        "ActorKind",
        "Envelope",
        "Event",
        "ExtensionEvent",
        "KnownEvent",
        "KNOWN_TYPES",
        "is_known",
    ]
    names += writer.named.values()
    names += events
    order = sorted(set(names), key=lambda n: (0 if n.isupper() else 1 if n[0].isupper() else 2, n))
    exported = "".join(f'    "{n}",\n' for n in order)
    out.append(f"__all__ = [\n{exported}]")
    body = "\n\n\n".join(out) + "\n"
    imports = ["Any", "Literal", "TypeAlias", "TypeGuard", "TypedDict"]
    imports += ["NotRequired"] if "NotRequired[" in body else []
    return HEADER.format(imports=", ".join(sorted(imports, key=str.lower))) + "\n\n" + body


def main(argv: list[str]) -> int:
    text = generate()
    if "--check" in argv:
        if not MODULE.is_file() or MODULE.read_text(encoding="utf-8") != text:
            print(
                f"{MODULE.relative_to(ROOT)} is out of date: run python tools/gen_event_types.py",
                file=sys.stderr,
            )
            return 1
        return 0
    MODULE.write_text(text, encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
