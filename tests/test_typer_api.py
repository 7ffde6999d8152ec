"""The CLI on typer's public API only, with the typer range it is tested with pinned (issue 33):
no module imports a private name of typer (``typer._click``, ``typer.main._get_param``, ...),
and the typer installed is one of the pinned range (pyproject.toml), so a typer release
that could change every command's error lines and exit statuses fails here first instead of
in users' hands. The error lines and statuses themselves: tests/test_cli_native.py."""

from __future__ import annotations

import ast
import tomllib
from importlib.metadata import version
from pathlib import Path

from packaging.requirements import Requirement

ROOT = Path(__file__).resolve().parent.parent


def _private_typer_imports(path: Path) -> list[str]:
    out = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names = [node.module] + [f"{node.module}.{a.name}" for a in node.names]
        elif isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        else:
            continue
        for name in names:
            parts = name.split(".")
            if parts[0] == "typer" and any(p.startswith("_") for p in parts[1:]):
                out.append(f"{path.relative_to(ROOT)}:{node.lineno}: {name}")
    return out


def test_no_module_imports_a_private_name_of_typer() -> None:
    found = [
        hit
        for p in sorted((ROOT / "threads_cases").rglob("*.py"))
        for hit in _private_typer_imports(p)
    ]
    assert not found, "\n".join(found)


def test_the_installed_typer_is_in_the_pinned_range() -> None:
    deps = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["dependencies"]
    typer = next(Requirement(d) for d in deps if Requirement(d).name == "typer")
    assert any(s.operator == "<" for s in typer.specifier), f"typer is not pinned: {typer}"
    installed = version("typer")
    assert typer.specifier.contains(installed), (
        f"typer {installed} is outside the range threads-cases is tested with ({typer}): "
        "run tests/test_cli_native.py with it, then widen the range in pyproject.toml"
    )
