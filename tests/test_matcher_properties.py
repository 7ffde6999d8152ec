"""Property tests of the value rules of threads_cases.core.matchers (spec/matchers.md 3, 5-7)."""

from __future__ import annotations

from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from threads_cases.core.canonical import MAX_SAFE_INTEGER
from threads_cases.core.matchers import (
    diff_values,
    differences,
    matches,
    value_matches,
    values_equal,
)

SETTINGS = settings(max_examples=50, deadline=None, suppress_health_check=[HealthCheck.too_slow])

SCALARS = (
    st.none()
    | st.booleans()
    | st.integers(-MAX_SAFE_INTEGER, MAX_SAFE_INTEGER)
    | st.sampled_from([0, 1, -1, 0.0, -0.0, 1.0, 2**53 - 1])
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=8)
    | st.sampled_from(["é", "e\u0301", "A", "a", "a ", "", "読み", "\U0001f680"])
)
KEYS = st.text(max_size=5) | st.sampled_from(["a", "b", "type", "is_error", "a/b", "~"])
JSON = st.recursive(
    SCALARS,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(KEYS, inner, max_size=4),
    max_leaves=20,
)
OBJECTS = st.dictionaries(KEYS, JSON, max_size=5)


def sub_pattern(data: st.DataObject, value: Any) -> Any:
    """A matcher for ``value``: random subsets of each object's keys, all the way down."""
    if isinstance(value, dict):
        keys = data.draw(st.lists(st.sampled_from(sorted(value)), unique=True)) if value else []
        return {k: sub_pattern(data, value[k]) for k in keys}
    if isinstance(value, list):
        return [sub_pattern(data, v) for v in value]
    return value


def respell(value: Any) -> Any:
    """The same JSON value spelled otherwise: integral numbers as floats and back."""
    if isinstance(value, dict):
        return {k: respell(v) for k, v in reversed(list(value.items()))}
    if isinstance(value, list):
        return [respell(v) for v in value]
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return value
    if isinstance(value, int):
        return float(value)
    if value.is_integer() and abs(value) <= MAX_SAFE_INTEGER:
        return int(value)
    return value


@SETTINGS
@given(JSON)
def test_a_value_matches_and_equals_itself(value: Any) -> None:
    assert value_matches(value, value)
    assert values_equal(value, value)
    assert diff_values(value, value) == []


@SETTINGS
@given(JSON)
def test_a_value_matches_and_equals_its_respelling(value: Any) -> None:
    other = respell(value)
    assert value_matches(value, other) and value_matches(other, value)
    assert values_equal(value, other)


@SETTINGS
@given(JSON, st.data())
def test_a_value_matches_any_subset_of_its_keys(value: Any, data: st.DataObject) -> None:
    pattern = sub_pattern(data, value)
    assert value_matches(pattern, value)
    event = {"type": "x_prop", "seq": 0, "data": {"v": value}}
    m = {"type": "x_prop", "data": {"v": pattern}}
    assert matches(m, event)
    assert differences(m, event) == []


@SETTINGS
@given(OBJECTS, KEYS, JSON, st.data())
def test_a_key_the_value_lacks_makes_the_match_fail(
    value: dict[str, Any], key: str, extra: Any, data: st.DataObject
) -> None:
    if key in value:
        return
    pattern = sub_pattern(data, value)
    pattern[key] = extra
    assert not value_matches(pattern, value)
    event = {"type": "x_prop", "data": value}
    diffs = differences({"type": "x_prop", "data": pattern}, event)
    assert any(
        d.missing and d.pointer == "/data/" + key.replace("~", "~0").replace("/", "~1")
        for d in diffs
    )


def related(data: st.DataObject, a: Any) -> Any:
    """A value that is often close to ``a``: a respelling, a sub-pattern or anything."""
    how = data.draw(st.sampled_from(["respell", "subset", "subset-respell", "any"]))
    if how == "respell":
        return respell(a)
    if how == "subset":
        return sub_pattern(data, a)
    if how == "subset-respell":
        return respell(sub_pattern(data, a))
    return data.draw(JSON)


@SETTINGS
@given(JSON, st.data())
def test_values_equal_is_symmetric_and_agrees_with_diff_values(a: Any, data: st.DataObject) -> None:
    b = related(data, a)
    assert values_equal(a, b) is values_equal(b, a)
    assert (diff_values(a, b) == []) is values_equal(a, b)
    assert (diff_values(b, a) == []) is values_equal(a, b)


@SETTINGS
@given(JSON, st.data())
def test_matching_both_ways_is_equality(a: Any, data: st.DataObject) -> None:
    b = related(data, a)
    assert (value_matches(a, b) and value_matches(b, a)) is values_equal(a, b)


@SETTINGS
@given(OBJECTS, st.data())
def test_differences_are_empty_exactly_when_the_event_matches(
    value: dict[str, Any], data: st.DataObject
) -> None:
    pattern = related(data, value)
    event = {"type": "x_prop", "seq": 1, "data": value}
    m = {"type": "x_prop", "data": pattern}
    diffs = differences(m, event)
    assert (diffs == []) is matches(m, event) is value_matches(pattern, value)
    pointers = [d.pointer for d in diffs]
    assert len(set(pointers)) == len(pointers)


@SETTINGS
@given(st.booleans(), st.integers(0, 1) | st.sampled_from([0.0, 1.0]))
def test_booleans_are_never_numbers(flag: bool, number: int | float) -> None:
    assert not value_matches(flag, number) and not value_matches(number, flag)
    assert not values_equal([flag], [number])
