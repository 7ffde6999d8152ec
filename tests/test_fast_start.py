"""Fast start, checked by structure (never by the clock; benchmarks/startup_bench.py measures).

A command loads only its own command module, a ``run`` whose implementations are driver
processes never loads the Python runtime in the harness, a driver process never loads the
harness side of the protocol, and reading valid files never loads jsonschema (the problems of
an invalid file still come from it).
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from threads_cases import cli

ROOT = Path(__file__).resolve().parent.parent
CASE = sorted((ROOT / "spec" / "conformance" / "cases").glob("*/case.json"))[0].parent
HEAVY = (
    "jsonschema",
    "referencing",
    "rich.table",
    "rich.progress",
    "threads_cases.reference.runtime",
    "threads_cases.reference.replay",
    "threads_cases.protocol.server",
    "threads_cases.review",
    "threads_cases.importers",
)


def loaded_after(code: str) -> set[str]:
    """The modules a fresh interpreter holds after running ``code``."""
    probe = f"{code}\nimport sys, json\nprint(json.dumps(sorted(sys.modules)))"
    out = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, check=True, cwd=ROOT
    )
    return set(json.loads(out.stdout.splitlines()[-1]))


def test_the_command_table_names_the_module_of_every_command() -> None:
    app = cli._load()  # every module loaded (`cli.app` may be shadowed: see below)
    registered = {
        (c.name or c.callback.__name__): c.callback.__module__.rsplit(".", 1)[1]
        for c in app.registered_commands
        if c.callback is not None
    }
    for group in app.registered_groups:
        first = group.typer_instance.registered_commands[0].callback
        assert first is not None
        registered[group.typer_instance.info.name] = first.__module__.rsplit(".", 1)[1]
    missing = {k: v for k, v in registered.items() if cli.COMMANDS.get(k) != v}
    assert not missing, f"add these to threads_cases.cli.COMMANDS (name: module): {missing}"
    assert set(cli.COMMANDS) == set(registered), "COMMANDS names a command no module registers"


def test_the_cli_app_and_the_run_command_load_no_heavy_module() -> None:
    loaded = loaded_after("from threads_cases.cli import _load; _load('run_commands')")
    assert "threads_cases.cli.run_commands" in loaded
    assert loaded.isdisjoint(HEAVY), sorted(loaded & set(HEAVY))
    assert "threads_cases.cli.review_commands" not in loaded


def test_after_loading_one_command_module_cli_app_is_still_the_whole_typer_app() -> None:
    # importing the submodule threads_cases.cli.app binds the package's `app` to it; the
    # public name must stay the Typer object with every command
    probe = (
        "import threads_cases.cli as c, typer; c._load('run_commands')\n"
        "from threads_cases.cli import app\n"
        "assert isinstance(app, typer.Typer), type(app)\n"
        "print(len(app.registered_commands) + len(app.registered_groups))"
    )
    out = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, cwd=ROOT, check=False
    )
    assert out.returncode == 0, out.stderr
    # every command, in this process: _load(), not `cli.app`, which another test's direct
    # import of a command module (binding the package's `app` to the submodule) may shadow
    app = cli._load()
    assert int(out.stdout) == len(app.registered_commands) + len(app.registered_groups)


def test_a_command_line_names_one_module() -> None:
    pick = cli._command_module
    assert pick(["run", "cases", "--impl", "threads-py"]) == "run_commands"
    assert pick(["-q", "report", "merge", "a.jsonl"]) == "report_commands"
    assert pick(["--help"]) is None and pick([]) is None
    assert pick(["-h", "run"]) is None  # the root's help lists every command
    assert pick(["no-such-command"]) is None  # every module: the error suggests a name


def test_a_driver_process_loads_neither_the_harness_nor_jsonschema() -> None:
    loaded = loaded_after("import threads_cases.protocol.driver")
    unwanted = {"jsonschema", "referencing", "threads_cases.protocol.client", "typer", "rich"}
    assert loaded.isdisjoint(unwanted), sorted(loaded & unwanted)


def test_reading_a_valid_log_loads_no_jsonschema_and_an_invalid_one_does() -> None:
    log = CASE / "log.threads-py.jsonl"
    valid = loaded_after(
        f"from threads_cases import validate_log\nassert validate_log({str(log)!r}) == []"
    )
    assert "jsonschema" not in valid
    invalid = loaded_after(
        "from threads_cases.core.schemas import schema_problems\n"
        "assert schema_problems({'type': 1}, 'event.schema.json')"
    )
    assert "jsonschema" in invalid


def _loaded_by_run(*options: str) -> set[str]:
    """The modules ``threads-cases run CASE --impl threads-py OPTIONS`` holds at its exit."""
    probe = (
        "import sys, json, atexit\n"
        "atexit.register(lambda: print(json.dumps(sorted(sys.modules)), file=sys.stderr))\n"
        "from threads_cases.cli import main\n"
        f"sys.argv = ['threads-cases', 'run', {str(CASE)!r}, '--impl', 'threads-py']\n"
        f"sys.argv += {list(options)!r}\n"
        "main()"
    )
    done = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, cwd=ROOT, check=False
    )
    assert done.returncode == 0, done.stderr
    loaded = set(json.loads(done.stderr.splitlines()[-1]))
    assert "threads_cases.cli.run_commands" in loaded
    return loaded


#: what a replay that is not live never needs: the live SDKs, templates, importers and the
#: harness's live desk (the ledger, prices and providers of a live run)
NOT_ON_THE_RUN_PATH = {
    "rich", "pydantic", "pydantic_core", "anthropic", "openai", "httpx", "jinja2",
    "threads_cases.importers", "threads_cases.harness.live",
}  # fmt: skip


def test_a_run_with_json_output_loads_neither_rich_nor_pydantic() -> None:
    # typer builds a pydantic adapter per option unless cli/fast_values.py coerces it; the
    # terminal view (harness/report/suite_view.py) and the consoles load rich only when used
    from threads_cases.harness.run.isolation import default_isolation

    for isolation in sorted({"guard", default_isolation()}):
        loaded = _loaded_by_run("--format", "json", "--jobs", "1", "--timeout", "30",
                                "--isolation", isolation)  # fmt: skip
        heads = {".".join(m.split(".")[:n]) for m in loaded for n in (1, 2, 3)}
        assert heads.isdisjoint(NOT_ON_THE_RUN_PATH), (isolation, heads & NOT_ON_THE_RUN_PATH)
    assert "rich" in _loaded_by_run("--isolation", "guard")  # the table: rich, as before
