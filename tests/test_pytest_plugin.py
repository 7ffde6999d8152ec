"""The pytest plugin (entry point ``pytest11: threads_cases``), tested with pytester on
copies of the conformance cases."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from conftest import cli

from threads_cases.core.canonical import canonical_document
from threads_cases.core.strictjson import read_json_file

pytest_plugins = ["pytester"]

ROOT = Path(__file__).resolve().parent.parent
CASES = ROOT / "spec" / "conformance" / "cases"
SOME = ("weather-stub", "reads-notes", "writes-summary")
#: Every inner pytest run leaves out the cache and hypothesis's plugin: the latter imports all of
#: hypothesis at the end of each run, and pytester drops the modules an in-process run imported,
#: so each run re-imported (and assertion-rewrote) it, about 1.5 CPU-s a run.
QUIET = ("-p", "no:cacheprovider", "-p", "no:hypothesispytest")


def copy_cases(base: Path, names: tuple[str, ...] = SOME, folder: str = "cases") -> Path:
    for name in names:
        shutil.copytree(CASES / name, base / folder / name)
    return base / folder


def edit(path: Path, change) -> None:  # type: ignore[no-untyped-def]
    doc = read_json_file(path)
    change(doc)
    path.write_bytes(canonical_document(doc))


def test_collects_each_case_as_an_item(pytester: pytest.Pytester) -> None:
    copy_cases(pytester.path)
    result = pytester.runpytest("--threads-cases", "cases", "-v", *QUIET)
    result.assert_outcomes(passed=3)
    result.stdout.fnmatch_lines(
        [
            "*cases/reads-notes/case.json::reads-notes?threads-py? PASSED*",
            "*cases/weather-stub/case.json::weather-stub?threads-py? PASSED*",
        ]
    )
    assert result.ret == 0


def test_collection_reads_only_each_case_name(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    from threads_cases.case import loader
    from threads_cases.core import schemas

    cases = copy_cases(pytester.path)
    (cases / "writes-summary" / "model.json").write_text("{broken")  # found when it runs
    (cases / "reads-notes" / "case.json").write_text("[]")  # no name: the folder's name
    shutil.copytree(CASES / "weather-stub", cases / "renamed")

    def refuse(*_args: object, **_kwargs: object) -> None:
        raise AssertionError("collection loaded or schema-checked a case")

    for module, name in ((loader, "inspect_case"), (loader, "open_case")):
        monkeypatch.setattr(module, name, refuse)
    monkeypatch.setattr(schemas, "fast_validator", refuse)
    items, _ = pytester.inline_genitems("--threads-cases", "cases", *QUIET)
    assert sorted(i.nodeid for i in items) == [
        "cases/reads-notes/case.json::reads-notes[threads-py]",
        "cases/renamed/case.json::weather-stub[threads-py]",
        "cases/weather-stub/case.json::weather-stub[threads-py]",
        "cases/writes-summary/case.json::writes-summary[threads-py]",
    ]


def test_every_argument_form_selects_the_same_node_ids(pytester: pytest.Pytester) -> None:
    """A case below a folder argument is one node (its case.json) under the folder's; a case
    folder named on the command line (or a path inside it) gets a folder node above it, for
    pytest's matching of each path level: the node ids are the same, and an item's node id
    given back to pytest (a re-run of a failure) selects that item alone."""
    copy_cases(pytester.path)
    every, _ = pytester.inline_genitems("--threads-cases", "cases", *QUIET)
    ids = sorted(i.nodeid for i in every)
    assert ids == [f"cases/{n}/case.json::{n}[threads-py]" for n in sorted(SOME)]
    for arg in ("cases/weather-stub", "cases/weather-stub/case.json", ids[1]):
        items, _ = pytester.inline_genitems("--threads-cases", "cases", arg, *QUIET)
        assert [i.nodeid for i in items] == [ids[1]], arg
    picked = pytester.runpytest("--threads-cases", "cases", ids[0], ids[2], *QUIET)
    picked.assert_outcomes(passed=2)


def test_a_symlinked_case_folder_is_collected_where_it_leads(pytester: pytest.Pytester) -> None:
    """A case folder that is a symlink is judged by where it leads: into the configured
    folders it is collected (under its link's name), out of them it is not."""
    cases = copy_cases(pytester.path, ("weather-stub", "reads-notes"))
    shutil.copytree(CASES / "writes-summary", pytester.path / "elsewhere" / "writes-summary")
    (cases / "alias").symlink_to(cases / "reads-notes", target_is_directory=True)
    (cases / "out").symlink_to(pytester.path / "elsewhere" / "writes-summary")
    items, _ = pytester.inline_genitems("--threads-cases", "cases", *QUIET)
    assert sorted(i.nodeid for i in items) == [
        "cases/alias/case.json::reads-notes[threads-py]",
        "cases/reads-notes/case.json::reads-notes[threads-py]",
        "cases/weather-stub/case.json::weather-stub[threads-py]",
    ]


def test_a_failing_case_reports_like_the_cli(pytester: pytest.Pytester) -> None:
    cases = copy_cases(pytester.path)
    edit(cases / "weather-stub" / "model.json", lambda d: d["replies"].pop())
    edit(cases / "reads-notes" / "expected.threads-py.json", lambda d: d.update(last_seq=9))
    edit(
        cases / "writes-summary" / "case.json",
        lambda d: d["expect"]["must"].append({"type": "tool_result", "data": {"is_error": True}}),
    )
    result = pytester.runpytest("--threads-cases", "cases", *QUIET)
    result.assert_outcomes(failed=3)
    out = result.stdout.str()
    assert "threads-cases: weather-stub [threads-py] fail: model_exhausted" in out
    assert "model_exhausted at model:1" in out
    # state differences by pointer
    assert "threads-cases: reads-notes [threads-py] fail: state_mismatch" in out
    assert "/last_seq expected 9, got 0" in out
    # the matcher beside the nearest replayed event
    assert "must_unmatched" in out
    assert "nearest replayed event" in out
    assert '"is_error": false' in out
    assert "Traceback" not in out
    result.stdout.fnmatch_lines(["FAILED cases/weather-stub/case.json::weather-stub?threads-py?*"])


def test_ini_option_impl_option_and_strict(pytester: pytest.Pytester) -> None:
    cases = copy_cases(pytester.path, ("reads-notes", "weather-stub"), folder="saved")
    edit(cases / "reads-notes" / "model.json", lambda d: d["replies"].append(d["replies"][-1]))
    pytester.makeini("[pytest]\nthreads_cases_paths =\n    saved\n")
    loose = pytester.runpytest(*QUIET, "-rA")
    loose.assert_outcomes(passed=2)
    assert "drifted: reply_unused" in loose.stdout.str()
    strict = pytester.runpytest("--threads-cases-strict", *QUIET)
    strict.assert_outcomes(passed=1, failed=1)
    assert "reads-notes [threads-py] drifted: reply_unused" in strict.stdout.str()
    unknown = pytester.runpytest("--threads-cases-impl", "nope", *QUIET)
    assert unknown.ret == pytest.ExitCode.USAGE_ERROR
    assert "unknown implementation 'nope'" in unknown.stderr.str()
    missing = pytester.runpytest("--threads-cases", "missing", *QUIET)
    assert missing.ret == pytest.ExitCode.USAGE_ERROR


def test_an_unlisted_implementation_is_skipped(pytester: pytest.Pytester) -> None:
    cases = copy_cases(pytester.path, ("weather-stub",))
    edit(cases / "weather-stub" / "case.json", lambda d: d.update(dialects=["threads-ts"]))
    (cases / "weather-stub" / "log.threads-py.jsonl").unlink()
    (cases / "weather-stub" / "expected.threads-py.json").unlink()
    result = pytester.runpytest("--threads-cases", "cases", *QUIET, "-rs")
    result.assert_outcomes(skipped=1)
    assert "not_listed" in result.stdout.str()


def test_plugin_is_inert_without_options(pytester: pytest.Pytester) -> None:
    copy_cases(pytester.path, ("weather-stub",))
    pytester.makepyfile("def test_one():\n    assert True\n")
    result = pytester.runpytest(*QUIET)
    result.assert_outcomes(passed=1)


def test_pytest_help_lists_every_option(pytester: pytest.Pytester) -> None:
    # argparse %-formats each help text: an unescaped "95%)" crashed `pytest --help` in every
    # project where the package is installed
    from threads_cases.harness.pytest.options import OPTIONS

    result = pytester.runpytest("--help", *QUIET)
    assert result.ret == 0, result.stderr.str()
    shown = result.stdout.str()
    for flag, _ in OPTIONS:
        assert flag in shown
    assert "pass rate (Wilson 95%)" in shown


def test_fixture_and_cases_helper(pytester: pytest.Pytester) -> None:
    copy_cases(pytester.path, ("weather-stub", "reads-notes"))
    pytester.makepyfile(
        test_mine="""
        import pytest
        from threads_cases import run_case
        from threads_cases.pytest import cases

        @pytest.mark.parametrize("threads_case", cases("cases"), indirect=True)
        def test_case(threads_case):
            assert threads_case.name in ("weather-stub", "reads-notes")
            assert threads_case.meta["at"]
            assert run_case(threads_case.path).verdict == "pass"

        def test_without_param(threads_case):
            pass
    """
    )
    result = pytester.runpytest("-v", *QUIET)
    result.assert_outcomes(passed=2, errors=1)
    result.stdout.fnmatch_lines(
        ["*test_case?reads-notes? PASSED*", "*test_case?weather-stub? PASSED*"]
    )
    assert "needs a case path" in result.stdout.str()


def _break_cases(base: Path) -> dict[str, str]:
    """Three broken copies beside a good case: each name -> the CLI's error line for it."""
    cases = copy_cases(base, ("reads-notes", "weather-stub", "writes-summary", "lists-files"))
    (cases / "reads-notes" / "model.json").unlink()
    text = (cases / "weather-stub" / "case.json").read_text().rstrip()
    (cases / "weather-stub" / "case.json").write_text(text[:-1].rstrip() + ",\n}\n")
    edit(cases / "writes-summary" / "case.json", lambda d: d.update(input=42))
    comma = text.count("\n")
    return {
        "reads-notes": "error[case_invalid]: cases/reads-notes/model.json: model.json is missing",
        "weather-stub": f"error[case_invalid]: cases/weather-stub/case.json:{comma}: not valid "
        "JSON: trailing comma is not allowed",
        "writes-summary": "error[case_invalid]: cases/writes-summary/case.json: /input: schema: ",
    }


HINT = "  hint: run `threads-cases validate CASE` to see every problem of the case"


def test_the_fixture_reports_a_broken_case_like_the_cli(pytester: pytest.Pytester) -> None:
    """The README's threads_case fixture over a folder with broken cases: each broken case
    errors its own test with the reason code, file, line and hint, no traceback through
    threads-cases; the good case still runs."""
    errors = _break_cases(pytester.path)
    pytester.makepyfile(
        test_mine="""
        import pytest
        from threads_cases import run_case
        from threads_cases.pytest import cases

        @pytest.mark.parametrize("threads_case", cases("cases"), indirect=True)
        def test_case(threads_case):
            assert run_case(threads_case.path).verdict == "pass"
    """
    )
    result = pytester.runpytest("-v", *QUIET)
    result.assert_outcomes(passed=1, errors=3)
    out = result.stdout.str()
    for name, line in errors.items():
        assert f"threads-cases: cases/{name} cannot be loaded\n{line}" in out, out
    # once per error in its section (under CI=true pytest repeats whole messages in the short
    # test summary, so that part is left out of the count)
    assert out.split("short test summary info")[0].count(HINT) == 3
    for internal in ("loader.py", "directory.py", "pytest_plugin.py", "Traceback", "raise "):
        assert internal not in out, internal
    # the --threads-cases items of the same cases say the same
    items = pytester.runpytest("--threads-cases", "cases", "-v", *QUIET, "cases")
    items.assert_outcomes(passed=1, failed=3)
    # the CLI's panel (boxed, wrapped), then the same hint (the short summary left out)
    text = items.stdout.str().split("short test summary info")[0]
    for name in errors:
        assert f"threads-cases: {name} [threads-py] error: case_invalid" in text
    assert text.count("error[case_invalid]: ") == 3 and text.count(HINT) == 3


def test_runs_under_xdist(pytester: pytest.Pytester) -> None:
    cases = copy_cases(pytester.path)
    edit(cases / "weather-stub" / "model.json", lambda d: d["replies"].pop())
    result = pytester.runpytest_inprocess("--threads-cases", "cases", "-n", "2", *QUIET)
    result.assert_outcomes(passed=2, failed=1)
    assert "model_exhausted" in result.stdout.str()
    assert "2 workers [3 items]" in result.stdout.str()  # really on two xdist workers


def test_isolated_runs_the_drivers_and_passes_the_same(pytester: pytest.Pytester) -> None:
    copy_cases(pytester.path)
    result = pytester.runpytest_inprocess(
        "--threads-cases",
        "cases",
        "--threads-cases-isolated",
        "--threads-cases-impl",
        "threads-py",
        "--threads-cases-impl",
        "threads-ts",
        *QUIET,
    )
    outcomes = result.parseoutcomes()
    assert outcomes.get("passed", 0) + outcomes.get("skipped", 0) == 6, outcomes
    assert outcomes.get("passed", 0) >= 3 and result.ret == 0


def test_configured_implementations_run_as_with_run(pytester: pytest.Pytester) -> None:
    """A configured implementation counts as named (spec/driver-protocol.md 5.4): `run`
    exits 3 when its driver is missing, and the plugin reported `3 passed`, exit 0, without
    ever trying it. Its items now run, and fail when it cannot start."""
    import sys

    copy_cases(pytester.path)
    pytester.makepyprojecttoml(
        '[tool.pytest.ini_options]\nthreads_cases_paths = ["cases"]\n'
        '[tool.threads-cases.implementations.my-impl]\ncommand = ["./my-driver"]\n'
    )
    result = pytester.runpytest("-v", *QUIET)
    result.assert_outcomes(passed=3, failed=3)
    result.stdout.fnmatch_lines(["*reads-notes?my-impl? FAILED*"])
    assert "my-impl could not start" in result.stdout.str()
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    driver = pytester.path / "my-driver"
    driver.write_text(f"#!/bin/sh\nexec {sys.executable} -m threads_cases.protocol.driver\n")
    driver.chmod(0o755)
    result = pytester.runpytest("-v", *QUIET)
    result.assert_outcomes(passed=6)
    # --threads-cases-impl still chooses
    result = pytester.runpytest("--threads-cases-impl", "threads-py", *QUIET)
    result.assert_outcomes(passed=3)


def test_a_case_json_that_is_a_folder_fails_instead_of_vanishing(
    pytester: pytest.Pytester,
) -> None:
    """The user's report: with `case.json` a folder, `run` and `list` show the case as an
    error but the plugin collected one case fewer, or `no tests ran` for that case alone.
    It is collected and fails with the CLI's error."""
    cases = copy_cases(pytester.path, ("weather-stub", "reads-notes"))
    (cases / "reads-notes" / "case.json").unlink()
    (cases / "reads-notes" / "case.json").mkdir()
    run = cli("run", "cases", "--impl", "threads-py", "--format", "json", cwd=pytester.path)
    assert '"case_invalid"' in run.stdout
    for target in ("cases", "cases/reads-notes"):
        result = pytester.runpytest("--threads-cases", target, *QUIET)
        result.assert_outcomes(passed=1 if target == "cases" else 0, failed=1)
        out = result.stdout.str()
        assert "error[case_invalid]: " in out and "reads-notes" in out, out


def test_a_configured_implementation_that_no_case_lists_is_refused(
    pytester: pytest.Pytester,
) -> None:
    """As `threads-cases run` refuses it (exit 2, tests/test_no_silent_green.py): every item
    of a named implementation would skip not_listed, a green session that ran nothing on it."""
    cases = copy_cases(pytester.path, ("weather-stub", "reads-notes"))
    for name in ("weather-stub", "reads-notes"):
        edit(cases / name / "case.json", lambda d: d.update(dialects=["threads-py"]))
        (cases / name / "log.threads-ts.jsonl").unlink()
        (cases / name / "expected.threads-ts.json").unlink()
    pytester.makepyprojecttoml(
        '[tool.threads-cases.implementations.my-impl]\ncommand = ["./my-driver"]\n'
        'dialect = "threads-ts"\n'
    )
    result = pytester.runpytest("--threads-cases", "cases", *QUIET)
    assert result.ret == pytest.ExitCode.USAGE_ERROR, result.stdout.str()
    err = result.stderr.str()
    assert (
        "threads-cases: error[invalid_request]: my-impl would run none of the 2 selected "
        "case(s): their case.json dialects do not list its dialect threads-ts "
        "(reads-notes: threads-py; weather-stub: threads-py), so every one would be skip "
        "not_listed"
    ) in err, err
    assert "hint: select cases that list threads-ts" in err
    assert "passed" not in result.stdout.str()  # refused before any item ran
    # named on the command line, the same; threads-py alone (configured one left out) runs
    named = pytester.runpytest(
        "--threads-cases", "cases", "--threads-cases-impl", "my-impl", *QUIET
    )
    assert named.ret == pytest.ExitCode.USAGE_ERROR
    assert "my-impl would run none of the 2 selected case(s)" in named.stderr.str()
    py = pytester.runpytest(
        "--threads-cases", "cases", "--threads-cases-impl", "threads-py", *QUIET
    )
    py.assert_outcomes(passed=2)
    # under pytest-xdist the controller refuses what its workers collected
    xdist = pytester.runpytest_inprocess("--threads-cases", "cases", "-n", "1", *QUIET)
    assert xdist.ret == pytest.ExitCode.USAGE_ERROR, xdist.stdout.str()
    assert "my-impl would run none of the 2 selected case(s)" in xdist.stderr.str()
    assert "INTERNALERROR" not in xdist.stdout.str() + xdist.stderr.str()
    # a -k that deselects the implementation's items leaves nothing of it to refuse
    kept = pytester.runpytest("--threads-cases", "cases", "-k", "threads-py", *QUIET)
    kept.assert_outcomes(passed=2, deselected=2)


def test_a_path_that_holds_no_case_is_refused_saying_why(pytester: pytest.Pytester) -> None:
    """The user's trial: a file was "no such folder", and an empty folder ended "no tests
    ran" (exit 5) with no reason where `threads-cases run` refuses "no cases found"."""
    cases = copy_cases(pytester.path, ("weather-stub",))
    (pytester.path / "afile").write_text("not a case\n")
    (pytester.path / "emptydir").mkdir()
    run = cli("run", "emptydir", cwd=pytester.path)
    assert run.returncode == 2 and "no cases found" in run.stderr
    run_hint = next(line for line in run.stderr.splitlines() if "hint:" in line)
    for target, says in (
        ("afile", "afile: is a file, not a folder holding cases"),
        ("emptydir", "emptydir: no cases found"),
        ("missing", "missing: no such file or folder"),
    ):
        result = pytester.runpytest("--threads-cases", target, *QUIET)
        assert result.ret == pytest.ExitCode.USAGE_ERROR, (target, result.stdout.str())
        err = result.stderr.str()
        assert "error[invalid_request]: " in err and says in err, (target, err)
        assert "no such folder" not in err and "hint: " in err
    assert run_hint in pytester.runpytest("--threads-cases", "emptydir", *QUIET).stderr.str()
    one = pytester.runpytest("--threads-cases", cases / "weather-stub" / "case.json", *QUIET)
    one.assert_outcomes(passed=1)  # a case's case.json stands for its case, as in `run`
