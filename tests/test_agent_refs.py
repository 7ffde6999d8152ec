"""Naming the user's own agent (spec/replay.md 8.2, 8.3, 8.5): references and where they go,
the settings, loading a Python agent and its refusals, and what differs between two agents."""

from __future__ import annotations

from pathlib import Path

import pytest

from threads_cases.core.errors import CaseError
from threads_cases.harness.check.agent_diff import agent_changes, recorded_agent
from threads_cases.harness.run.agent_setup import agent_note, agent_refs
from threads_cases.reference.agent import BUILTIN_TOOLS, AgentSpec
from threads_cases.reference.agent_ref import AgentRef, load_python_agent, ref_language


@pytest.mark.parametrize(
    ("ref", "language"),
    [
        ("my_agent:agent", "python"),
        ("pkg.mod:factory.agent", "python"),
        ("./agent.mjs#bot", "javascript"),
        ("agents/bot.ts", "javascript"),
        ("my-package#bot", "javascript"),
        ("lib.mjs", "javascript"),
        ("my_agent", None),
        ("not a ref", None),
        ("./my_agent.py#agent", None),  # a Python agent is module:attribute, never a file
    ],
)
def test_a_reference_is_placed_by_its_language(ref: str, language: str | None) -> None:
    assert ref_language(ref) == language


def test_options_place_each_reference_and_take_the_app_dir(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "src").mkdir()
    refs = agent_refs(["a:b", "./x.mjs#y", "my-impl=whatever"], ["src"], known=["my-impl"])
    folder = (str((tmp_path / "src").resolve()),)
    assert refs == {
        "threads-py": AgentRef("a:b", folder),
        "threads-ts": AgentRef("./x.mjs#y", folder),
        "my-impl": AgentRef("whatever", folder),
    }
    assert agent_refs(["a:b"])["threads-py"].app_dir == (str(tmp_path.resolve()),)


@pytest.mark.parametrize(
    ("options", "message"),
    [
        (["nonsense"], "is not an agent reference"),
        (["a:b", "c:d"], "names two agents for threads-py"),
        (["ghost=a:b"], "an agent is given for ghost, which is no implementation"),
        (["threads-py="], "is not IMPL=REF"),
    ],
)
def test_a_bad_option_is_invalid_request(
    options: list[str], message: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    with pytest.raises(CaseError) as info:
        agent_refs(options)
    assert info.value.code == "invalid_request" and message in info.value.message


def test_a_python_file_given_as_a_reference_is_refused_with_its_module_name(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    with pytest.raises(CaseError) as info:
        agent_refs(["./todo_agent.py#agent"])
    assert info.value.code == "invalid_request"
    assert "such as todo_agent:agent" in info.value.hint


def test_an_agent_for_no_implementation_names_the_settings_file_and_key(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "pyproject.toml").write_text('[tool.threads-cases.agent]\npython = "a:b"\n')
    monkeypatch.chdir(tmp_path)
    with pytest.raises(CaseError) as info:
        agent_refs()
    err = info.value
    assert err.location.file == str((tmp_path / "pyproject.toml").absolute())
    assert err.message.startswith("tool.threads-cases.agent.python: an agent is given for python")
    assert err.hint.endswith("(configured ones under [tool.threads-cases.implementations])")


def test_in_threads_cases_toml_the_keys_are_named_without_the_tool_prefix(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "threads-cases.toml").write_text('[agent]\npython = "a:b"\n')
    monkeypatch.chdir(tmp_path)
    with pytest.raises(CaseError) as info:
        agent_refs()
    assert info.value.message.startswith("agent.python: an agent is given for python")
    assert info.value.hint.endswith("(configured ones under [implementations])")


def test_an_app_dir_that_is_no_folder_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    with pytest.raises(CaseError) as info:
        agent_refs(["a:b"], ["missing"])
    assert (info.value.code, info.value.location.file) == ("invalid_request", "missing")


def test_the_settings_give_the_agents_relative_to_their_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "lib").mkdir()
    (tmp_path / "threads-cases.toml").write_text(
        'app-dir = "lib"\n[agent]\nthreads-py = "a:b"\nthreads-ts = "./x.mjs"\n'
    )
    sub = tmp_path / "deep"
    sub.mkdir()
    monkeypatch.chdir(sub)
    lib = (str((tmp_path / "lib").resolve()),)
    assert agent_refs() == {
        "threads-py": AgentRef("a:b", lib),
        "threads-ts": AgentRef("./x.mjs", lib),
    }
    # options replace the setting
    assert set(agent_refs(["c:d"])) == {"threads-py"}


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("agent = 3\n", "agent must be an agent reference or a table of them, not the number 3"),
        ('agent = ""\n', "agent must be an agent reference or a table of them, not a string"),
        ("[agent]\nthreads-py = 1\n", "agent.threads-py must be an agent reference"),
        ("app-dir = []\n", "app-dir must be a folder or a list of folders"),
    ],
)
def test_a_malformed_agent_setting_is_refused_naming_the_key(
    text: str, message: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "threads-cases.toml").write_text(text)
    monkeypatch.chdir(tmp_path)
    with pytest.raises(CaseError) as info:
        agent_refs()
    assert info.value.code == "invalid_request" and message in info.value.message, info.value
    assert info.value.hint


MODULE = """
from threads_cases import AgentSpec

agent = AgentSpec("bot", "m", "Hi.")
def make():
    return AgentSpec("made", "m")
def broken():
    raise ValueError("no config\\nsecond line")
number = 3
"""


@pytest.fixture
def agent_dir(tmp_path: Path) -> str:
    (tmp_path / "agentmod_30.py").write_text(MODULE)
    (tmp_path / "agentmod_30_bad.py").write_text("import nowhere_zz9\n")
    (tmp_path / "agentmod_30_exit.py").write_text("raise SystemExit(2)\n")
    return str(tmp_path)


def test_a_python_agent_loads_from_an_attribute_or_a_factory(agent_dir: str) -> None:
    assert load_python_agent("agentmod_30:agent", [agent_dir]).name == "bot"
    assert load_python_agent("agentmod_30:make", [agent_dir]).name == "made"


@pytest.mark.parametrize(
    ("ref", "message"),
    [
        ("./x.mjs#y", "threads-py takes module:attribute"),
        (
            "agentmod_30_bad:agent",
            'importing "agentmod_30_bad" failed: ModuleNotFoundError: '
            "No module named 'nowhere_zz9'",
        ),
        ("agentmod_30_exit:agent", 'importing "agentmod_30_exit" failed: SystemExit: 2'),
        ("agentmod_30:missing", '"agentmod_30" has no attribute "missing" (its agents: "agent")'),
        ("agentmod_30:broken", 'calling "broken" failed: ValueError: no config'),
        ("agentmod_30:number", '"number" is a int, not an AgentSpec'),
    ],
)
def test_an_agent_that_cannot_load_is_agent_unavailable(
    ref: str, message: str, agent_dir: str
) -> None:
    with pytest.raises(CaseError) as info:
        load_python_agent(ref, [agent_dir])
    err = info.value
    assert err.code == "agent_unavailable"
    assert err.message.startswith(f'cannot load the agent "{ref}": ') and message in err.message
    assert "second line" not in err.message and "--agent" in err.hint


def test_agent_changes_name_what_moved_in_order() -> None:
    tools = [t.to_json() for t in BUILTIN_TOOLS.values()]
    before = {"name": "a", "model": "m1", "system": "x", "tools": tools[:3]}
    moved = [dict(tools[1], description="Other."), tools[0], tools[3]]
    after = {"name": "b", "model": "m2", "system": "y", "tools": moved}
    assert agent_changes(before, after) == [
        'name "a" -> "b"',
        'model "m1" -> "m2"',
        "system prompt changed",
        'tools added: "delete_file"',
        'tools removed: "list_files"',
        'tools changed: "write_file" (description)',
        "tools reordered",
    ]
    assert agent_changes(before, before) == []
    assert agent_changes(None, after) == []


def test_the_recorded_agent_is_the_first_request_record_with_the_prefix_name() -> None:
    prefix = AgentSpec("bot", "m", "old").to_json()
    record = {"model": "m", "system": "new", "tools": [], "messages": []}
    got = recorded_agent([record], prefix)
    assert got == {"name": "bot", "model": "m", "system": "new", "tools": []}
    assert recorded_agent([None], prefix) == prefix


def test_a_note_says_which_implementations_replay_the_recorded_agent() -> None:
    refs = {"threads-py": AgentRef("a:b")}
    assert agent_note(refs, ["threads-py", "threads-ts"]) == (
        "note: threads-ts replays the agent recorded in each case (no --agent given for it)"
    )
    assert agent_note(refs, ["threads-py"]) is None
    assert agent_note({}, ["threads-py", "threads-ts"]) is None
