"""threads-cases: save agent turns as cases and replay them against several implementations.

The public API (spec/ holds the normative text):

* :class:`Thread`, :class:`AgentSpec`, :class:`ToolSpec`, :class:`FakeSandbox`,
  :class:`ScriptedModel`, :class:`CaseExpectation` - record threads and save turns as cases
  (spec/case-format.md);
* :func:`run_case`, :func:`run_suite` - replay cases and get verdicts (spec/replay.md),
  with your own agent (an :class:`AgentSpec`, or an :class:`AgentRef` / reference string
  each implementation loads: spec/replay.md section 8);
  with ``live=LiveRun(LiveOptions(settings=ClientSettings(...)))`` a turn's model calls go
  live within budgets (spec/replay.md section 11);
  :func:`load_baseline` / :class:`Baseline` - expected failures for ``run_suite(baseline=...)``
  (spec/replay.md section 12); :func:`suite_coverage` / :class:`Coverage` - what a suite
  exercises and what the spec defines that it does not (spec/conformance.md section 8);
* :func:`reduce`, :func:`read_log`, :func:`validate_log`, :func:`encode_log` - thread logs
  (spec/thread-log.md, spec/reducer.md);
* :func:`canonical_line`, :func:`canonical_document`, :func:`parse_json` - strict and
  canonical JSON (spec/strict-json.md);
* :func:`get_dialect` - per-language spellings (spec/dialects.md);
* :class:`CaseError` - every refusal, with a reason code (spec/reason-codes.md).

Names are imported on first use, so importing the package (as the pytest plugin does in
every pytest run) stays cheap.
"""

from __future__ import annotations

import importlib
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ._version import __version__ as __version__
from .case.verifier import use_verifier


def _replay_verifier(path: Path, dialects: Sequence[str], agent: Any) -> None:
    """Every save's default verifier (threads_cases.case.verifier): the harness's replay,
    registered here because the case layer never imports the harness (tests/test_layers.py)."""
    from .harness.run.verify import verify_case_dir

    verify_case_dir(path, dialects, agent)


use_verifier(_replay_verifier)

#: public name -> (module, attribute)
_EXPORTS: dict[str, tuple[str, str]] = {
    "AgentSpec": (".reference.agent", "AgentSpec"),
    "AgentRef": (".reference.agent_ref", "AgentRef"),
    "ToolResult": (".reference.agent", "ToolResult"),
    "ToolSpec": (".reference.agent", "ToolSpec"),
    "CaseExpectation": (".case.directory", "CaseExpectation"),
    "Dialect": (".core.dialects", "Dialect"),
    "dialect_names": (".core.dialects", "dialect_names"),
    "get_dialect": (".core.dialects", "get_dialect"),
    "CaseError": (".core.errors", "CaseError"),
    "Problem": (".core.errors", "Problem"),
    "encode_log": (".core.log", "encode_log"),
    "read_log": (".core.log", "read_log"),
    "reduce": (".core.log", "reduce"),
    "validate_log": (".core.log", "validate_log"),
    "ScriptedModel": (".reference.model", "ScriptedModel"),
    "Reducer": (".core.reducer", "Reducer"),
    "initial_state": (".core.reducer", "initial_state"),
    "Baseline": (".harness.baseline.file", "Baseline"),
    "Coverage": (".harness.check.coverage", "Coverage"),
    "suite_coverage": (".harness.check.coverage", "suite_coverage"),
    "load_baseline": (".harness.baseline.file", "load_baseline"),
    "CaseResult": (".harness.run.runner", "CaseResult"),
    "ClientSettings": (".harness.live.providers", "ClientSettings"),
    "LiveOptions": (".harness.live.desk", "LiveOptions"),
    "LiveRun": (".harness.live.desk", "LiveRun"),
    "SuiteResult": (".harness.run.runner", "SuiteResult"),
    "run_case": (".harness.run.runner", "run_case"),
    "run_suite": (".harness.run.runner", "run_suite"),
    "DirectorySandbox": (".reference.sandbox", "DirectorySandbox"),
    "FakeSandbox": (".reference.sandbox", "FakeSandbox"),
    "SaveResult": (".case.save", "SaveResult"),
    "canonical_document": (".core.canonical", "canonical_document"),
    "canonical_line": (".core.canonical", "canonical_line"),
    "parse_json": (".core.strictjson", "parse"),
    "Thread": (".reference.thread", "Thread"),
}

__all__ = [
    "AgentRef",
    "AgentSpec",
    "Baseline",
    "CaseError",
    "CaseExpectation",
    "CaseResult",
    "ClientSettings",
    "Coverage",
    "Dialect",
    "DirectorySandbox",
    "FakeSandbox",
    "LiveOptions",
    "LiveRun",
    "Problem",
    "Reducer",
    "SaveResult",
    "ScriptedModel",
    "SuiteResult",
    "Thread",
    "ToolResult",
    "ToolSpec",
    "__version__",
    "canonical_document",
    "canonical_line",
    "dialect_names",
    "encode_log",
    "get_dialect",
    "initial_state",
    "load_baseline",
    "parse_json",
    "read_log",
    "reduce",
    "run_case",
    "run_suite",
    "suite_coverage",
    "validate_log",
]


def __getattr__(name: str) -> Any:
    try:
        module, attr = _EXPORTS[name]
    except KeyError:
        raise AttributeError(f"module 'threads_cases' has no attribute {name!r}") from None
    value = getattr(importlib.import_module(module, __name__), attr)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return __all__


if TYPE_CHECKING:
    from .case.directory import CaseExpectation
    from .case.save import SaveResult
    from .core.canonical import canonical_document, canonical_line
    from .core.dialects import Dialect, dialect_names, get_dialect
    from .core.errors import CaseError, Problem
    from .core.log import encode_log, read_log, reduce, validate_log
    from .core.reducer import Reducer, initial_state
    from .core.strictjson import parse as parse_json
    from .harness.baseline.file import Baseline, load_baseline
    from .harness.check.coverage import Coverage, suite_coverage
    from .harness.live.desk import LiveOptions, LiveRun
    from .harness.live.providers import ClientSettings
    from .harness.run.runner import CaseResult, SuiteResult, run_case, run_suite
    from .reference.agent import AgentSpec, ToolResult, ToolSpec
    from .reference.agent_ref import AgentRef
    from .reference.model import ScriptedModel
    from .reference.sandbox import DirectorySandbox, FakeSandbox
    from .reference.thread import Thread
