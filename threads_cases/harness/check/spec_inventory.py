"""What the spec defines, read from its data: the sets a suite's coverage is measured
against (spec/conformance.md section 8).

Every set comes from the shipped schemas or spec text, never from a list kept here, except
the three structural matcher features, which no schema names:

==================  ======================================================================
event_types         the ``$defs/data.<type>`` entries of ``schemas/event.schema.json``
                    (the 15 types of spec/thread-log.md section 3)
tool_kinds          ``$defs/tool/properties/kind/enum`` of the event schema
tool_effects        ``$defs/tool/properties/effect/enum`` of the event schema
matcher_features    ``envelope:<key>`` for each key of ``schemas/matcher.schema.json`` other
                    than ``type`` and ``data``; ``data`` (a data subset), ``data_nested`` (an
                    object inside it), ``data_array`` (an array inside it), from the schema's
                    ``data``; and ``must``, ``expect``, ``expect_order`` (an expect of two or
                    more matchers, which checks order)
dialect_fields      the properties of ``$defs/envelope.<dialect>`` of the event schema: the
                    envelope keys as that dialect spells them
reason_codes        the codes of spec/reason-codes.md whose effect column reads exactly
                    ``verdict `fail``` or ``verdict `drifted```: what a case can be written
                    to catch (``error`` and ``skip`` codes are the machine's or the case's
                    trouble, not a behaviour to cover)
==================  ======================================================================
"""

from __future__ import annotations

import re
from functools import cache

from ...core.resources import data_root
from ...core.schemas import schema_document

#: Structural matcher features (no schema names them): see the module docstring.
STRUCTURAL_FEATURES = ("must", "expect", "expect_order")
#: The defined sets that coverage counts, in report order.
CATEGORIES = (
    "event_types",
    "tool_kinds",
    "tool_effects",
    "matcher_features",
    "dialect_fields",
    "reason_codes",
)


def event_types() -> tuple[str, ...]:
    """The event types of spec/thread-log.md section 3, from the event schema's ``$defs``."""
    defs = schema_document("event.schema.json")["$defs"]
    return tuple(sorted(k.removeprefix("data.") for k in defs if k.startswith("data.")))


def _tool_enum(key: str) -> tuple[str, ...]:
    tool = schema_document("event.schema.json")["$defs"]["tool"]
    return tuple(sorted(tool["properties"][key]["enum"]))


def tool_kinds() -> tuple[str, ...]:
    """``sandbox``, ``external``: the kinds a tool can have."""
    return _tool_enum("kind")


def tool_effects() -> tuple[str, ...]:
    """``pure``, ``read``, ``write``: the effects a tool can declare."""
    return _tool_enum("effect")


def matcher_features() -> tuple[str, ...]:
    """The matcher features of the module docstring, sorted."""
    props = schema_document("matcher.schema.json")["properties"]
    envelope = [f"envelope:{k}" for k in props if k not in ("type", "data")]
    data = ["data", "data_array", "data_nested"] if "data" in props else []
    return tuple(sorted([*envelope, *data, *STRUCTURAL_FEATURES]))


def dialect_fields(dialect: str) -> tuple[str, ...]:
    """The envelope keys as ``dialect`` spells them (empty for an unknown dialect)."""
    defs = schema_document("event.schema.json")["$defs"]
    envelope = defs.get(f"envelope.{dialect}", {})
    return tuple(sorted(envelope.get("properties", {})))


@cache
def reason_codes() -> tuple[str, ...]:
    """The reason codes a case can be written to catch: the rows of spec/reason-codes.md whose
    last column is ``verdict `fail``` or ``verdict `drifted```."""
    text = (data_root() / "spec" / "reason-codes.md").read_text(encoding="utf-8")
    out = set()
    for line in text.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        m = re.fullmatch(r"`([a-z][a-z0-9_]*)`", cells[0]) if len(cells) >= 3 else None
        if m and cells[-1] in ("verdict `fail`", "verdict `drifted`"):
            out.add(m[1])
    return tuple(sorted(out))


def defined(dialect: str) -> dict[str, tuple[str, ...]]:
    """Every defined set, by category (:data:`CATEGORIES`), for an implementation of
    ``dialect``."""
    return {
        "event_types": event_types(),
        "tool_kinds": tool_kinds(),
        "tool_effects": tool_effects(),
        "matcher_features": matcher_features(),
        "dialect_fields": dialect_fields(dialect),
        "reason_codes": reason_codes(),
    }
