"""Coverage of a suite: what its cases exercise on each implementation, and what the spec
defines that none of them does (spec/conformance.md section 8).

:func:`suite_coverage` runs the cases under the given paths on each implementation (the
runner, with each implementation's ``replay`` answers recorded) and reads, per
implementation:

* from each replayed turn (cases the implementation did not skip): the event types, the
  tool kinds, effects and names of ``tool_called`` events, the ``stop_reason`` of
  ``model_responded`` and ``turn_completed``, the ``error.code`` of ``turn_failed``, and the
  envelope keys as the implementation's dialect spells them;
* from each case's prefix log in that dialect: the event types and envelope keys;
* from each case's ``must`` and ``expect``: the matcher features (spec_inventory.py);
* from each result: its reason codes.

A path that is a conformance suite folder (holding ``reduce/``, ``match/`` or
``canonical/``) also counts its data-only tests, read without running them (every
implementation runs every one): the event types and envelope keys of each ``reduce/`` log
the test expects to be accepted (keys only where the test's dialect is the
implementation's), the features of each ``match/`` matcher, and each test's expected
refusal code.

The result compares each category with :func:`.spec_inventory.defined`. Its JSON form
(:meth:`Coverage.to_json`, written by :func:`coverage_document`) holds no path, time or
machine detail, and is sorted, so a committed file changes only when coverage does.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypedDict

from ...case.discovery import discover
from ...core.canonical import canonical_document
from ...core.dialects import get_dialect
from ...core.shapes import JsonObject
from ...core.strictjson import parse, read_json_file
from ...protocol.client import Implementation
from ...reference.agent_ref import AgentRef
from ..run.pool import pooled
from ..run.runner import run_suite
from . import spec_inventory

FORMAT = 1
DATA_AREAS = ("reduce", "match", "canonical")
#: What is seen but has no defined set to compare with.
SEEN_ONLY = ("event_types_replayed", "tool_names", "stop_reasons")


@dataclass
class Exercised:
    """What one implementation exercised, by category (sets of strings)."""

    cases: int = 0
    tests: int = 0
    seen: dict[str, set[str]] = field(default_factory=dict)

    def add(self, category: str, values: Iterable[str]) -> None:
        self.seen.setdefault(category, set()).update(values)


class CategoryCoverage(TypedDict):
    """One category of what the spec defines (event types, stop codes, ...) for one
    implementation: how many items are defined, those exercised and those missing (sorted),
    and the share exercised in percent (1 decimal)."""

    defined: int
    exercised: list[str]
    missing: list[str]
    percent: float


@dataclass(frozen=True)
class Coverage:
    """Per implementation (by name): its dialect and what it exercised."""

    dialects: dict[str, str]
    exercised: dict[str, Exercised]

    def categories(self, impl: str) -> dict[str, CategoryCoverage]:
        """``{category: {defined, exercised, missing, percent}}`` for one implementation."""
        out: dict[str, CategoryCoverage] = {}
        seen = self.exercised[impl].seen
        for cat, want in spec_inventory.defined(self.dialects[impl]).items():
            got = seen.get(cat, set())
            missing = sorted(set(want) - got)
            out[cat] = {
                "defined": len(want),
                "exercised": sorted(got),
                "missing": missing,
                "percent": _percent(len(want) - len(missing), len(want)),
            }
        return out

    def percent(self, impl: str) -> float:
        """The share of every defined item that ``impl`` exercised, in percent (1 decimal)."""
        cats = self.categories(impl).values()
        total = sum(c["defined"] for c in cats)
        return _percent(total - sum(len(c["missing"]) for c in cats), total)

    def to_json(self) -> JsonObject:
        """``{"format": 1, "implementations": {name: {dialect, cases, tests, percent,
        categories: {...}, seen: {event_types_replayed, tool_names, stop_reasons}}}}``."""
        impls = {}
        for name, ex in self.exercised.items():
            impls[name] = {
                "dialect": self.dialects[name],
                "cases": ex.cases,
                "tests": ex.tests,
                "percent": self.percent(name),
                "categories": self.categories(name),
                "seen": {k: sorted(ex.seen.get(k, set())) for k in SEEN_ONLY},
            }
        return {"format": FORMAT, "implementations": impls}


#: What the total counts, said under the table and in a --fail-under failure
TOTAL_COUNTS = (
    "total counts every item the spec defines, in every category; reason_codes are the "
    "fail/drifted codes, which only failing cases exercise, so a green suite scores low "
    "there: gate each category with --fail-under CATEGORY=PERCENT"
)


def fail_under_limits(values: Sequence[str]) -> dict[str, float]:
    """The ``--fail-under`` values (spec/conformance.md 8.4): ``PERCENT`` limits the total
    (key ``"total"``), ``CATEGORY=PERCENT`` one category of :data:`spec_inventory.CATEGORIES`
    (repeatable; the last value of a key wins). Raises ``CaseError("invalid_request")`` for
    an unknown category or a percent that is not a number from 0 to 100."""
    from ...core.errors import CaseError

    out: dict[str, float] = {}
    for value in values:
        key, _, number = value.rpartition("=")
        key = key or "total"
        if key != "total" and key not in spec_inventory.CATEGORIES:
            known = ", ".join(spec_inventory.CATEGORIES)
            raise CaseError(
                "invalid_request",
                f"--fail-under {value}: no category {key!r}",
                hint=f"give PERCENT (the total) or CATEGORY=PERCENT, CATEGORY one of {known}",
            )
        try:
            limit = float(number)
        except ValueError:
            limit = -1.0
        if not 0 <= limit <= 100:
            raise CaseError(
                "invalid_request",
                f"--fail-under {value}: {number!r} is not a percent from 0 to 100",
                hint="give PERCENT or CATEGORY=PERCENT, for example --fail-under event_types=100",
            )
        out[key] = limit
    return out


def below_limits(cov: Coverage, limits: dict[str, float]) -> list[str]:
    """One line per implementation and limit it falls under, saying what was counted."""
    lines = []
    for name in cov.exercised:
        cats = cov.categories(name)
        for key, limit in limits.items():
            if key == "total":
                total = sum(c["defined"] for c in cats.values())
                got = cov.percent(name)
                what = f"of all {total} items the spec defines ({TOTAL_COUNTS})"
                flag = f"{limit:g}"
            else:
                c = cats[key]
                got = c["percent"]
                what = f"of {key} ({c['defined'] - len(c['missing'])}/{c['defined']})"
                flag = f"{key}={limit:g}"
            if got < limit:
                lines.append(f"error: {name} covers {got}% {what}, under --fail-under {flag}")
    return lines


def _percent(part: int, whole: int) -> float:
    return 100.0 if whole == 0 else round(100.0 * part / whole, 1)


def coverage_document(cov: Coverage) -> bytes:
    """The canonical bytes of ``cov`` (the committed file)."""
    return canonical_document(cov.to_json())


class _Recording:
    """An implementation whose ``replay`` answers are kept by case path."""

    def __init__(self, impl: Implementation, sink: dict[str, list[dict[str, Any]]]) -> None:
        self._impl = impl
        self._sink = sink

    def __getattr__(self, name: str) -> Any:
        return getattr(self._impl, name)

    def request(self, message: dict[str, Any], on_model_call: Any = None) -> dict[str, Any]:
        answer = (
            self._impl.request(message)
            if on_model_call is None
            else self._impl.request(message, on_model_call)
        )
        if message.get("cmd") == "replay":
            self._sink[str(message["case"]["path"])] = list(answer.get("events", []))
        return answer

    def close(self) -> None:
        self._impl.close()


def is_conformance_suite(path: Path) -> bool:
    """Whether ``path`` is a conformance suite folder (it holds a data-only test area)."""
    return path.is_dir() and any((path / a).is_dir() for a in DATA_AREAS)


def suite_coverage(
    paths: Sequence[str | os.PathLike[str]],
    implementations: Sequence[Implementation],
    *,
    jobs: int = 1,
    agents: Mapping[str, AgentRef] | None = None,
) -> Coverage:
    """Run the cases under ``paths`` on each implementation and measure what they exercise
    (module docstring), each replaying its agent of ``agents`` (the user's own, by
    reference; spec/replay.md 8) when it has one. The implementations are closed afterwards. Raises
    ``CaseError("invalid_request")`` when no case and no data-only test is found."""
    roots = [Path(p) for p in paths]
    case_paths = [r / "cases" if is_conformance_suite(r) else r for r in roots]
    case_paths = [p for p in case_paths if p.exists()]
    dialects = {i.name: i.dialect for i in implementations}
    exercised = {i.name: Exercised() for i in implementations}
    for root in roots:
        if is_conformance_suite(root):
            for impl in implementations:
                _data_tests(root, impl.dialect, exercised[impl.name])
    if not discover(case_paths):
        if not any(ex.tests for ex in exercised.values()):
            from ...core.errors import CaseError

            raise CaseError("invalid_request", "no cases and no conformance tests found")
        for impl in implementations:
            impl.close()
        return Coverage(dialects, exercised)
    replays: dict[str, dict[str, list[dict[str, Any]]]] = {i.name: {} for i in implementations}
    recording = [_Recording(pooled(i, jobs), replays[i.name]) for i in implementations]
    suite = run_suite(case_paths, recording, jobs=jobs, agents=agents)
    for r in suite.results:
        ex = exercised[r.implementation]
        ex.add("reason_codes", r.reasons)
        if r.verdict == "skip":
            continue
        ex.cases += 1
        dialect = dialects[r.implementation]
        _case_files(Path(r.path), dialect, ex)
        _events(replays[r.implementation].get(r.path, []), dialect, ex, replayed=True)
    return Coverage(dialects, exercised)


def _case_files(case: Path, dialect: str, ex: Exercised) -> None:
    try:
        meta = read_json_file(case / "case.json")
    except Exception:  # an unreadable case is the result's error, already counted
        return
    expect = meta.get("expect", {}) if isinstance(meta, dict) else {}
    must, exp = expect.get("must", []), expect.get("expect", [])
    for m in [*must, *exp]:
        ex.add("matcher_features", matcher_features(m))
    ex.add("matcher_features", ["must"] if must else [])
    ex.add("matcher_features", ["expect"] if exp else [])
    ex.add("matcher_features", ["expect_order"] if len(exp) >= 2 else [])
    log = case / f"log.{dialect}.jsonl"
    if log.is_file():
        _events(_lines(log.read_bytes()), dialect, ex, replayed=False)


def _lines(data: bytes) -> list[dict[str, Any]]:
    """The JSON objects of a log's lines (lines that are not are left out: coverage reads,
    the reducer judges)."""
    out = []
    for line in data.splitlines():
        try:
            value = parse(line)
        except Exception:
            continue
        if isinstance(value, dict):
            out.append(value)
    return out


def _events(raw: list[dict[str, Any]], dialect: str, ex: Exercised, *, replayed: bool) -> None:
    d = get_dialect(dialect)
    for e in raw:
        ex.add("dialect_fields", e)
        try:
            event = d.decode_event(e)
        except Exception:
            continue
        kind = event.get("type")
        if not isinstance(kind, str):
            continue
        ex.add("event_types", [kind])
        if not replayed:
            continue
        ex.add("event_types_replayed", [kind])
        raw_data = event.get("data")
        data: dict[str, Any] = raw_data if isinstance(raw_data, dict) else {}
        if kind == "tool_called":
            ex.add("tool_kinds", [str(data.get("kind"))])
            ex.add("tool_effects", [str(data.get("effect"))])
            ex.add("tool_names", [str(data.get("name"))])
        elif kind in ("model_responded", "turn_completed") and "stop_reason" in data:
            ex.add("stop_reasons", [str(data["stop_reason"])])
        elif kind == "turn_failed" and isinstance(data.get("error"), dict):
            ex.add("reason_codes", [str(data["error"].get("code"))])


def matcher_features(matcher: Any) -> list[str]:
    """The features one matcher uses (spec_inventory.py): ``envelope:<key>`` per envelope
    key, ``data``, ``data_nested``, ``data_array``."""
    if not isinstance(matcher, dict):
        return []
    out = [f"envelope:{k}" for k in matcher if k not in ("type", "data")]
    if "data" in matcher:
        out.append("data")
        stack = list(matcher["data"].values()) if isinstance(matcher["data"], dict) else []
        while stack:
            v = stack.pop()
            if isinstance(v, dict):
                out.append("data_nested")
                stack.extend(v.values())
            elif isinstance(v, list):
                out.append("data_array")
                stack.extend(v)
    return out


def _data_tests(root: Path, dialect: str, ex: Exercised) -> None:
    for area in DATA_AREAS:
        for p in sorted((root / area).glob("*.json")):
            try:
                doc = read_json_file(p)
            except Exception:
                continue
            if not isinstance(doc, dict):
                continue
            ex.tests += 1
            if isinstance(doc.get("error"), str):
                ex.add("reason_codes", [doc["error"]])
            if area == "reduce" and "error" not in doc:  # a refused log exercises the refusal
                _reduce_log(doc, dialect, ex)
            elif area == "match":
                m = doc.get("matcher")
                if "matcher_text" in doc:
                    try:
                        m = parse(str(doc["matcher_text"]).encode())
                    except Exception:
                        m = None
                ex.add("matcher_features", matcher_features(m))


def _reduce_log(doc: dict[str, Any], dialect: str, ex: Exercised) -> None:
    if isinstance(doc.get("log"), list):
        lines = [e for e in doc["log"] if isinstance(e, dict)]
    elif isinstance(doc.get("log_text"), str):
        lines = _lines(doc["log_text"].encode())
    else:
        return
    if doc.get("dialect") == dialect:
        _events(lines, dialect, ex, replayed=False)
        return
    other = str(doc.get("dialect"))
    try:
        d = get_dialect(other)
    except Exception:
        return
    for e in lines:  # another dialect's log: its event types count, not its spellings
        try:
            kind = d.decode_event(e).get("type")
        except Exception:
            continue
        if isinstance(kind, str):
            ex.add("event_types", [kind])
