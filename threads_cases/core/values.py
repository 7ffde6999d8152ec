"""JSON value equality as every implementation computes it (spec/matchers.md sections 3, 5
and 6): numbers by value (``1`` equals ``1.0``, ``-0`` equals ``0``), booleans apart from
numbers, strings by code points, ``null`` only equal to ``null``; the subset rule
(:func:`value_matches`) and full equality (:func:`values_equal`). Never raises.
"""

from __future__ import annotations

from typing import Any

#: Kinds of JSON values (spec/matchers.md section 3).
NULL, BOOL, NUMBER, STRING, ARRAY, OBJECT, OTHER = range(7)


def json_kind(value: Any) -> int:
    """The kind of a JSON value: one of :data:`NULL` ... :data:`OTHER` (not JSON)."""
    if value is None:
        return NULL
    if isinstance(value, bool):  # before int: bool is a subclass of int in Python
        return BOOL
    if isinstance(value, (int, float)):
        return NUMBER
    if isinstance(value, str):
        return STRING
    if isinstance(value, list):
        return ARRAY
    if isinstance(value, dict):
        return OBJECT
    return OTHER


def scalar_equal(kind: int, a: Any, b: Any) -> bool:
    """Equality of two scalars of the same ``kind`` (section 3)."""
    if kind == NULL:
        return True
    if kind == OTHER:
        return False  # not a JSON value: equal to nothing
    # Numbers: Python compares int and float by exact value (1 == 1.0, 0 == -0.0);
    # NaN, which is not JSON, equals nothing. Booleans and strings: plain equality.
    return bool(a == b)


def value_matches(expected: Any, actual: Any) -> bool:
    """Whether ``actual`` matches ``expected`` under the subset rule (spec/matchers.md 5).

    ``expected`` and ``actual`` are JSON values (dict, list, str, int, float, bool, None).
    Objects: every key of ``expected`` is present in ``actual`` and its value matches
    (``actual`` may have more keys). Arrays: same length, items matched pairwise by the same
    rule. Scalars: equal under the value rules of section 3. Never raises.
    """
    ke = json_kind(expected)
    if ke != json_kind(actual):
        return False
    if ke == OBJECT:
        for key, value in expected.items():
            if key not in actual or not value_matches(value, actual[key]):
                return False
        return True
    if ke == ARRAY:
        if len(expected) != len(actual):
            return False
        return all(value_matches(e, a) for e, a in zip(expected, actual, strict=True))
    return scalar_equal(ke, expected, actual)


def values_equal(a: Any, b: Any) -> bool:
    """Whether two JSON values are equal (spec/matchers.md section 6).

    As :func:`value_matches`, but objects must have the same set of keys, so the relation is
    symmetric. Key order never matters; array order does. Never raises.
    """
    ka = json_kind(a)
    if ka != json_kind(b):
        return False
    if ka == OBJECT:
        if len(a) != len(b):
            return False
        for key, value in a.items():
            if key not in b or not values_equal(value, b[key]):
                return False
        return True
    if ka == ARRAY:
        if len(a) != len(b):
            return False
        return all(values_equal(x, y) for x, y in zip(a, b, strict=True))
    return scalar_equal(ka, a, b)
