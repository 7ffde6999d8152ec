"""No silent green (issue 12): drifted results are counted apart with their reasons, strict
mode from --strict or pyproject.toml fails them, a case without expectations warns on every
run, and an implementation the user named that cannot start gives errors, a non-zero exit and
one line saying why (CLI and pytest plugin)."""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path

import pytest
from conftest import cli

from threads_cases.core.canonical import canonical_document
from threads_cases.harness.run.registry import resolve_implementations

pytest_plugins = ["pytester"]

ROOT = Path(__file__).resolve().parents[1]
CASES = ROOT / "spec" / "conformance" / "cases"
#: a PATH with this venv's scripts and nothing else: no node
NO_NODE = str(Path(sys.executable).parent)


def _copy(tmp_path: Path, *names: str) -> Path:
    root = tmp_path / "cases"
    for n in names:
        shutil.copytree(CASES / n, root / n)
    return root


def _edit(path: Path, change: object) -> None:
    doc = json.loads(path.read_bytes())
    change(doc)  # type: ignore[operator]
    path.write_bytes(canonical_document(doc))


def _drifted_suite(tmp_path: Path) -> Path:
    root = _copy(tmp_path, "reads-notes", "lists-files")
    # a stub the replay never uses: stub_unused, a drift
    _edit(
        root / "reads-notes" / "stubs.json",
        lambda d: d["calls"].append(
            {"tool": "web_search", "input": {}, "result": {"content": "x", "is_error": False}}
        ),
    )
    return root


def test_the_summary_counts_drifted_apart_and_names_why(tmp_path: Path) -> None:
    root = _drifted_suite(tmp_path)
    p = cli("run", str(root), "--impl", "threads-py", cwd=tmp_path)
    assert p.returncode == 0, p.stdout
    assert "1 pass, 1 drifted in " in p.stdout
    assert "drifted: 1 stub_unused (passing; --strict fails them)" in p.stdout


@pytest.mark.parametrize("how", ["flag", "pyproject"])
def test_strict_makes_drifted_failing(tmp_path: Path, how: str) -> None:
    root = _drifted_suite(tmp_path)
    args = ["run", str(root), "--impl", "threads-py"]
    if how == "flag":
        args.append("--strict")
    else:
        (tmp_path / "pyproject.toml").write_text("[tool.threads-cases]\nstrict = true\n")
    p = cli(*args, cwd=tmp_path)
    assert p.returncode == 3, p.stdout
    assert "drifted: 1 stub_unused (failing under --strict)" in p.stdout


def test_a_strict_setting_that_is_not_a_boolean_is_refused(tmp_path: Path) -> None:
    root = _copy(tmp_path, "reads-notes")
    (tmp_path / "pyproject.toml").write_text('[tool.threads-cases]\nstrict = "yes"\n')
    p = cli("run", str(root), cwd=tmp_path)
    assert p.returncode == 2 and "error[invalid_request]" in p.stderr
    assert "strict" in p.stderr


def test_a_case_without_expectations_warns_on_every_run(tmp_path: Path) -> None:
    root = _copy(tmp_path, "reads-notes")
    _edit(root / "reads-notes" / "case.json", lambda d: d.update(expect={"must": [], "expect": []}))
    p = cli("run", str(root), "--impl", "threads-py", "--format", "json", cwd=tmp_path)
    result = [json.loads(x) for x in p.stdout.splitlines()][1]
    assert result["verdict"] == "pass" and "no_expectations" in result["warnings"]
    p = cli("run", str(root), "--impl", "threads-py", cwd=tmp_path)
    assert "(no_expectations)" in p.stderr and "warning" not in p.stdout  # a warning: stderr


def test_a_named_implementation_that_cannot_start_errors_in_one_line(tmp_path: Path) -> None:
    root = _copy(tmp_path, "reads-notes", "lists-files", "deletes-file")
    p = cli(
        "run",
        str(root),
        "--impl",
        "threads-py",
        "--impl",
        "threads-ts",
        cwd=tmp_path,
        env={"PATH": NO_NODE},
    )
    assert p.returncode == 3, p.stdout
    lines = [x for x in p.stdout.splitlines() if "could not start" in x]
    assert len(lines) == 1, p.stdout
    assert "threads-ts could not start (3 case(s)): node is not installed" in lines[0]
    assert "npm run build" in lines[0]
    assert "╭" not in p.stdout  # no panel per case
    assert "3 pass, 3 error" in p.stdout
    # not named: skipped, exit 0, and still one line says why and how to install it
    for verbose in ((), ("-v",)):
        p = cli("run", str(root), *verbose, cwd=tmp_path, env={"PATH": NO_NODE})
        assert p.returncode == 0 and "3 skip" in p.stdout, p.stdout
        lines = [x for x in p.stdout.splitlines() if "could not start" in x]
        assert len(lines) == 1, p.stdout
        assert lines[0].startswith(
            "skip[driver_unavailable]: threads-ts could not start (3 case(s) skipped; "
            "`--impl threads-ts` makes this an error): node is not installed"
        ), lines[0]
        assert "npm run build" in lines[0] or "install" in lines[0]


def test_an_implementation_configured_in_pyproject_counts_as_named(tmp_path: Path) -> None:
    root = _copy(tmp_path, "reads-notes")
    (tmp_path / "pyproject.toml").write_text(
        '[tool.threads-cases.implementations.mine]\ncommand = ["./no-such-driver"]\n'
    )
    p = cli("run", str(root), "--format", "json", cwd=tmp_path)
    assert p.returncode == 3, p.stdout
    mine = [json.loads(x) for x in p.stdout.splitlines() if '"mine"' in x and '"result"' in x]
    # unavailable under every isolation (checked before a namespace tool starts it): never skip
    assert [(r["verdict"], r["reasons"]) for r in mine] == [("error", ["driver_unavailable"])]


def test_the_pytest_plugin_fails_when_a_named_implementation_cannot_run(
    tmp_path: Path, pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = _copy(tmp_path, "reads-notes", "lists-files")
    monkeypatch.setenv("PATH", NO_NODE)
    monkeypatch.delenv("PYTEST_ADDOPTS", raising=False)
    monkeypatch.chdir(root)
    # in process (the plugin needs no process of its own); without hypothesis's plugin, which
    # would import all of hypothesis at the end of the run
    p = pytester.runpytest_inprocess(
        "-q", "-p", "no:cacheprovider", "-p", "no:hypothesispytest", "--rootdir", root,
        "--threads-cases", root, "--threads-cases-impl", "threads-ts",
    )  # fmt: skip
    out = p.stdout.str()
    assert p.ret != 0, out
    assert "2 failed" in out and "skipped" not in out
    assert "threads-ts could not start: error[driver_unavailable]: node is not installed" in out
    assert "Traceback" not in out


def test_required_and_restarts_are_fields_of_every_implementation() -> None:
    for impl in resolve_implementations(["threads-py", "threads-ts"], required={"threads-ts"}):
        assert impl.restarts == 0
        assert impl.required is (impl.name == "threads-ts")
        impl.close()


def _py_only(tmp_path: Path) -> Path:
    root = _copy(tmp_path, "reads-notes", "lists-files")
    _edit(root / "reads-notes" / "case.json", lambda d: d.__setitem__("dialects", ["threads-py"]))
    for name in ("log.threads-ts.jsonl", "expected.threads-ts.json"):
        (root / "reads-notes" / name).unlink()  # a case holds only the dialects it lists
    p = cli("fmt", str(root), cwd=tmp_path)  # the fingerprint, as a user would
    assert p.returncode == 0, p.stderr
    return root


def test_a_named_implementation_that_no_selected_case_lists_is_refused(tmp_path: Path) -> None:
    root = _py_only(tmp_path)
    for impls in (["threads-ts"], ["threads-py", "threads-ts"]):
        named = [a for i in impls for a in ("--impl", i)]
        p = cli("run", str(root), "-k", "reads-notes", *named, cwd=tmp_path)
        assert p.returncode == 2, p.stdout
        assert "skip" not in p.stdout
        assert p.stderr.count("error[invalid_request]: threads-ts would run none of the 1 ") == 1
        assert "do not list its dialect threads-ts (reads-notes: threads-py)" in p.stderr
        assert "hint: select cases that list threads-ts" in p.stderr
    p = cli(
        "run", str(root), "-k", "reads", "--impl", "threads-ts", "--format", "json", cwd=tmp_path
    )
    assert p.returncode == 2 and json.loads(p.stdout)["code"] == "invalid_request", p.stdout
    # a named implementation that runs some of the selected cases: the others skip, saying why
    p = cli("run", str(root), "--impl", "threads-py", "--impl", "threads-ts", cwd=tmp_path)
    assert p.returncode != 2, p.stderr
    assert (
        "skip[not_listed]: threads-ts skipped 1 case(s) (reads-notes): the case does not list "
        "threads-ts's dialect threads-ts (case.json dialects: threads-py)"
    ) in p.stdout


def test_a_default_run_says_why_cases_were_skipped_for_their_dialects(tmp_path: Path) -> None:
    root = _py_only(tmp_path)
    p = cli("run", str(root), "-k", "reads-notes", cwd=tmp_path)
    assert p.returncode == 0, p.stdout + p.stderr  # nobody named threads-ts
    assert "skip[not_listed]: threads-ts skipped 1 case(s) (reads-notes)" in p.stdout


def test_a_run_where_every_result_is_a_skip_says_nothing_was_checked(tmp_path: Path) -> None:
    """A TypeScript-only case, node missing and threads-ts not named: both results are skips
    and the exit status 0 (spec/reports.md 5.2), so one warning says nothing was checked."""
    root = _copy(tmp_path, "reads-notes")
    case = root / "reads-notes"
    for f in case.glob("*threads-py*"):
        f.unlink()
    meta = json.loads((case / "case.json").read_bytes())
    meta["dialects"] = ["threads-ts"]
    (case / "case.json").write_bytes(canonical_document(meta))
    assert cli("fmt", str(case), cwd=tmp_path).returncode == 0
    p = cli("run", str(root), cwd=tmp_path, env={"PATH": NO_NODE})
    assert p.returncode == 0 and "2 skip" in p.stdout, p.stdout + p.stderr
    (warning,) = [x for x in p.stderr.splitlines() if x.startswith("warning: nothing")]
    assert "all 2 result(s) are skips (driver_unavailable, not_listed)" in warning
    assert "--impl" in warning
    # one result that ran: no such warning
    shutil.copytree(CASES / "reads-notes", root / "ran")
    p = cli("run", str(root), cwd=tmp_path, env={"PATH": NO_NODE})
    assert "nothing was checked" not in p.stderr
