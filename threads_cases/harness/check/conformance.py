"""The conformance suite: data-only tests and case directories run against implementations
(spec/conformance.md).

A suite folder holds ``reduce/``, ``match/`` and ``canonical/`` (data-only JSON tests, see
spec/conformance.md for their shapes), ``cases/`` (case directories) and ``skips/<impl>.json``
(``{"format": 1, "skips": [{"test": "<area>/<id>", "reason": "...", "issue"?, "check"?,
"code"?}]}``, the only way to mark a known failure: a listed test still runs, and gives
``xfail`` while it fails as listed, ``xpass`` (failing) once it passes). Every test becomes
a :class:`~threads_cases.harness.run.runner.CaseResult` whose ``case`` is ``<area>/<id>``, so
reports, JUnit and exit statuses are the same as ``run``'s.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ...case.discovery import discover
from ...core.canonical import canonical_line
from ...core.errors import CaseError
from ...core.matchers import diff_values
from ...core.resources import conformance_dir
from ...core.strictjson import parse, read_json_file
from ...protocol.client import Implementation
from ..baseline.file import Baseline, read_skips
from ..run.runner import CaseResult, SuiteResult, could_not_run, isolation_of, run_one
from .checks import Check
from .expected import apply_baseline
from .levels import levels_of, read_levels

AREAS = ("reduce", "match", "canonical", "driver-requests", "replay", "cases", "agent")
#: Areas of case directories, each run as ``run`` runs a case (spec/conformance.md 2.5, 2.14).
CASE_AREAS = frozenset({"replay", "cases"})
#: Areas whose files each hold ``{"description", "tests": [...]}``: a test per entry, its id
#: ``<file stem>-<n>`` (1-based; spec/conformance.md 1.2).
LISTED_AREAS = frozenset({"driver-requests", "agent"})
DRIVER_FAULTS = frozenset(
    {"driver_crashed", "driver_timeout", "driver_unavailable", "protocol_error", "internal_error"}
)


@dataclass(frozen=True)
class ConformanceTest:
    """One test: its area, id (file or folder name without extension) and path."""

    area: str
    id: str
    path: Path
    #: the entry of a listed area's file (0-based), None for a file or folder of its own
    index: int | None = None

    @property
    def name(self) -> str:
        return f"{self.area}/{self.id}"


def load_tests(
    root: str | Path | None = None, areas: Sequence[str] = AREAS
) -> list[ConformanceTest]:
    """Every test under a suite folder (default: the suite shipped in the package)."""
    base = Path(root) if root is not None else conformance_dir()
    if not base.is_dir():
        raise CaseError("invalid_request", f"no conformance suite at {base}", file=str(base))
    tests: list[ConformanceTest] = []
    for area in areas:
        d = base / area
        if not d.is_dir():
            continue
        if area in CASE_AREAS:
            tests += [ConformanceTest(area, p.name, p) for p in discover([d])]
        elif area in LISTED_AREAS:
            tests += [t for p in sorted(d.glob("*.json")) for t in _listed(area, p)]
        else:
            tests += [ConformanceTest(area, p.stem, p) for p in sorted(d.glob("*.json"))]
    return tests


def _listed(area: str, path: Path) -> list[ConformanceTest]:
    """A test per entry of a listed area's file; one test that gives ``case_invalid`` when
    the file cannot be read or has no list of tests."""
    try:
        entries = read_json_file(path, code="case_invalid").get("tests")
    except (CaseError, AttributeError):
        entries = None
    if not isinstance(entries, list):
        return [ConformanceTest(area, path.stem, path)]
    return [ConformanceTest(area, f"{path.stem}-{i + 1}", path, i) for i in range(len(entries))]


def load_skips(root: str | Path | None, impl: str) -> Baseline:
    """The known failures of ``impl``: ``skips/<impl>.json`` read as a baseline (no entries
    when there is none; ``baseline_invalid`` for a malformed file)."""
    base = Path(root) if root is not None else conformance_dir()
    return read_skips(base / "skips" / f"{impl}.json", impl)


def _expect_error(want: str, run: Callable[[], Any]) -> Check:
    try:
        run()
    except CaseError as err:
        if err.code in DRIVER_FAULTS:
            raise
        if err.code == want:
            return Check("error", "pass", f"refused with {want}")
        return Check(
            "error",
            "fail",
            f"refused with {err.code}, expected {want}: {err.message}",
            "wrong_error",
        )
    return Check("error", "fail", f"accepted, expected a refusal with {want}", "not_refused")


def _reduce_test(doc: dict[str, Any], impl: Implementation) -> Check:
    msg: dict[str, Any] = {"cmd": "reduce", "dialect": doc["dialect"]}
    for key in ("log", "log_text", "log_base64"):
        if key in doc:
            msg[key] = doc[key]
    if "error" in doc:
        return _expect_error(doc["error"], lambda: impl.request(msg))
    try:
        state = impl.request(msg)["state"]
    except CaseError as err:
        if err.code in DRIVER_FAULTS:
            raise
        return Check("state", "fail", f"refused with {err.code}: {err.message}", err.code)
    diffs = diff_values(doc["state"], state)
    if diffs:
        return Check(
            "state",
            "fail",
            f"{len(diffs)} difference(s) from the expected state",
            "state_mismatch",
            tuple(diffs),
        )
    return Check("state", "pass")


def _match_test(doc: dict[str, Any], impl: Implementation) -> Check:
    matcher = parse(doc["matcher_text"].encode()) if "matcher_text" in doc else doc["matcher"]
    event = parse(doc["event_text"].encode()) if "event_text" in doc else doc["event"]
    try:
        answer = impl.request({"cmd": "match", "matcher": matcher, "event": event})
    except CaseError as err:
        if err.code in DRIVER_FAULTS:
            raise
        return Check("matched", "fail", f"refused with {err.code}: {err.message}", err.code)
    got = answer["matched"]
    if got is not doc["matched"]:
        return Check(
            "matched",
            "fail",
            f"matched={str(got).lower()}, expected {str(doc['matched']).lower()}",
            "match_differs",
        )
    # the explanation is checked too (matchers.md 7.2): a driver that answers differences
    # must answer these, byte for byte as canonical JSON
    want = canonical_line(doc.get("differences"))
    got_diffs = canonical_line(answer.get("differences"))
    if "differences" in doc and "differences" in answer and got_diffs != want:
        return Check(
            "matched",
            "fail",
            f"differences {got_diffs.decode()[:200]}, expected {want.decode()[:200]}",
            "match_differs",
        )
    return Check("matched", "pass")


def _canonical_test(doc: dict[str, Any], impl: Implementation) -> Check:
    if "input_text" in doc:
        msg: dict[str, Any] = {"cmd": "canonicalize", "text": doc["input_text"]}
    else:
        msg = {"cmd": "canonicalize", "text_base64": doc["input_base64"]}
    if "error" in doc:
        return _expect_error(doc["error"], lambda: impl.request(msg))
    try:
        out = impl.request(msg)
    except CaseError as err:
        if err.code in DRIVER_FAULTS:
            raise
        return Check("canonical", "fail", f"refused with {err.code}: {err.message}", err.code)
    bad = [
        k
        for k, want in (("text", doc["line"]), ("document", doc["document"]))
        if out.get(k) != want
    ]
    if bad:
        return Check(
            "canonical",
            "fail",
            f"{' and '.join(bad)} differ from the expected bytes",
            "bytes_differ",
        )
    return Check("canonical", "pass")


def _with_case_path(doc: dict[str, Any], folder: Path) -> dict[str, Any]:
    """An ``agent/`` entry with its request's ``case.path`` made absolute from ``folder``."""
    request = dict(doc["request"])
    case = dict(request["case"])
    case["path"] = str(folder / case["path"])
    request["case"] = case
    return {**doc, "request": request}


def _driver_request_test(doc: dict[str, Any], impl: Implementation) -> Check:
    """A ``driver-requests`` entry (driver-protocol.md 1.2, 3.2a, 3.2b): its line sent as
    written, and the answer a failure with the test's code, pointer and id."""
    from ...protocol.answers import HARNESS_ONLY

    line = (
        doc["request_text"].encode("utf-8")
        if "request_text" in doc
        else canonical_line(doc["request"])
    )
    exchange = getattr(impl, "exchange_line", None)
    if exchange is None:
        raise CaseError("driver_unavailable", f"{impl.name} cannot be sent a request line")
    answer = exchange(line)
    want_id = doc.get("answer_id", doc.get("request", {}).get("id"))
    error = answer.get("error") if isinstance(answer, dict) else None
    if not isinstance(error, dict) or answer.get("ok") is not False:
        return Check("error", "fail", f"answered {answer!r}, expected a refusal", "not_refused")
    got = (error.get("code"), error.get("pointer"), answer.get("id"))
    if error.get("code") in HARNESS_ONLY or error.get("code") == "internal_error":
        # a driver failure is never a test's answer (spec/conformance.md 3.2)
        raise CaseError("protocol_error", f"{impl.name} answered {error.get('code')}: {error}")
    message = doc.get("message")  # agent/: the message byte for byte, when given
    if got == (doc["code"], doc["pointer"], want_id) and message in (None, error.get("message")):
        return Check("error", "pass", f"refused with {doc['code']} at {doc['pointer']!r}")
    return Check(
        "error",
        "fail",
        f"answered code {got[0]!r}, pointer {got[1]!r}, id {got[2]!r}"
        f"{'' if message is None else ', message ' + repr(error.get('message'))}; expected "
        f"{doc['code']!r}, {doc['pointer']!r}, {want_id!r}"
        f"{'' if message is None else ', message ' + repr(message)}",
        "wrong_error",
    )


RUNNERS: dict[str, Callable[[dict[str, Any], Implementation], Check]] = {
    "reduce": _reduce_test,
    "match": _match_test,
    "canonical": _canonical_test,
    "driver-requests": _driver_request_test,
    "agent": _driver_request_test,
}


def run_test(
    test: ConformanceTest, impl: Implementation, skips: Baseline, strict: bool = False
) -> CaseResult:
    """Run one conformance test on one implementation, judged against the known failures in
    ``skips`` (``xfail`` / ``xpass``, :mod:`.expected`); never raises for a bad test."""
    return apply_baseline(_run_test(test, impl), skips, strict)


def _run_test(test: ConformanceTest, impl: Implementation) -> CaseResult:
    if test.area in CASE_AREAS:
        r = run_one(test.path, impl, None)
        r.case = test.name
        return r
    started = time.perf_counter()
    result = CaseResult(test.name, str(test.path), impl.name, "error")
    try:
        try:
            doc = read_json_file(test.path, code="case_invalid")
        except CaseError:
            result.unreadable = True  # the test is broken, not the implementation
            raise
        if test.area in LISTED_AREAS:
            if test.index is None:
                raise KeyError("tests")
            doc = doc["tests"][test.index]
        if test.area == "agent":  # its case paths are relative to its folder (2.12)
            doc = _with_case_path(doc, test.path.parent)
        check = RUNNERS[test.area](doc, impl)
        result.checks = [check]
        result.verdict = "pass" if check.result == "pass" else "fail"
        result.reasons = [] if check.result == "pass" else [check.code or check.id]
    except CaseError as err:
        could_not_run(result, impl, err)
    except (KeyError, TypeError) as exc:
        result.unreadable = True
        result.reasons = ["case_invalid"]
        result.message = f"malformed test file: {type(exc).__name__}: {exc}"
    finally:
        result.duration_ms = (time.perf_counter() - started) * 1000
    return result


def run_conformance(
    root: str | Path | None,
    implementations: Sequence[Implementation],
    *,
    areas: Sequence[str] = AREAS,
    pattern: str | None = None,
    strict: bool = False,
    jobs: int = 1,
    on_result: Callable[[CaseResult], None] | None = None,
) -> SuiteResult:
    """Run the suite under ``root`` on every implementation; one result per test and
    implementation. Raises ``CaseError("invalid_request")`` when no test is found."""
    tests = load_tests(root, areas)
    if pattern:
        tests = [t for t in tests if pattern in t.name]
    if not tests:
        raise CaseError("invalid_request", "no conformance tests found")
    started = time.time()
    t0 = time.perf_counter()
    skips = {i.name: load_skips(root, i.name) for i in implementations}

    def lane(impl: Implementation) -> list[CaseResult]:
        out = []
        for t in tests:
            r = run_test(t, impl, skips[impl.name], strict)
            out.append(r)
            if on_result is not None:
                on_result(r)
        return out

    try:
        # one lane per implementation: each driver process serves one request at a time
        with ThreadPoolExecutor(max_workers=max(1, min(jobs, len(implementations)))) as pool:
            lanes = list(pool.map(lane, implementations))
    finally:
        for impl in implementations:
            impl.close()
    results = [r for t_index in range(len(tests)) for r in (lane_[t_index] for lane_ in lanes)]
    names = [i.name for i in implementations]
    # levels are judged on whole areas: a -k selection runs none whole (conformance.md 9)
    whole = [] if pattern else list(areas)
    levels = levels_of(results, names, read_levels(root), whole, AREAS)
    return SuiteResult(
        results,
        [i.name for i in implementations],
        strict,
        time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(started)),
        (time.perf_counter() - t0) * 1000,
        isolation={i.name: isolation_of(i) for i in implementations},
        levels=levels,
    )


def area_of(result: CaseResult) -> str:
    return result.case.split("/", 1)[0] if "/" in result.case else "cases"


def diff_reports(a: list[dict[str, Any]], b: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Results whose verdict changed between two reports' result lines:
    ``[{case, implementation, before, after}]`` (``None`` for a result missing on one side)."""
    before = {(r["case"], r["implementation"]): r["verdict"] for r in a}
    after = {(r["case"], r["implementation"]): r["verdict"] for r in b}
    out = []
    for key in sorted(set(before) | set(after)):
        if before.get(key) != after.get(key):
            out.append(
                {
                    "case": key[0],
                    "implementation": key[1],
                    "before": before.get(key),
                    "after": after.get(key),
                }
            )
    return out
