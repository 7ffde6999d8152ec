"""The public API of ``threads_cases`` stays stable: this list changes only on purpose.

Adding a name means adding it here; removing or renaming one breaks users and needs a
deprecation first (re-export the old name from its new module).
"""

from __future__ import annotations

import subprocess
import sys

import threads_cases

PUBLIC = [
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


def test_the_public_names_are_exactly_these() -> None:
    assert sorted(threads_cases.__all__) == PUBLIC
    assert sorted(dir(threads_cases)) == PUBLIC


def test_every_public_name_resolves() -> None:
    for name in PUBLIC:
        value = getattr(threads_cases, name)
        assert value is not None, name
        if name != "__version__":
            # the object lives in a subpackage; the top-level name is a re-export of it
            assert value.__module__.startswith("threads_cases."), (name, value.__module__)


def test_star_import_gives_the_public_names() -> None:
    ns: dict[str, object] = {}
    exec("from threads_cases import *", ns)
    assert sorted(k for k in ns if k != "__builtins__") == PUBLIC


def test_importing_the_package_loads_no_submodule_eagerly() -> None:
    # the pytest plugin imports the package in every pytest run: it must stay cheap
    code = (
        "import sys, threads_cases; "
        "print(sorted(m for m in sys.modules if m.startswith('threads_cases.')))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    # case.verifier (typing only) is where the package registers the harness's replay as every
    # save's default verifier: the case layer never imports the harness (tests/test_layers.py)
    loaded = "['threads_cases._version', 'threads_cases.case', 'threads_cases.case.verifier']"
    assert out.stdout.strip() == loaded, out.stdout
