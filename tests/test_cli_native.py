"""The command line's shared surface: one error format, the site's exit-status table, help.

Runs the click group in process (``Group.main`` with ``standalone_mode``), so every command
is exercised without paying a Python start per case.
"""

from __future__ import annotations

import functools
import re
from pathlib import Path
from typing import cast

import pytest
import typer

from threads_cases.cli import app

ROOT = Path(__file__).resolve().parent.parent
EXAMPLE_LOG = ROOT / "examples" / "sessions" / "claude-code-session.jsonl"


@functools.cache
def group() -> typer.core.TyperGroup:
    """The click group, built once: typer builds it anew on each call (about 50 ms, several
    times that under coverage), and a click command keeps no state between ``main`` calls."""
    # `threads_cases.cli.app` is the Typer object (the package's __getattr__), which mypy
    # takes for the submodule of the same name
    cmd = typer.main.get_command(cast(typer.Typer, app))
    assert isinstance(cmd, typer.core.TyperGroup)
    return cmd


def invoke(*args: str | Path, capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    with pytest.raises(SystemExit) as exc:
        group().main([str(a) for a in args], prog_name="threads-cases")
    out, err = capsys.readouterr()
    code = exc.value.code
    return (code if isinstance(code, int) else 0), out, err


def readme_exit_table() -> dict[str, dict[int, str]]:
    """The exit-status table of the site's reference (docs/reference/exit-statuses.md)."""
    rows: dict[str, dict[int, str]] = {}
    text = (ROOT / "docs" / "reference" / "exit-statuses.md").read_text(encoding="utf-8")
    for line in text.splitlines():
        m = re.match(r"^\| `([a-z -]+)` \|(.*)\|\s*$", line)
        if m:
            cells = [c.strip() for c in m.group(2).split("|")]
            rows[m.group(1)] = {i: c for i, c in enumerate(cells) if c}
    return rows


def commands() -> list[str]:
    """Every command, a group's as "group command"."""
    out = []
    for name, cmd in group().commands.items():
        if isinstance(cmd, typer.core.TyperGroup):
            out += [f"{name} {sub}" for sub, c in cmd.commands.items() if not c.hidden]
        elif not cmd.hidden:
            out.append(name)
    return sorted(out)


def test_readme_exit_table_lists_exactly_the_commands() -> None:
    table = readme_exit_table()
    assert sorted(table) == commands()
    for name, statuses in table.items():
        assert 0 in statuses, name
        assert 2 in statuses, f"{name}: every command refuses bad arguments with 2"


@pytest.mark.parametrize("name", commands())
def test_unknown_option_is_invalid_request_with_a_hint(
    name: str, capsys: pytest.CaptureFixture[str]
) -> None:
    status, out, err = invoke(*name.split(), "--no-such-option", capsys=capsys)
    assert status == 2
    lines = err.splitlines()
    assert lines[0] == "error[invalid_request]: unknown option --no-such-option", err
    assert lines[1].startswith(f"  hint: usage: threads-cases {name} ")
    assert out == ""


@pytest.mark.parametrize(
    "args",
    [
        ("run", "--jobs", "0"),
        ("save",),
        ("reduce", "--format", "yaml", "x"),
        ("import", "gemini", "f", "-o", "x"),
        ("conformance", "--timeout", "0"),
        ("nonexistent-command",),
    ],
)
def test_argument_errors_share_one_format(
    args: tuple[str, ...], capsys: pytest.CaptureFixture[str]
) -> None:
    status, _, err = invoke(*args, capsys=capsys)
    assert status == 2
    first, hint = err.splitlines()[:2]
    assert first.startswith("error[invalid_request]: ")
    assert hint.startswith("  hint: usage: threads-cases")


PATH_COMMANDS = [
    ("reduce", "{p}"),
    ("validate", "{p}"),
    ("turns", "{p}"),
    ("draft", "{p}", "--turn", "1"),
    ("show", "{p}"),
    ("run", "{p}"),
    ("fmt", "{p}"),
    ("list", "{p}"),
    ("stale", "{p}"),
    ("conformance", "{p}"),
    ("import", "codex", "{p}", "-o", "out.jsonl"),
    ("supply", "{p}", "-o", "supply.json"),
    ("save", "{p}", "--name", "x", "--dir", "cases", "--turn", "1"),
    ("diff", "{p}", "{p}"),
    ("report", "merge", "{p}"),
    ("report", "html", "{p}", "-o", "site"),
    ("coverage", "{p}"),
    ("baseline", "update", "{p}"),
    ("baseline", "prune", "{p}"),
    ("accept", "{p}"),
    ("init", "{p}"),
]


@pytest.mark.parametrize("template", PATH_COMMANDS, ids=lambda t: t[0])
def test_a_missing_path_is_invalid_request_for_every_command(
    template: tuple[str, ...], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    missing = tmp_path / "no-such-thing"
    status, _, err = invoke(*(a.format(p=missing) for a in template), capsys=capsys)
    assert status == 2, err
    first, hint = err.splitlines()[:2]
    assert first.startswith("error[invalid_request]: ") and str(missing) in first
    assert hint.startswith("  hint: expected ")


def test_every_path_command_is_covered() -> None:
    covered = {" ".join(t[:2]) if t[0] in ("report", "baseline") else t[0] for t in PATH_COMMANDS}
    assert covered == set(commands()) - {"implementations"}


def test_wrong_kind_of_path_says_what_was_expected(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    case = ROOT / "spec" / "conformance" / "cases"
    one = next(p for p in sorted(case.iterdir()) if (p / "case.json").is_file())
    status, _, err = invoke("validate", one / "case.json", capsys=capsys)
    assert status == 2
    assert "is a case's case.json, not a thread log" in err
    assert f"hint: pass the case directory instead: {one}" in err

    status, _, err = invoke("show", one / "case.json", capsys=capsys)
    assert status == 2 and f"pass the case directory instead: {one}" in err

    status, _, err = invoke("reduce", one, capsys=capsys)
    assert status == 2 and "is a case directory" in err
    # the example is a log the case holds (log.<dialect>.jsonl), not a file cases never hold
    assert "prefix.jsonl" not in err and f"e.g. {one / 'log.threads-py.jsonl'}" in err
    status, _, err = invoke("turns", one, capsys=capsys)
    assert status == 2 and f"e.g. {one / 'log.threads-py.jsonl'}" in err
    empty = tmp_path / "bare"
    empty.mkdir()
    (empty / "case.json").write_text("{}")
    status, _, err = invoke("turns", empty, capsys=capsys)
    assert status == 2 and f"e.g. {empty / 'log.<dialect>.jsonl'}" in err

    a_file = tmp_path / "file"
    a_file.write_text("x")
    status, _, err = invoke(
        "save", EXAMPLE_LOG, "--name", "x", "--dir", a_file, "--turn", "1", capsys=capsys
    )
    assert status == 2
    assert err.splitlines()[0] == f"error[invalid_request]: {a_file}: is a file, not a folder"
    assert "hint: expected the folder to create the case in" in err


def test_help_reads_like_a_native_tool(capsys: pytest.CaptureFixture[str]) -> None:
    status, out, _ = invoke("-h", capsys=capsys)
    assert status == 0 and "--install-completion" in out
    for name in [*commands(), "report", "baseline"]:
        status, out, _ = invoke(*name.split(), "-h", capsys=capsys)
        assert status == 0, name
        leak = re.search(r"<(list|int|float|str|path|Path|tuple|bool)\b", out)
        assert leak is None, f"{name}: a Python type leaks:\n{out}"
        assert "threads_cases." not in out, f"{name}: names an internal module"
        assert "-h, --help" in out
        assert "-q, --quiet" in out or name in ("report", "baseline")
    status, out, _ = invoke("run", "-h", capsys=capsys)
    assert "--format [pretty|json|github]" in out
    assert "-j, --jobs N" in out and "--timeout SECONDS" in out and "PATH..." in out


def test_command_summaries_are_whole(capsys: pytest.CaptureFixture[str]) -> None:
    _, out, _ = invoke("--help", capsys=capsys)
    listing = out.split("Commands:")[1]
    assert "..." not in listing.replace("[...]", "")


def test_init_is_idempotent(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    import subprocess

    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    (tmp_path / ".gitignore").write_text("build/")  # no final newline
    status, out, _ = invoke("init", tmp_path, capsys=capsys)
    assert status == 0
    assert [line.split()[0] for line in out.splitlines()] == ["done", "done", "done"]
    files = {n: (tmp_path / n).read_text() for n in (".gitattributes", ".gitignore")}
    assert "cases/**/*.json diff=threads-cases\n" in files[".gitattributes"]
    assert "cases/**/*.jsonl diff=threads-cases\n" in files[".gitattributes"]
    assert files[".gitignore"].startswith("build/\n")
    assert "**/.threads-cases/*\n!**/.threads-cases/baseline.json\n" in files[".gitignore"]
    config = subprocess.run(
        ["git", "-C", str(tmp_path), "config", "--get", "diff.threads-cases.command"],
        capture_output=True,
        text=True,
    )
    assert config.stdout.strip() == "threads-cases diff --git-driver"
    status, out, _ = invoke("init", tmp_path, capsys=capsys)
    assert status == 0
    assert [line.split()[0] for line in out.splitlines()] == ["present"] * 3
    assert {n: (tmp_path / n).read_text() for n in files} == files
