"""Every regular expression of schemas/ is read the same by every engine (spec/README.md,
"Schemas"): only the syntax ECMA-262, Python's re, RE2 (Go) and PCRE share, so a driver in
any language can check requests and logs with its own JSON Schema library.
ts/test/schemaPatterns.test.ts checks the same files."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

SCHEMAS = Path(__file__).resolve().parent.parent / "schemas"
#: An escape: \xHH (two hex digits) or a backslash before a character that is special
#: somewhere in a pattern. \u, \p, \d, \s, \S, \w, \b and the like are not shared.
ESCAPE = re.compile(r"\\(?:x[0-9a-fA-F]{2}|[\\.^$*+?()\[\]{}|/-])")


def patterns(value: Any) -> Iterator[str]:
    if isinstance(value, dict):
        for key, item in value.items():
            if key == "pattern" and isinstance(item, str):
                yield item
            elif key == "patternProperties" and isinstance(item, dict):
                yield from item
                for sub in item.values():
                    yield from patterns(sub)
            else:
                yield from patterns(item)
    elif isinstance(value, list):
        for item in value:
            yield from patterns(item)


ALL = sorted(
    {
        (p.relative_to(SCHEMAS).as_posix(), pat)
        for p in SCHEMAS.rglob("*.json")
        for pat in patterns(json.loads(p.read_text()))
    }
)


def test_the_schemas_have_patterns() -> None:
    assert len(ALL) >= 10


@pytest.mark.parametrize(("file", "pattern"), ALL, ids=[f"{f}:{p}" for f, p in ALL])
def test_a_pattern_uses_only_the_shared_syntax(file: str, pattern: str) -> None:
    rest = ESCAPE.sub("", pattern)
    assert "\\" not in rest, f"{file}: {pattern!r} has an escape not every engine reads"
    assert "(?" not in rest.replace("(?:", ""), f"{file}: {pattern!r} has a group syntax not shared"
    re.compile(pattern)
