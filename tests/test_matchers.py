"""Unit tests of threads_cases.core.matchers (spec/matchers.md)."""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

import pytest

from threads_cases import CaseError, canonical_line, read_log
from threads_cases.core.matchers import (
    MATCHER_KEYS,
    Difference,
    diff_values,
    differences,
    explain,
    find_all,
    match_in_order,
    matches,
    nearest,
    validate_matcher,
    value_matches,
    values_equal,
)
from threads_cases.core.schemas import validator

ROOT = Path(__file__).resolve().parent.parent
EVENTS = list(read_log(ROOT / "tests" / "data" / "sample-thread.jsonl"))  # seq 0..8, e0..e8


def by_type(type_: str) -> dict[str, Any]:
    return next(ev for ev in EVENTS if ev["type"] == type_)


def with_data(event: dict[str, Any], **changes: Any) -> dict[str, Any]:
    return {**event, "data": {**event["data"], **changes}}


# --------------------------------------------------------------------------- validate_matcher

VALID = [
    {"type": "tool_result"},
    {"type": "tool_result", "data": {"is_error": False}},
    {"type": "x_custom", "data": None},
    {"type": "user_message", "data": [1, "a", None, True, {"k": []}]},
    {
        "type": "tool_result",
        "seq": 7,
        "actor_kind": "tool",
        "epoch": 0,
        "branch_id": "main",
        "critical": False,
    },
    {"type": "user_message", "seq": 3.0},
    {"type": "user_message", "epoch": 9007199254740991},
]

INVALID: list[tuple[Any, str, str]] = [
    # (matcher, pointer, words the message must contain)
    ([], "", "not an array"),
    ("tool_result", "", "JSON object"),
    (None, "", "not null"),
    ({}, "", '"type"'),
    ({"data": {}}, "", '"type"'),
    ({"type": "tool_result", "sqe": 1}, "/sqe", 'did you mean "seq"'),
    ({"type": "tool_result", "actorKind": "tool"}, "/actorKind", '"actor_kind"'),
    ({"type": "tool_result", "event_id": "e7"}, "/event_id", "unknown matcher key"),
    ({"type": "tool_result", "a/b": 1}, "/a~1b", "unknown matcher key"),
    ({"type": "tool_result", "zz": 1, "aa": 2}, "/aa", "unknown matcher key"),
    ({"type": 7}, "/type", "type must be a non-empty string"),
    ({"type": ""}, "/type", "type must be a non-empty string"),
    ({"type": None}, "/type", "not null"),
    ({"type": "tool_result", "seq": "7"}, "/seq", "seq must be an integer"),
    ({"type": "tool_result", "seq": True}, "/seq", "not true"),
    ({"type": "tool_result", "seq": -1}, "/seq", "from 0 to 2^53-1"),
    ({"type": "tool_result", "seq": 7.5}, "/seq", "not 7.5"),
    ({"type": "tool_result", "seq": 2**53}, "/seq", "seq must be an integer"),
    ({"type": "tool_result", "epoch": None}, "/epoch", "epoch must be an integer"),
    ({"type": "tool_result", "epoch": float("inf")}, "/epoch", "epoch must be an integer"),
    ({"type": "tool_result", "actor_kind": 1}, "/actor_kind", "actor_kind must be"),
    ({"type": "tool_result", "branch_id": ""}, "/branch_id", "branch_id must be"),
    ({"type": "tool_result", "critical": 0}, "/critical", "true or false, not 0"),
    ({"type": "tool_result", "critical": "false"}, "/critical", "critical must be"),
    ({"type": "tool_result", "data": {"x": float("nan")}}, "/data/x", "a number is not finite"),
    ({"type": "tool_result", "data": [1, 2**60]}, "/data/1", "outside +-(2^53-1)"),
    ({"type": "tool_result", "data": {"a": {1: 2}}}, "/data/a", "an object key is not a string"),
    ({"type": "tool_result", "data": {"s": {1, 2}}}, "/data/s", "a set is not a JSON value"),
    ({"type": "tool_result", "data": (1, 2)}, "/data", "a tuple is not a JSON value"),
    ({"type": "tool_result", "data": {"m~/": b"x"}}, "/data/m~0~1", "bytes"),
]


@pytest.mark.parametrize("matcher", VALID)
def test_valid_matchers_are_returned_unchanged(matcher: dict[str, Any]) -> None:
    assert validate_matcher(matcher) is matcher
    errors = list(validator("matcher.schema.json").iter_errors(matcher))
    assert not errors, errors[0].message


@pytest.mark.parametrize(("matcher", "pointer", "words"), INVALID, ids=[p for _, p, _ in INVALID])
def test_invalid_matchers_are_refused(matcher: Any, pointer: str, words: str) -> None:
    with pytest.raises(CaseError) as info:
        validate_matcher(matcher)
    assert info.value.code == "invalid_request"
    assert info.value.location.pointer == pointer
    assert words in info.value.message


@pytest.mark.parametrize(("matcher", "pointer", "words"), INVALID, ids=[p for _, p, _ in INVALID])
def test_the_schema_refuses_what_it_can_express(matcher: Any, pointer: str, words: str) -> None:
    if pointer.startswith("/data"):
        return  # data may be any JSON value: its refusals are about non-JSON values
    try:
        canonical_line(matcher)
    except CaseError:
        return  # not a JSON value: a strict reader refuses it before any schema sees it
    assert not validator("matcher.schema.json").is_valid(matcher)


def test_refusals_point_below_the_callers_pointer() -> None:
    with pytest.raises(CaseError) as info:
        validate_matcher({"type": "x_a", "seq": "1"}, pointer="/expect/must/2")
    assert info.value.location.pointer == "/expect/must/2/seq"
    with pytest.raises(CaseError) as info:
        validate_matcher({"seq": 1}, pointer="/expect/must/2")
    assert info.value.location.pointer == "/expect/must/2"
    assert info.value.exit_status == 2


def test_matcher_keys_agree_with_the_schema() -> None:
    from threads_cases.core.schemas import schema_document

    doc = schema_document("matcher.schema.json")
    assert set(doc["properties"]) == MATCHER_KEYS
    assert doc["required"] == ["type"]
    assert doc["additionalProperties"] is False


def test_functions_taking_a_matcher_validate_it() -> None:
    bad = {"type": "tool_result", "bogus": 1}
    for call in (
        lambda: matches(bad, EVENTS[7]),
        lambda: differences(bad, EVENTS[7]),
        lambda: nearest(bad, EVENTS),
        lambda: explain(bad, EVENTS),
    ):
        with pytest.raises(CaseError) as info:
            call()
        assert (info.value.code, info.value.location.pointer) == ("invalid_request", "/bogus")
    for many in (find_all, match_in_order):
        with pytest.raises(CaseError) as info:
            many([{"type": "user_message"}, bad], EVENTS)
        assert info.value.location.pointer == "/1/bogus"


# --------------------------------------------------------------------------- value rules


@pytest.mark.parametrize(
    ("expected", "actual", "result"),
    [
        (1, 1.0, True),
        (1.0, 1, True),
        (-0.0, 0, True),
        (0, -0.0, True),
        (True, 1, False),
        (1, True, False),
        (False, 0, False),
        (0, False, False),
        (None, False, False),
        (None, None, True),
        ("é", "e\u0301", False),
        ("a", "a ", False),
        ({}, {"a": 1}, True),
        ({}, [], False),
        ([], {}, False),
        ([], [], True),
        ([], [None], False),
        ({"a": None}, {}, False),
        ({"a": None}, {"a": None}, True),
        ([{"a": 1}], [{"a": 1, "b": 2}], True),
        ([1, 2], [2, 1], False),
        ([[1]], [[1.0]], True),
        (2**53 - 1, float(2**53 - 1), True),
        (2**53 - 1, float(2**53 - 2), False),
        (float("nan"), float("nan"), False),
        ((1,), (1,), False),
    ],
)
def test_value_matches(expected: Any, actual: Any, result: bool) -> None:
    assert value_matches(expected, actual) is result


def test_values_equal_needs_the_same_keys() -> None:
    assert value_matches({"a": 1}, {"a": 1, "b": 2})
    assert not values_equal({"a": 1}, {"a": 1, "b": 2})
    assert not values_equal({"a": 1, "b": 2}, {"a": 1})
    assert values_equal({"a": [1, {"b": -0.0}]}, {"a": [1.0, {"b": 0}]})
    assert not values_equal({"a": True}, {"a": 1})
    assert not values_equal({"a": None}, {"b": None})


# --------------------------------------------------------------------------- matches, differences


def test_matches_on_the_sample_log() -> None:
    assert matches({"type": "tool_result", "data": {"is_error": False}}, EVENTS[7])
    assert matches({"type": "tool_result", "seq": 7.0, "actor_kind": "tool"}, EVENTS[7])
    assert not matches({"type": "tool_result", "critical": True}, EVENTS[7])
    assert not matches({"type": "tool_result", "data": {"is_error": 0}}, EVENTS[7])
    assert matches({"type": "sandbox_read", "data": {"artifact": None}}, EVENTS[6])
    assert not matches({"type": "tool_result", "data": {"error": None}}, EVENTS[7])


def test_differences_of_a_data_mismatch() -> None:
    ev = with_data(EVENTS[7], is_error=True)
    m = {"type": "tool_result", "data": {"is_error": False, "name": "read_file"}}
    assert differences(m, ev) == [Difference("/data/is_error", False, True)]


def test_differences_of_envelope_keys_and_missing_keys_in_path_order() -> None:
    m = {
        "type": "tool_called",
        "seq": 5,
        "critical": True,
        "data": {"zeta": 1, "input": {"path": "b.txt", "mode": "w"}, "name": "read_file"},
    }
    assert differences(m, EVENTS[7]) == [
        Difference("/critical", True, False),
        Difference("/data/input", {"path": "b.txt", "mode": "w"}, None, missing=True),
        Difference("/data/zeta", 1, None, missing=True),
        Difference("/seq", 5, 7),
        Difference("/type", "tool_called", "tool_result"),
    ]


def test_differences_report_an_array_of_another_length_at_the_array() -> None:
    ev = EVENTS[4]  # model_responded with one tool_use block
    m = {"type": "model_responded", "data": {"message": {"content": [{}, {}]}}}
    [d] = differences(m, ev)
    assert d.pointer == "/data/message/content"
    assert d.expected == [{}, {}] and d.actual == ev["data"]["message"]["content"]
    assert not d.missing


def test_differences_inside_arrays_and_of_other_kinds() -> None:
    ev = EVENTS[4]
    m = {
        "type": "model_responded",
        "data": {"message": {"content": [{"type": "text", "input": {"path": 1}}]}, "usage": []},
    }
    assert differences(m, ev) == [
        Difference("/data/message/content/0/input/path", 1, "a.txt"),
        Difference("/data/message/content/0/type", "text", "tool_use"),
        Difference("/data/usage", [], {"input_tokens": 3, "output_tokens": 4}),
    ]


def test_differences_escape_keys_and_note_missing_envelope_keys() -> None:
    ev = {"type": "x_a", "data": {"a/b": {"c~d": 1}}}
    m = {"type": "x_a", "seq": 1, "data": {"a/b": {"c~d": 2}}}
    assert differences(m, ev) == [
        Difference("/data/a~1b/c~0d", 2, 1),
        Difference("/seq", 1, None, missing=True),
    ]


def test_difference_is_frozen_and_serialisable() -> None:
    d = Difference("/data/x", 1, None, missing=True)
    with pytest.raises(dataclasses.FrozenInstanceError):
        d.pointer = "/y"  # type: ignore[misc]
    assert d.to_json() == {
        "pointer": "/data/x",
        "expected": 1,
        "actual": None,
        "missing": True,
        "extra": False,
    }
    assert d.render() == "/data/x expected 1, missing"
    assert Difference("", 1, 2).render() == "/ expected 1, got 2"
    assert Difference("/k", None, [1], extra=True).render() == "/k not expected, got [1]"


# --------------------------------------------------------------------------- diff_values


def test_diff_values_reports_both_sides_in_path_order() -> None:
    expected = {"b": [1, 2], "a": {"x": 1, "y": None}, "c": "s", "e": [{"k": 1}]}
    actual = {"b": [1], "a": {"x": 1.0, "z": False}, "d": True, "e": [{"k": True}]}
    assert diff_values(expected, actual) == [
        Difference("/a/y", None, None, missing=True),
        Difference("/a/z", None, False, extra=True),
        Difference("/b", [1, 2], [1]),
        Difference("/c", "s", None, missing=True),
        Difference("/d", None, True, extra=True),
        Difference("/e/0/k", 1, True),
    ]


def test_diff_values_orders_array_items_by_index_and_takes_a_prefix() -> None:
    expected = list(range(12))
    actual = [*range(2), 20, *range(3, 10), 100, 11]
    assert [d.pointer for d in diff_values(expected, actual, "/state/xs")] == [
        "/state/xs/2",
        "/state/xs/10",
    ]


def test_diff_values_of_scalars_and_equal_values() -> None:
    assert diff_values(1, 1.0) == []
    assert diff_values({"a": [-0.0]}, {"a": [0]}) == []
    assert diff_values(True, 1) == [Difference("", True, 1)]
    assert diff_values("é", "e\u0301", "/s") == [Difference("/s", "é", "e\u0301")]


# --------------------------------------------------------------------------- nearest, explain


def test_nearest_prefers_the_same_type_then_fewest_differences_then_earliest() -> None:
    ok = with_data(EVENTS[7], is_error=False)
    bad1 = {**with_data(EVENTS[7], is_error=True), "seq": 9, "event_id": "e9"}
    bad2 = {**with_data(EVENTS[7], is_error=True, name="x"), "seq": 10, "event_id": "e10"}
    m = {"type": "tool_result", "data": {"is_error": False, "name": "read_file"}}
    # an event of another type with fewer differences loses to one of the same type
    other = {**EVENTS[5], "data": {"is_error": False, "name": "read_file"}}
    assert nearest(m, [other, bad2, bad1]) == (2, [Difference("/data/is_error", False, True)])
    assert nearest(m, [bad1, bad1]) is not None
    assert nearest(m, [bad1, bad1])[0] == 0  # type: ignore[index]
    assert nearest(m, [bad2, ok, bad1]) == (1, [])
    assert nearest(m, []) is None
    # no event of the type: fewest differences wins
    found = nearest({"type": "forked", "data": {"name": "read_file"}}, EVENTS)
    assert found is not None and found[0] == 5


def test_explain_names_the_matcher_the_nearest_event_and_the_differences() -> None:
    events = [*EVENTS[:7], with_data(EVENTS[7], is_error=True), EVENTS[8]]
    text = explain({"type": "tool_result", "data": {"is_error": False}}, events)
    assert text == (
        'must {"data":{"is_error":false},"type":"tool_result"} matched no event; '
        "nearest is seq 7 tool_result (e7): /data/is_error expected false, got true"
    )
    assert "\n" not in text


def test_explain_joins_several_differences_and_marks_missing_keys() -> None:
    m = {"type": "tool_result", "seq": 3, "data": {"exit_code": 0, "is_error": True}}
    assert explain(m, EVENTS, label="expect") == (
        'expect {"data":{"exit_code":0,"is_error":true},"seq":3,"type":"tool_result"} '
        "matched no event; nearest is seq 7 tool_result (e7): /data/exit_code expected 0, "
        "missing; /data/is_error expected true, got false; /seq expected 3, got 7"
    )


def test_explain_without_events_and_with_a_match_and_long_values() -> None:
    m = {"type": "user_message"}
    assert explain(m, []) == 'must {"type":"user_message"} matched no event; the log has no events'
    assert explain(m, EVENTS) == 'must {"type":"user_message"} matches seq 1 user_message (e1)'
    long = "x" * 500
    text = explain({"type": "user_message", "data": {"content": long}}, EVENTS)
    assert text.endswith('got "hi: there"')
    assert '/data/content expected "xxx' in text and '..., got "hi: there"' in text
    assert len(text) < 800  # the matcher is written in full, values are cut


# --------------------------------------------------------------------------- find_all, in order


def test_find_all_gives_the_first_match_of_each_matcher_in_any_order() -> None:
    ms: list[dict[str, Any]] = [
        {"type": "turn_completed"},
        {"type": "tool_result", "data": {"is_error": True}},
        {"type": "model_responded"},
        {"type": "x_never"},
        {"actor_kind": "system", "type": "turn_started"},
        {"type": "turn_started"},
    ]
    assert find_all(ms, EVENTS) == [8, None, 4, None, 2, 2]
    assert find_all([], EVENTS) == []
    assert find_all(ms[:1], []) == [None]


def test_match_in_order_is_an_ordered_subsequence() -> None:
    t = [{"type": "user_message"}, {"type": "tool_called"}, {"type": "turn_completed"}]
    assert match_in_order(t, EVENTS) == (True, 3)
    assert match_in_order(list(reversed(t)), EVENTS) == (False, 1)
    assert match_in_order([], EVENTS) == (True, 0)
    assert match_in_order(t, []) == (False, 0)
    # one event satisfies at most one matcher
    assert match_in_order([{"type": "user_message"}] * 2, EVENTS) == (False, 1)
    # greedy earliest still finds the longest prefix
    msgs = [{**EVENTS[1], "seq": i, "event_id": f"m{i}"} for i in range(3)]
    assert match_in_order([{"type": "user_message"}] * 3, msgs) == (True, 3)
    m_seq2 = {"type": "user_message", "seq": 2}
    assert match_in_order([{"type": "user_message"}, m_seq2], msgs) == (True, 2)
    assert match_in_order([m_seq2, {"type": "user_message"}], msgs) == (False, 1)
