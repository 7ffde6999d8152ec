"""What environment a driver starts with (spec/driver-protocol.md 5.6): the allow-list and
the settings' ``pass_env``, never the provider keys, in both languages' drivers, started by
``run`` as a user would (configured implementations, every isolation)."""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path

import pytest
from conftest import START_MS, cli, ts_built

from threads_cases.case.directory import CaseExpectation
from threads_cases.harness.run.isolation import netns_command
from threads_cases.protocol.driver_env import check_pass_env, driver_environment
from threads_cases.reference.agent import BUILTIN_TOOLS, AgentSpec, ToolSpec
from threads_cases.reference.model import ScriptedModel, text_reply, tool_reply
from threads_cases.reference.runtime import Clock
from threads_cases.reference.sandbox import FakeSandbox
from threads_cases.reference.thread import Thread

DRIVERS = Path(__file__).parent / "drivers"
KEYS = {
    "ANTHROPIC_API_KEY": "sk-ant-api03-" + "a" * 40,
    "OPENAI_API_KEY": "sk-proj-" + "b" * 40,
    "AWS_SECRET_ACCESS_KEY": "c" * 40,
    "GITHUB_TOKEN": "ghp_" + "d" * 36,
}


def test_the_allow_list_keeps_what_programs_need_and_drops_every_key() -> None:
    base = {**KEYS, "PATH": "/bin", "LC_ALL": "C.UTF-8", "THREADS_CASES_DEBUG": "1"}
    base |= {"MY_AGENT_HOME": "/a", "MY_AGENT_MODE": "x", "MY_AGENTX": "no", "path": "lower"}
    assert driver_environment(base=base) == {
        "PATH": "/bin",
        "LC_ALL": "C.UTF-8",
        "THREADS_CASES_DEBUG": "1",
    }
    got = driver_environment(["MY_AGENT_*", "OPENAI_API_KEY", "NOT_SET"], base=base)
    assert set(got) == {
        "PATH",
        "LC_ALL",
        "THREADS_CASES_DEBUG",
        "MY_AGENT_HOME",
        "MY_AGENT_MODE",
        "OPENAI_API_KEY",  # named on purpose: passed
    }


@pytest.mark.parametrize("bad", ["*", "A B", "X**", "1X", "", "A-B"])
def test_pass_env_names_are_variable_names(bad: str) -> None:
    assert check_pass_env(["OK", bad]) is None
    assert check_pass_env("OK") is None
    assert check_pass_env(["OK", "P_*"]) == ["OK", "P_*"]


def _env_case(root: Path) -> None:
    tool = ToolSpec(
        "probe",
        "Report the environment.",
        {"type": "object", "properties": {"how": {"type": "string"}}, "required": ["how"]},
        "sandbox",
        "read",
        lambda ctx, inp: "tried",
    )
    agent = AgentSpec("env-agent", "model-e", "Probe.", (*BUILTIN_TOOLS.values(), tool))
    t = Thread.create(
        agent=agent, sandbox=FakeSandbox({}), thread_id="t-env", clock=Clock(START_MS, 3)
    )
    t.run_turn("warm up", ScriptedModel([text_reply("ok")]))
    at = t.events[-1]["event_id"]
    t.run_turn(
        "env", ScriptedModel([tool_reply(("tu_1", "probe", {"how": "env"})), text_reply("done")])
    )
    saved = t.save_case("env", at=at, expect=CaseExpectation(must=[], expect=[]), dir=root)
    assert saved.ok, saved.error


def _command(language: str) -> tuple[list[str], str]:
    if language == "python":
        return [sys.executable, str(DRIVERS / "egress_driver.py")], "threads-py"
    node = shutil.which("node")
    if node is None or not ts_built():
        pytest.skip("the TypeScript driver is not built")
    return [node, str(DRIVERS / "egress_driver.mjs")], "threads-ts"


@pytest.mark.parametrize("isolation", ["netns", "guard"])
@pytest.mark.parametrize("language", ["python", "typescript"])
def test_a_driver_run_by_run_gets_no_provider_key_and_the_passed_names(
    tmp_path: Path, language: str, isolation: str
) -> None:
    if isolation == "netns" and netns_command() is None:
        pytest.skip("no tool can create a network namespace here")
    command, dialect = _command(language)
    _env_case(tmp_path / "cases")
    (tmp_path / "pyproject.toml").write_text(
        '[tool.threads-cases]\npass_env = ["PROBE_*", "MY_AGENT_HOME"]\n'
        f"[tool.threads-cases.implementations.mine]\ncommand = {json.dumps(command)}\n"
        f'dialect = "{dialect}"\n'
    )
    out = tmp_path / "env.txt"
    env = {**KEYS, "PROBE_ENV_OUT": str(out), "MY_AGENT_HOME": "/agent", "MY_AGENT_OTHER": "x"}
    p = cli("run", "cases", "--impl", "mine", "--isolation", isolation, cwd=tmp_path, env=env)
    assert p.returncode == 0, p.stdout + p.stderr
    names = set(out.read_text().split())
    assert not names & set(KEYS), names
    assert {"PROBE_ENV_OUT", "MY_AGENT_HOME", "PATH", "THREADS_CASES_ISOLATION"} <= names
    assert "MY_AGENT_OTHER" not in names


def test_a_malformed_pass_env_is_refused_naming_the_key(tmp_path: Path) -> None:
    _env_case(tmp_path / "cases")
    (tmp_path / "pyproject.toml").write_text('[tool.threads-cases]\npass_env = ["*"]\n')
    p = cli("run", "cases", "--format", "json", cwd=tmp_path)
    assert p.returncode == 2, p.stdout + p.stderr
    err = json.loads(p.stdout)
    assert err["code"] == "invalid_request"
    assert "tool.threads-cases.pass_env" in err["message"], err
