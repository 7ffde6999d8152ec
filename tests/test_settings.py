"""The [tool.threads-cases] settings (harness/run/settings.py): a value of the wrong type under
any key is ``invalid_request`` naming the file and the key, with a hint showing the right
shape, in the library, the CLI and the pytest plugin; never an internal error."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from conftest import cli

from threads_cases.core.errors import CaseError
from threads_cases.harness.baseline.file import configured_baseline
from threads_cases.harness.run.registry import configured, strict_setting

pytest_plugins = ["pytester"]

CASES = Path(__file__).resolve().parents[1] / "spec" / "conformance" / "cases"

#: (settings under [tool.threads-cases], the key the error names, a word of the hint)
BAD = [
    ('implementations = ["threads-rs"]', "tool.threads-cases.implementations", "command ="),
    ("implementations = 5", "tool.threads-cases.implementations", "command ="),
    ("implementations = { x = 5 }", "tool.threads-cases.implementations.x", "command ="),
    ('implementations = { x = { dialect = "threads-py" } }', ".x.command", "command ="),
    ("implementations = { x = { command = [] } }", ".x.command", "argv"),
    ('implementations = { x = { command = "./d" } }', ".x.command", "argv"),
    ("implementations = { x = { command = [1] } }", ".x.command", "argv"),
    ('implementations = { x = { command = ["d"], dialect = 5 } }', ".x.dialect", "dialect ="),
    ('implementations = { x = { command = ["d"], timeout = "s" } }', ".x.timeout", "timeout ="),
    ('implementations = { x = { command = ["d"], timeout = 0 } }', ".x.timeout", "timeout ="),
    ('implementations = { x = { command = ["d"], timeout = true } }', ".x.timeout", "timeout ="),
    ('implementations = { "a b" = 1 }', 'implementations."a b"', "command ="),
    ('strict = "yes"', "tool.threads-cases.strict", "strict = true"),
    ("strict = 1", "tool.threads-cases.strict", "strict = true"),
    ("baseline = 3", "tool.threads-cases.baseline", "baseline ="),
    ('baseline = ""', "tool.threads-cases.baseline", "baseline ="),
    ('baseline = ["a"]', "tool.threads-cases.baseline", "baseline ="),
    ('impl = "threads-py"', "tool.threads-cases.impl", 'impl = ["threads-py"]'),
    ("impl = []", "tool.threads-cases.impl", 'impl = ["threads-py"]'),
    ('impl = ["threads-rs"]', "tool.threads-cases.impl", 'impl = ["threads-py"]'),
    ('impl = ["threads-py", "threads-py"]', "tool.threads-cases.impl", "impl = ["),
    # unknown keys: a misspelt one was dropped without a word
    ('colour = "red"', "tool.threads-cases.colour", "strict, baseline, implementations"),
    ('implementations = { x = { command = ["d"], colour = "red" } }', ".x.colour", "command,"),
    # a built-in's name: the configured command was ignored and the built-in ran
    (
        'implementations = { threads-py = { command = ["./nonexistent"] } }',
        "tool.threads-cases.implementations.threads-py",
        "another name",
    ),
]


@pytest.mark.parametrize(("setting", "key", "hint"), BAD)
def test_a_setting_of_the_wrong_type_names_the_file_and_the_key(
    tmp_path: Path, setting: str, key: str, hint: str
) -> None:
    (tmp_path / "pyproject.toml").write_text(f"[tool.threads-cases]\n{setting}\n")
    for read in (configured, strict_setting, configured_baseline):
        with pytest.raises(CaseError) as err:
            read(tmp_path)
        assert err.value.code == "invalid_request"
        assert err.value.location.file == str(tmp_path / "pyproject.toml")
        assert key in err.value.message and hint in err.value.hint


@pytest.mark.parametrize(
    "text", ["tool = 3\n", "[tool]\nthreads-cases = 3\n", "[tool]\nthreads-cases = [1]\n"]
)
def test_a_settings_table_that_is_not_a_table_is_refused(tmp_path: Path, text: str) -> None:
    (tmp_path / "pyproject.toml").write_text(text)
    with pytest.raises(CaseError) as err:
        configured(tmp_path)
    assert err.value.code == "invalid_request" and "must be a table" in err.value.message
    assert "[tool.threads-cases]" in err.value.hint


def test_threads_cases_toml_is_checked_with_its_own_keys(tmp_path: Path) -> None:
    (tmp_path / "threads-cases.toml").write_text("implementations = 5\n")
    with pytest.raises(CaseError) as err:
        configured(tmp_path)
    assert err.value.message.startswith("implementations must be a table")
    assert "[implementations.my-impl]" in err.value.hint


def test_good_settings_read(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text(
        "[tool.threads-cases]\nstrict = true\n"
        '[tool.threads-cases.implementations.mine]\ncommand = ["./d"]\ntimeout = 5\n'
    )
    assert configured(tmp_path)["mine"]["timeout"] == 5.0
    assert strict_setting(tmp_path) is True


@pytest.mark.parametrize("setting", [BAD[0][0], BAD[1][0], BAD[8][0], BAD[14][0]])
@pytest.mark.parametrize("command", [["run"], ["conformance", "--impl", "threads-py"]])
def test_the_cli_refuses_a_bad_setting_with_exit_2(
    tmp_path: Path, setting: str, command: list[str]
) -> None:
    shutil.copytree(CASES / "reads-notes", tmp_path / "cases" / "reads-notes")
    (tmp_path / "pyproject.toml").write_text(f"[tool.threads-cases]\n{setting}\n")
    args = [*command, "cases"] if command == ["run"] else command
    p = cli(*args, cwd=tmp_path)
    assert p.returncode == 2, p.stderr
    first, hint = p.stderr.splitlines()[:2]
    assert first.startswith("error[invalid_request]: ") and "pyproject.toml: tool." in first
    assert hint.startswith("  hint: write") or hint.startswith("  hint: declare")
    assert "internal_error" not in p.stderr


def test_the_pytest_plugin_refuses_a_bad_setting_as_a_usage_error(
    pytester: pytest.Pytester,
) -> None:
    shutil.copytree(CASES / "reads-notes", pytester.path / "cases" / "reads-notes")
    pytester.makepyprojecttoml('[tool.threads-cases]\nimplementations = ["threads-rs"]\n')
    result = pytester.runpytest_subprocess("--threads-cases", "cases", "-p", "no:cacheprovider")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    err = result.stderr.str()
    assert "error[invalid_request]" in err and "tool.threads-cases.implementations" in err
    assert "hint: declare each implementation" in err and "Traceback" not in err


def test_an_unknown_dialect_names_the_file_and_the_key(tmp_path: Path) -> None:
    """The user's report: `dialect = "klingon"` gave `unknown dialect "klingon"` with no file
    or key; it names both, for the library and the CLI."""
    (tmp_path / "pyproject.toml").write_text(
        '[tool.threads-cases.implementations.x]\ncommand = ["./d"]\ndialect = "klingon"\n'
    )
    with pytest.raises(CaseError) as err:
        configured(tmp_path)
    assert err.value.code == "dialect_unknown"
    assert err.value.location.file == str(tmp_path / "pyproject.toml")
    assert err.value.message.startswith("tool.threads-cases.implementations.x.dialect: unknown")
    shutil.copytree(CASES / "reads-notes", tmp_path / "cases" / "reads-notes")
    p = cli("run", "cases", cwd=tmp_path)
    assert p.returncode == 2, p.stderr
    first, hint = p.stderr.splitlines()[:2]
    assert first.startswith("error[dialect_unknown]: ") and "pyproject.toml: tool." in first
    assert '.x.dialect: unknown dialect "klingon"' in first
    assert hint == "  hint: use one of the dialects under spec/dialects/"


def test_pyprojects_prefix_in_threads_cases_toml_is_refused_with_the_right_spelling(
    tmp_path: Path,
) -> None:
    """``[tool.threads-cases.implementations.tc-impl]`` in threads-cases.toml was an unknown
    key, ignored: every configured implementation was dropped without a word."""
    (tmp_path / "threads-cases.toml").write_text(
        '[tool.threads-cases.implementations.tc-impl]\ncommand = ["./d"]\n'
    )
    for read in (configured, strict_setting, configured_baseline):
        with pytest.raises(CaseError) as err:
            read(tmp_path)
        assert err.value.code == "invalid_request"
        assert err.value.location.file == str(tmp_path / "threads-cases.toml")
        assert "prefix" in err.value.message and "[implementations.tc-impl]" in err.value.hint
    shutil.copytree(CASES / "reads-notes", tmp_path / "cases" / "reads-notes")
    p = cli("run", "cases", cwd=tmp_path)
    assert p.returncode == 2, p.stdout + p.stderr
    assert p.stderr.startswith("error[invalid_request]: ") and "threads-cases.toml" in p.stderr
    assert "hint: in threads-cases.toml write" in p.stderr


def test_settings_in_both_files_are_refused(tmp_path: Path) -> None:
    """threads-cases.toml is read first: a [tool.threads-cases] table in pyproject.toml
    beside it was skipped without a word."""
    (tmp_path / "threads-cases.toml").write_text("strict = true\n")
    (tmp_path / "pyproject.toml").write_text(
        '[tool.threads-cases.implementations.mine]\ncommand = ["./d"]\n'
    )
    with pytest.raises(CaseError) as err:
        configured(tmp_path)
    assert err.value.code == "invalid_request" and "both" in err.value.message
    assert err.value.location.file == str(tmp_path / "pyproject.toml")
    assert "keep them in one file" in err.value.hint
    # a pyproject.toml without the table beside threads-cases.toml is fine
    (tmp_path / "pyproject.toml").write_text('[project]\nname = "x"\n')
    assert configured(tmp_path) == {} and strict_setting(tmp_path) is True


def test_the_cli_refuses_a_built_in_name_and_an_unknown_key(tmp_path: Path) -> None:
    shutil.copytree(CASES / "reads-notes", tmp_path / "cases" / "reads-notes")
    for text, word in (
        (
            '[tool.threads-cases.implementations.threads-py]\ncommand = ["./nonexistent"]\n',
            "built-in",
        ),
        (
            '[tool.threads-cases.implementations.x]\ncommand = ["d"]\ncolour = "red"\n',
            "unknown key",
        ),
    ):
        (tmp_path / "pyproject.toml").write_text(text)
        p = cli("run", "cases", cwd=tmp_path)
        assert p.returncode == 2, p.stdout + p.stderr
        assert p.stderr.startswith("error[invalid_request]: ") and word in p.stderr
        assert "pyproject.toml: tool.threads-cases" in p.stderr or "unknown key tool." in p.stderr
