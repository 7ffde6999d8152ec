"""Layers point one way (issue 33): a module never imports a module of a higher layer, not even
lazily (inside a function), under ``if TYPE_CHECKING:``, or by name through
``importlib.import_module``; and two folders of one layer never import each other. There is
no exception list.

The layers, lowest first (a module may import its own folder and any lower layer):

0. ``core/`` (strict and canonical JSON, dialects, the log reader, the reducer, matchers,
   request hashing) and ``_version``;
1. ``case/``: the case format (the directory, loading, writing, artifacts, sandbox paths,
   discovery, saving a built case); a save is handed its verifier (``case/verifier.py``);
2. ``reference/``: the Python runtime (agent, model, sandbox, record, replay);
3. ``protocol/``: the driver protocol, whose server runs the reference runtime;
4. ``harness/`` (running, checking and reporting suites) and ``importers/`` (transcripts to
   thread logs), independent of each other;
5. ``review/``: looking at cases and reports (validate, show, diff, fmt, stale), using the
   harness's report reading and first divergence, never the other way;
6. the API: the package's ``__init__`` (the public names; it registers the harness's replay
   as every save's default verifier), ``pytest.py`` (the ``threads_case`` helpers) and
   ``save_log.py`` (the ``save`` command's library form: a log or transcript to a case);
7. ``cli/``: parse and render;
8. ``__main__``: ``python -m threads_cases``, the command line.

The graph is read with ``ast`` from every module of ``threads_cases/``; relative imports are
resolved from the importing module's package.
"""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parent.parent / "threads_cases"

#: the first part of a module's name below ``threads_cases`` -> its layer ("" is __init__)
LAYERS: dict[str, int] = {
    "core": 0,
    "_version": 0,
    "case": 1,
    "reference": 2,
    "protocol": 3,
    "harness": 4,
    "importers": 4,
    "review": 5,
    "": 6,
    "pytest": 6,
    "save_log": 6,
    "cli": 7,
    "__main__": 8,
}


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _imports(path: Path) -> list[tuple[int, str]]:
    """(line, absolute module) of every import of ``threads_cases`` in ``path``: top-level,
    in functions and classes, under TYPE_CHECKING, and ``import_module("...")`` literals."""
    name = _module_name(path)
    package = name if path.name == "__init__.py" else name.rsplit(".", 1)[0]
    out: list[tuple[int, str]] = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom):
            if node.level:
                parts = package.split(".")
                base = parts[: len(parts) - node.level + 1]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            # `from . import x` imports the module x when there is one
            for alias in node.names:
                sub = f"{target}.{alias.name}"
                out.append((node.lineno, sub if _is_module(sub) else target))
        elif isinstance(node, ast.Import):
            out += [(node.lineno, alias.name) for alias in node.names]
        elif (
            isinstance(node, ast.Call)
            and getattr(node.func, "attr", getattr(node.func, "id", None)) == "import_module"
            and node.args
            and isinstance(node.args[0], ast.Constant)
            and isinstance(node.args[0].value, str)
        ):
            target = node.args[0].value
            if target.startswith("."):
                target = package + target
            out.append((node.lineno, target))
    return [(line, t) for line, t in out if t == "threads_cases" or t.startswith("threads_cases.")]


def _is_module(name: str) -> bool:
    path = PACKAGE.parent.joinpath(*name.split("."))
    return path.with_suffix(".py").is_file() or (path / "__init__.py").is_file()


def _folder(module: str) -> str:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else ""


def _modules() -> list[Path]:
    return sorted(p for p in PACKAGE.rglob("*.py") if "_data" not in p.parts)


def test_every_folder_has_a_layer() -> None:
    folders = {_folder(_module_name(p)) for p in _modules()}
    assert folders <= set(LAYERS), sorted(folders - set(LAYERS))


def test_no_module_imports_a_higher_layer_or_a_sibling_folder() -> None:
    wrong = []
    for path in _modules():
        source = _module_name(path)
        mine = _folder(source)
        for line, target in _imports(path):
            theirs = _folder(target)
            if theirs == mine:
                continue
            if LAYERS[theirs] >= LAYERS[mine]:
                wrong.append(
                    f"{path.relative_to(PACKAGE.parent)}:{line}: {source} (layer "
                    f"{LAYERS[mine]}) imports {target} (layer {LAYERS[theirs]})"
                )
    assert not wrong, "\n".join(wrong)


def test_the_graph_reader_sees_lazy_and_type_checking_imports(tmp_path: Path) -> None:
    """The reader itself: an import in a function, one under TYPE_CHECKING and an
    ``import_module`` literal are all edges (a check that saw only top-level imports would
    pass a package whose lazy imports run upward)."""
    module = PACKAGE / "case" / "verify.py"
    edges = {t for _, t in _imports(module)}
    assert "threads_cases.core.request" in edges  # imported inside request_mismatches
    init = {t for _, t in _imports(PACKAGE / "__init__.py")}
    assert "threads_cases.harness.run.verify" in init  # inside _replay_verifier
    assert "threads_cases.reference.thread" in init  # under TYPE_CHECKING
