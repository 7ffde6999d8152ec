"""The stop tests of spec/conformance/replay/ (``NNN-slug.json`` beside its case directories,
spec/conformance.md 2.14): a cut copy of one of those cases whose replay stops, and the stop
(code, stop key, message), events, request hashes and consumption every runtime answers. The
harness's runner (``threads-cases conformance --area replay``) in process and through the
subprocess driver; ts/test/replayStops.test.ts runs the same files; tools/make_replay_tests.py
writes them."""

from __future__ import annotations

import pytest
from conformance_runs import area_tests, in_process, through_the_driver

from threads_cases.harness.check.conformance import ConformanceTest

TESTS = [t for t in area_tests("replay") if t.path.suffix == ".json"]


def test_the_area_pins_a_stop_of_each_kind_a_recording_can_lack() -> None:
    assert [t.id for t in TESTS] == ["006-model-exhausted-stop", "007-missing-stub-stop"]


@pytest.mark.parametrize("test", TESTS, ids=[t.id for t in TESTS])
def test_replay_stop_conformance(test: ConformanceTest) -> None:
    assert in_process(test) == []


def test_through_the_subprocess_driver() -> None:
    assert through_the_driver("replay") == []
