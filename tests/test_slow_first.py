"""tests/slow_first.py: the slowest xdist groups and modules are collected first, stably."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import slow_first


class _Marker:
    def __init__(self, name: str) -> None:
        self.args, self.kwargs = (name,), {}


class _Item:
    def __init__(self, nodeid: str, group: str | None = None) -> None:
        self.nodeid, self._group = nodeid, group

    def get_closest_marker(self, name: str) -> Any:
        return _Marker(self._group) if name == "xdist_group" and self._group else None


def _items() -> list[Any]:
    return [
        _Item("tests/test_a.py::one"),
        _Item("tests/test_b.py::two"),
        _Item("tests/test_readme.py::x", group="readme"),
        _Item("tests/test_a.py::three"),
    ]


def test_without_recorded_times_the_groups_go_first(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(slow_first, "DURATIONS", tmp_path / "none.json")
    items = _items()
    slow_first.order(items)
    assert [i.nodeid for i in items] == [
        "tests/test_readme.py::x",
        "tests/test_a.py::one",
        "tests/test_b.py::two",
        "tests/test_a.py::three",
    ]


def test_recorded_times_order_modules_and_groups(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "durations.json"
    path.write_text(json.dumps({"tests/test_b.py": 50.0, "group:readme": 20.0}))
    monkeypatch.setattr(slow_first, "DURATIONS", path)
    items = _items()
    slow_first.order(items)
    assert [i.nodeid for i in items][:2] == ["tests/test_b.py::two", "tests/test_readme.py::x"]


def test_a_report_names_its_unit() -> None:
    assert slow_first.unit_of("tests/test_readme.py::t[x]@readme-3.12") == "group:readme-3.12"
    assert slow_first.unit_of("tests/test_a.py::t[a@b]") == "tests/test_a.py"
    assert slow_first.unit_of("tests/test_a.py::t") == "tests/test_a.py"
