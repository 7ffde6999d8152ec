"""Sessions: tests, lint, typecheck, bench, demo (``nox -l`` lists them)."""

from __future__ import annotations

import nox

nox.options.sessions = ["tests", "lint", "typecheck"]
nox.options.reuse_existing_virtualenvs = True

PYTHON = "3.11"


@nox.session(python=PYTHON)
def tests(session: nox.Session) -> None:
    """Run the Python test suite (unit, property, conformance and end-to-end tests)."""
    session.install("-e", ".[dev]")
    session.run("pytest", *session.posargs)


@nox.session(python=PYTHON)
def lint(session: nox.Session) -> None:
    """ruff check and ruff format --check."""
    session.install("ruff")
    session.run("ruff", "check", ".")
    session.run("ruff", "format", "--check", ".")


@nox.session(python=PYTHON)
def typecheck(session: nox.Session) -> None:
    """mypy --strict on the package."""
    session.install("-e", ".[dev]")
    session.run("mypy", "threads_cases")


@nox.session(python=PYTHON)
def bench(session: nox.Session) -> None:
    """Benchmarks under benchmarks/; figures are ratios against baselines of the same run."""
    session.install("-e", ".[dev]")
    session.run("python", "benchmarks/run.py", *session.posargs)


@nox.session(python=PYTHON)
def demo(session: nox.Session) -> None:
    """The main job on bundled samples: reduce a sample log and print its state."""
    session.install("-e", ".")
    session.run("threads-cases", "reduce", "examples/sample-thread.jsonl", "--format", "pretty")
