"""The data-only save-refusal tests (spec/conformance/save-errors/, spec/conformance.md 2.11):
a recorded thread saved with options that make the save refuse, and the refusal's code and
hint, the same text in every implementation. ts/test/saveErrors.test.ts runs the same files;
tools/make_save_errors_tests.py writes them."""

from __future__ import annotations

import base64
from pathlib import Path
from typing import Any

import pytest

from threads_cases.case.artifacts import ArtifactStore
from threads_cases.case.save import save_case
from threads_cases.core.strictjson import parse
from threads_cases.reference.sandbox import FakeSandbox

ROOT = Path(__file__).resolve().parent.parent / "spec" / "conformance" / "save-errors"
TESTS = sorted(ROOT.glob("*.json"))
KEYS = {"description", "log", "at", "name", "artifacts", "options", "existing", "error"}
#: options of a test, as save_case names them (the TypeScript runner maps them to camelCase)
OPTIONS = {"external_effects", "dialects", "secrets", "expect"}


def run_test(test: dict[str, Any], work: Path) -> dict[str, Any]:
    """Save the test's thread as ``work/cases/<name>`` (unverified: a replay_failed hint names
    each language's own option), after saving it once first when ``existing``; the refusal's
    ``{"code", "hint"}``, or ``{}`` when it saved."""
    store = ArtifactStore({k: base64.b64decode(v) for k, v in test["artifacts"].items()})

    def save(name: str, **options: Any) -> Any:
        return save_case(
            test["log"],
            sandbox=FakeSandbox({}),
            store=store,
            name=name,
            expect=options.pop("expect", None),
            at=test["at"],
            dir=work / "cases",
            verify=False,
            **options,
        )

    if test["existing"]:
        assert save(test["name"]).ok
    r = save(test["name"], **test["options"])
    if r.ok:
        return {}
    assert r.error is not None
    return {"code": r.error.code, "hint": r.error.hint}


def test_the_suite_covers_the_refusals() -> None:
    assert len(TESTS) >= 12


@pytest.mark.parametrize("path", TESTS, ids=[p.stem for p in TESTS])
def test_save_errors_conformance(path: Path, tmp_path: Path) -> None:
    t: dict[str, Any] = parse(path.read_bytes())
    assert set(t) == KEYS and set(t["options"]) <= OPTIONS, sorted(t)
    assert run_test(t, tmp_path) == t["error"]
