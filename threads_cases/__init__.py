"""threads-cases: save agent turns as cases and replay them against several implementations.

The public API (spec/ holds the normative text):

* :func:`reduce`, :func:`read_log`, :func:`validate_log`, :func:`encode_log` - thread logs
  (spec/thread-log.md, spec/reducer.md);
* :func:`canonical_line`, :func:`canonical_document`, :func:`parse_json` - strict and
  canonical JSON (spec/strict-json.md);
* :func:`get_dialect` - per-language spellings (spec/dialects.md);
* :class:`CaseError` - every refusal, with a reason code (spec/reason-codes.md).
"""

from __future__ import annotations

from ._version import __version__
from .agent import AgentSpec, ToolResult, ToolSpec
from .case import CaseExpectation
from .dialects import Dialect, dialect_names, get_dialect
from .errors import CaseError, Problem
from .log import encode_log, read_log, reduce, validate_log
from .model import ScriptedModel
from .reducer import Reducer, initial_state
from .runner import CaseResult, SuiteResult, run_case, run_suite
from .sandbox import DirectorySandbox, FakeSandbox
from .save import SaveResult
from .strictjson import canonical_document, canonical_line
from .strictjson import parse as parse_json
from .thread import Thread

__all__ = [
    "AgentSpec",
    "CaseError",
    "CaseExpectation",
    "CaseResult",
    "Dialect",
    "DirectorySandbox",
    "FakeSandbox",
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
    "parse_json",
    "read_log",
    "reduce",
    "run_case",
    "run_suite",
    "validate_log",
]
