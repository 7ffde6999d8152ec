"""canonical_line writes most values with orjson; it must give rfc8785's bytes exactly.

The properties draw new values on every run (not derandomized), so the examples of many CI
runs add up; one run draws 225 (about a third of the CPU of the 550 it drew before, which
under coverage made this the costliest property file)."""

from __future__ import annotations

import rfc8785
from hypothesis import given, settings
from hypothesis import strategies as st

from threads_cases.core.canonical import (
    canonical_document,
    canonical_line,
    dump_document,
    write_document,
)
from threads_cases.core.strictjson import parse

scalars = (
    st.none()
    | st.booleans()
    | st.integers(-(2**53) + 1, 2**53 - 1)
    | st.floats(allow_nan=False, allow_infinity=False).filter(
        lambda f: not (2**53 - 1 < abs(f) < 1e21)
    )
    | st.text()
)
values = st.recursive(
    scalars,
    lambda c: st.lists(c, max_size=4) | st.dictionaries(st.text(), c, max_size=4),
    max_leaves=25,
)


@settings(max_examples=100, deadline=None)
@given(values)
def test_canonical_line_equals_the_reference_jcs_writer(value: object) -> None:
    assert canonical_line(value) == rfc8785.dumps(value)


@settings(max_examples=50, deadline=None)
@given(values)
def test_a_canonical_document_reads_back_to_the_same_canonical_line(value: object) -> None:
    assert canonical_line(parse(canonical_document(value))) == canonical_line(value)


def test_keys_ordered_by_utf16_not_code_points() -> None:
    # U+1F600 (a surrogate pair in UTF-16) sorts before U+E000 in UTF-16, after it by code point
    value = {"\ue000": 1, "\U0001f600": 2}
    assert canonical_line(value) == rfc8785.dumps(value)
    assert canonical_line(value).index("\U0001f600".encode()) < canonical_line(value).index(
        "\ue000".encode()
    )


def _reference_document(value: object, indent: str = "") -> str:
    """The canonical document written the plain way (spec/strict-json.md): the streaming
    writer and the orjson path must give exactly these bytes."""
    inner = indent + "  "
    if isinstance(value, dict) and value:
        keys = sorted(value, key=lambda k: k.encode("utf-16-be", "surrogatepass"))
        body = ",\n".join(
            f"{inner}{rfc8785.dumps(k).decode()}: {_reference_document(value[k], inner)}"
            for k in keys
        )
        return "{\n" + body + "\n" + indent + "}"
    if isinstance(value, list) and value:
        body = ",\n".join(inner + _reference_document(v, inner) for v in value)
        return "[\n" + body + "\n" + indent + "]"
    return rfc8785.dumps(value).decode()


@settings(max_examples=75, deadline=None)
@given(values)
def test_both_document_writers_give_the_reference_bytes(value: object) -> None:
    expected = (_reference_document(value) + "\n").encode()
    assert canonical_document(value) == expected
    pieces: list[bytes] = []
    write_document(value, pieces.append)  # the streaming writer, also where orjson would do
    assert b"".join(pieces) + b"\n" == expected
    pieces.clear()
    dump_document(value, pieces.append)
    assert b"".join(pieces) == expected


def test_a_document_deeper_than_orjson_writes_is_streamed() -> None:
    value: object = "x"
    for _ in range(255):
        value = [value]
    assert canonical_document(value) == (_reference_document(value) + "\n").encode()


def test_is_plain_tells_what_orjson_writes_as_jcs() -> None:
    import orjson

    from threads_cases.core.canonical import canonical_line, is_plain

    plain = {"b": [1, "x\u00e9", None, True], "a": {"k": "v"}}
    assert is_plain(plain)
    assert canonical_line(plain) == orjson.dumps(plain, option=orjson.OPT_SORT_KEYS)
    for not_plain in ({"a": 1.5}, {"\ue000": 1}, {"a": 2**60}, {"a": (1, 2)}, [[1.0]]):
        assert not is_plain(not_plain)
