"""The user's own agent is the thing under test (issue 30, spec/replay.md 8): `run`, `accept`,
`save`, the pytest plugin and the settings replay an agent module of the user's project, in
Python (threads-py, its driver under kernel isolation where available) and JavaScript
(threads-ts), instead of the agent recorded in the case.

The project is a temporary folder holding the case spec/conformance/agent/cases/counts-stock
(a turn that calls the custom sandbox tool ``read_inventory``) and an agent module in each
language, rewritten between runs to change the system prompt or the tool's handler."""

from __future__ import annotations

import hashlib
import json
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from conftest import ROOT, cli, ts_built

pytestmark = pytest.mark.skipif(
    not ts_built(), reason="the TypeScript driver is not built: run `nox -s ts`"
)

CASE = ROOT / "spec" / "conformance" / "agent" / "cases" / "counts-stock"
SYSTEM = "You track stock."
ROW = "hit[0] if hit else f\"no SKU {inp['sku']}\""

PY_AGENT = """from threads_cases import AgentSpec, ToolSpec
from threads_cases.reference.agent import BUILTIN_TOOLS


def read_inventory(ctx, inp):
    rows = ctx.read("inventory.csv").decode("utf-8").splitlines()
    hit = [r for r in rows if r.split(",")[0] == inp["sku"]]
    return {result}


agent = AgentSpec(
    "stock-bot",
    "model-x-1",
    {system!r},
    (
        BUILTIN_TOOLS["read_file"],
        ToolSpec(
            "read_inventory",
            "Look a SKU up in inventory.csv.",
            {{
                "type": "object",
                "properties": {{"sku": {{"type": "string"}}}},
                "required": ["sku"],
            }},
            kind="sandbox",
            effect="read",
            handler=read_inventory,
        ),
    ),
)
"""

JS_AGENT = """const text = new TextDecoder();
const PATH = { type: "string", description: "A relative POSIX path inside the sandbox." };

function readInventory(ctx, input) {
  const rows = text.decode(ctx.read("inventory.csv")).split("\\n");
  const hit = rows.filter((r) => r.split(",")[0] === input.sku);
  return %(result)s;
}

export const stockBot = {
  name: "stock-bot",
  model: "model-x-1",
  system: %(system)s,
  tools: [
    { name: "read_file", description: "Read a UTF-8 text file from the sandbox.",
      input_schema: { type: "object", properties: { path: PATH }, required: ["path"] },
      kind: "sandbox", effect: "read" },
    { name: "read_inventory", description: "Look a SKU up in inventory.csv.",
      input_schema: { type: "object", properties: { sku: { type: "string" } }, required: ["sku"] },
      kind: "sandbox", effect: "read", handler: readInventory },
  ],
};
"""

AGENTS = ["--agent", "stock_agent:agent", "--agent", "./agents/stock.mjs#stockBot"]


def write_agents(project: Path, system: str = SYSTEM, suffix: str = "") -> None:
    """Both agent modules, with ``system`` and a handler appending ``suffix`` to its row."""
    py_result = ROW if not suffix else f"({ROW}) + {suffix!r}"
    js_result = 'hit.length ? hit[0] : "no SKU " + input.sku'
    if suffix:
        js_result = f"({js_result}) + {json.dumps(suffix)}"
    (project / "stock_agent.py").write_text(PY_AGENT.format(result=py_result, system=system))
    (project / "agents").mkdir(exist_ok=True)
    body = JS_AGENT % {"result": js_result, "system": json.dumps(system)}
    (project / "agents" / "stock.mjs").write_text(body)


@pytest.fixture
def project(tmp_path: Path) -> Path:
    shutil.copytree(CASE, tmp_path / "cases" / "counts-stock")
    (tmp_path / "pyproject.toml").write_text('[project]\nname = "stock"\n')
    write_agents(tmp_path)
    return tmp_path


def results(out: str) -> dict[str, dict[str, Any]]:
    lines = [json.loads(line) for line in out.splitlines()]
    return {r["implementation"]: r for r in lines if r["kind"] == "result"}


def test_a_custom_tool_replayed_without_the_agent_is_an_error_naming_the_tool(
    project: Path,
) -> None:
    run = cli("run", "cases", "--format", "json", cwd=project)
    assert run.returncode == 3
    got = results(run.stdout)
    assert {r["verdict"] for r in got.values()} == {"error"}
    for r in got.values():
        assert r["reasons"] == ["handler_missing"]
        assert '"read_inventory" has no handler' in r["message"]
    pretty = cli("run", "cases", cwd=project)
    assert "hint: replay your own agent" in pretty.stdout and "--agent" in pretty.stdout


def test_the_users_agent_passes_on_both_implementations(project: Path) -> None:
    run = cli("run", "cases", "--format", "json", *AGENTS, cwd=project)
    assert run.returncode == 0, run.stdout + run.stderr
    got = results(run.stdout)
    assert {n: r["verdict"] for n, r in got.items()} == {"threads-py": "pass", "threads-ts": "pass"}
    assert all(r["agent_changes"] == [] for r in got.values())


def test_a_changed_system_prompt_drifts_at_system_with_both_values(project: Path) -> None:
    write_agents(project, system="You track stock. Never guess.")
    run = cli("run", "cases", "--format", "json", *AGENTS, cwd=project)
    assert run.returncode == 0  # drifted passes unless --strict
    for r in results(run.stdout).values():
        assert (r["verdict"], r["reasons"]) == ("drifted", ["request_diverged"])
        assert r["agent_changes"] == ["system prompt changed"]
        d = r["divergence"]
        assert (d["pointer"], d["recorded"], d["replayed"]) == (
            "/system",
            SYSTEM,
            "You track stock. Never guess.",
        )
    pretty = cli("run", "cases", "--strict", *AGENTS, cwd=project)
    assert pretty.returncode == 3
    assert "agent: system prompt changed" in pretty.stdout
    github = cli("run", "cases", "--format", "github", *AGENTS, cwd=project)
    assert "agent: system prompt changed" in github.stdout
    assert "/system" in github.stdout and "Never guess." in github.stdout


def test_a_changed_handler_reports_the_tool_result_that_moved(project: Path) -> None:
    write_agents(project, suffix=" (checked)")
    run = cli("run", "cases", "--format", "json", *AGENTS, cwd=project)
    assert run.returncode == 3  # the must pins the row the tool answered
    for r in results(run.stdout).values():
        assert r["verdict"] == "fail" and "must_unmatched" in r["reasons"]
        assert r["agent_changes"] == []  # same definitions: only the handler moved
        d = r["divergence"]
        assert d["pointer"].startswith("/messages/") and d["pointer"].endswith("/content")
        assert (d["recorded"], d["replayed"]) == ("A1,3", "A1,3 (checked)")


def test_accept_with_the_agent_brings_the_case_back_to_pass(project: Path) -> None:
    write_agents(project, system="You count stock.")
    accept = cli("accept", "cases", "--agent", "stock_agent:agent", cwd=project)
    assert accept.returncode == 0, accept.stdout + accept.stderr
    assert "model.json" in accept.stdout and "You count stock." in accept.stdout
    # case.json's summary fingerprints the agent the turn is now recorded with
    summary = json.loads((project / "cases" / CASE.name / "case.json").read_text())["agent"]
    assert summary["system_sha256"] == hashlib.sha256(b"You count stock.").hexdigest()
    run = cli("run", "cases", "--format", "json", *AGENTS, cwd=project)
    assert run.returncode == 0
    assert {r["verdict"] for r in results(run.stdout).values()} == {"pass"}
    # the recorded agent now differs from what the case asks: a run without --agent sees it
    again = cli("run", "cases", "--format", "json", "--impl", "threads-ts", cwd=project)
    assert results(again.stdout)["threads-ts"]["reasons"] == ["handler_missing"]


def test_accept_without_the_agent_keeps_the_errors_hint(project: Path) -> None:
    accept = cli("accept", "cases", cwd=project)
    assert accept.returncode == 3
    assert "cannot accept a case that errors" in accept.stderr
    assert "hint: replay your own agent" in accept.stderr  # not "check the arguments"


def test_accept_refuses_an_agent_whose_must_no_longer_holds(project: Path) -> None:
    write_agents(project, suffix=" (checked)")
    accept = cli("accept", "cases", "--impl", "threads-ts", *AGENTS[2:], cwd=project)
    assert accept.returncode == 3
    assert "must_unmatched" in accept.stdout + accept.stderr


def test_the_agent_setting_is_used_without_options(project: Path) -> None:
    (project / "pyproject.toml").write_text(
        '[project]\nname = "stock"\n\n[tool.threads-cases.agent]\n'
        'threads-py = "stock_agent:agent"\nthreads-ts = "./agents/stock.mjs#stockBot"\n'
    )
    run = cli("run", "cases", "--format", "json", cwd=project)
    assert run.returncode == 0, run.stdout + run.stderr
    assert {r["verdict"] for r in results(run.stdout).values()} == {"pass"}


def test_an_agent_that_cannot_be_imported_names_the_module_and_the_error(project: Path) -> None:
    run = cli("run", "cases", "--format", "json", "--agent", "stock_agnt:agent", cwd=project)
    r = results(run.stdout)["threads-py"]
    assert r["reasons"] == ["agent_unavailable"]
    assert 'importing "stock_agnt" failed: ModuleNotFoundError' in r["message"]
    bad = cli("run", "cases", "--agent", "not a reference", cwd=project)
    assert bad.returncode == 2 and "is not an agent reference" in bad.stderr


def test_the_pytest_plugin_replays_the_agent_and_fails_with_what_moved(project: Path) -> None:
    base = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider"]
    args = [*base, "--threads-cases", "cases", "--threads-cases-impl", "threads-py"]
    ok = subprocess.run(
        [*args, "--threads-cases-agent", "stock_agent:agent"],
        cwd=project,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert ok.returncode == 0, ok.stdout + ok.stderr
    write_agents(project, system="You track stock. Never guess.")
    bad = subprocess.run(
        [*args, "--threads-cases-agent", "stock_agent:agent", "--threads-cases-strict"],
        cwd=project,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert bad.returncode == 1
    assert "agent: system prompt changed" in bad.stdout
    assert "/system" in bad.stdout


def test_the_pytest_plugins_hints_name_its_own_options(project: Path) -> None:
    """A pytest item's hint names the option pytest takes (--threads-cases-agent), not the
    CLI's --agent, which pytest refuses."""
    base = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider"]
    missing = subprocess.run(
        [*base, "--threads-cases", "cases", "--threads-cases-impl", "threads-py"],
        cwd=project,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert missing.returncode == 1 and "handler_missing" in missing.stdout
    flat = " ".join(missing.stdout.replace("│", " ").split())
    assert "hint: replay your own agent, which holds the handler: --threads-cases-agent" in flat
    assert " --agent " not in flat
    assert "in the settings, or --threads-cases-impl" in flat and " --impl " not in flat
    bad = subprocess.run(
        [*base, "--threads-cases", "cases", "--threads-cases-agent", "stock_agnt:agent"],
        cwd=project,
        capture_output=True,
        text=True,
        timeout=300,
    )
    flat = " ".join(bad.stdout.replace("│", " ").split())
    assert "agent_unavailable" in flat and "(--threads-cases-agent, or agent" in flat, flat
    assert "--threads-cases-app-dir" in flat and " --app-dir" not in flat


def test_run_case_and_assert_passes_in_a_users_own_test(
    project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from threads_cases import run_case
    from threads_cases.pytest import assert_passes

    monkeypatch.chdir(project)
    monkeypatch.syspath_prepend(str(project))
    result = run_case("cases/counts-stock", agent="stock_agent:agent", app_dir=[project])
    assert result.verdict == "pass", str(result)
    missing = run_case("cases/counts-stock")
    assert str(missing).startswith("counts-stock [threads-py]: error (handler_missing)")
    assert "\n  hint: replay your own agent" in str(missing)  # what to do, as the CLI says
    with pytest.raises(pytest.fail.Exception) as failed:
        assert_passes("cases/counts-stock")
    assert "handler_missing" in str(failed.value)


def test_save_verifies_a_custom_tool_with_the_agent(project: Path) -> None:
    """`save` of a log replays the case before writing it: a custom sandbox tool needs the
    agent that holds its handler (--agent), and the refusal without it names the cause."""
    from threads_cases import FakeSandbox, Thread
    from threads_cases.reference.agent_ref import load_python_agent
    from threads_cases.reference.model import ScriptedModel, text_reply, tool_reply

    agent = load_python_agent("stock_agent:agent", [str(project)])
    thread = Thread.create(agent=agent, sandbox=FakeSandbox({"inventory.csv": "A1,3\n"}))
    replies = [tool_reply(("t1", "read_inventory", {"sku": "A1"})), text_reply("3.")]
    thread.run_turn("A1?", ScriptedModel(replies))
    thread.write_log(project / "t.jsonl")
    thread.write_artifacts(project / "arts")
    args = ["save", "t.jsonl", "--turn", "1", "--name", "again", "--dir", "saved"]
    args += ["--artifacts", "arts"]
    refused = cli(*args, cwd=project)
    assert refused.returncode == 2
    assert "handler_missing" in refused.stderr and "--agent" in refused.stderr
    assert not (project / "saved" / "again").exists()
    saved = cli(*args, "--agent", "stock_agent:agent", cwd=project)
    assert saved.returncode == 0, saved.stderr
    assert (project / "saved" / "again" / "case.json").is_file()


def test_a_handler_that_crashes_is_handler_failed_naming_the_tool_error_and_line(
    project: Path,
) -> None:
    """A bug in the agent's own handler is the user's, not threads-cases' (spec/replay.md
    8.1): ``handler_failed`` with the tool, the error and the file and line it came from."""
    py = (project / "stock_agent.py").read_text()
    (project / "stock_agent.py").write_text(
        py.replace("    rows = ctx.read", "    1 / 0\n    rows = ctx.read")
    )
    js = (project / "agents" / "stock.mjs").read_text()
    js = js.replace(
        "  const rows = text", '  throw new Error("no inventory today");\n  const rows = text'
    )
    (project / "agents" / "stock.mjs").write_text(js)
    run = cli("run", "cases", "--format", "json", *AGENTS, cwd=project)
    assert run.returncode == 3
    got = results(run.stdout)
    assert {r["verdict"] for r in got.values()} == {"error"}
    py_line = (
        py.splitlines().index('    rows = ctx.read("inventory.csv").decode("utf-8").splitlines()')
        + 1
    )
    assert got["threads-py"]["message"] == (
        "error[handler_failed]: threads-py: the handler of sandbox tool "
        f'"read_inventory" raised ZeroDivisionError: division by zero at stock_agent.py:{py_line}'
    )
    assert got["threads-ts"]["message"] == (
        "error[handler_failed]: threads-ts: the handler of sandbox tool "
        '"read_inventory" raised Error: no inventory today at stock.mjs:5'
    )
    for r in got.values():
        assert r["reasons"] == ["handler_failed"] and "internal_error" not in run.stderr
    pretty = cli("run", "cases", *AGENTS, cwd=project)
    assert "hint: the handler itself raised, not the model's input" in pretty.stdout + pretty.stderr
