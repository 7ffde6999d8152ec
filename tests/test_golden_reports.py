"""Golden files (tests/golden.py) for every rendering of a run: the terminal's panels and
table, ``--format github``, JUnit XML, the JSON report and the compliance page, each from
the CLI as a user runs it, piped (so without colour); the terminal's at 100 columns (a real
subprocess: the width is read at import), the others through the fork server.

Two small fixed suites make them meaningful. The first holds one case of each verdict but
skip, copied from spec/conformance/cases/ and edited: ``reads-notes`` passes,
``weather-stub`` fails (its stub's input no longer matches: a missing_stub stop and an
unmatched must), ``lists-files`` errors (its case.json asks for format 99) and
``writes-summary`` drifts (model.json holds a reply the replay never asks for). The second
replays the user's own agent whose system prompt changed
(spec/conformance/agent/cases/counts-stock): ``drifted`` with the agent's changes named.
Only threads-py runs, under ``--isolation guard``, so the goldens are the same on every
machine. ``THREADS_CASES_UPDATE_GOLDEN=1`` rewrites them.
"""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest
from conftest import CONFORMANCE, ROOT, cli
from golden import GOLDEN, assert_golden, normalise

#: the terminal's width for the panels and the table
WIDTH = {"COLUMNS": "100"}
RUN = ["--impl", "threads-py", "--isolation", "guard"]
STOCK = ROOT / "spec" / "conformance" / "agent" / "cases" / "counts-stock"
#: the user's agent of counts-stock, with a system prompt other than the recorded one
STOCK_AGENT = """from threads_cases import AgentSpec, ToolSpec
from threads_cases.reference.agent import BUILTIN_TOOLS


def read_inventory(ctx, inp):
    rows = ctx.read("inventory.csv").decode("utf-8").splitlines()
    hit = [r for r in rows if r.split(",")[0] == inp["sku"]]
    return hit[0] if hit else f"no SKU {inp['sku']}"


agent = AgentSpec(
    "stock-bot",
    "model-x-1",
    "You track stock. Never guess.",
    (
        BUILTIN_TOOLS["read_file"],
        ToolSpec(
            "read_inventory",
            "Look a SKU up in inventory.csv.",
            {"type": "object", "properties": {"sku": {"type": "string"}}, "required": ["sku"]},
            kind="sandbox",
            effect="read",
            handler=read_inventory,
        ),
    ),
)
"""


def _edit(path: Path, change: Any) -> None:
    data = json.loads(path.read_text(encoding="utf-8"))
    change(data)
    path.write_text(json.dumps(data, indent=2), encoding="utf-8")


@pytest.fixture(scope="module")
def suite(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The project of the first suite: cases/ with one pass, fail, error and drifted case."""
    root = tmp_path_factory.mktemp("golden")
    for name in ("reads-notes", "weather-stub", "lists-files", "writes-summary"):
        shutil.copytree(CONFORMANCE / name, root / "cases" / name)
    cases = root / "cases"
    _edit(
        cases / "weather-stub" / "stubs.json",
        lambda s: s["calls"][0]["input"].update(city="Bergen"),
    )
    _edit(cases / "lists-files" / "case.json", lambda c: c.update(format=99))
    _edit(cases / "writes-summary" / "model.json", lambda m: m["replies"].append(m["replies"][-1]))
    return root


@pytest.fixture(scope="module")
def agent_project(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The project of the second suite: counts-stock and the user's changed agent."""
    root = tmp_path_factory.mktemp("golden-agent")
    shutil.copytree(STOCK, root / "cases" / "counts-stock")
    (root / "pyproject.toml").write_text('[project]\nname = "stock"\n', encoding="utf-8")
    (root / "stock_agent.py").write_text(STOCK_AGENT, encoding="utf-8")
    return root


def rendered(p: subprocess.CompletedProcess[str], root: Path) -> str:
    """A run's exit status, stdout and stderr as one normalised text."""
    text = f"exit {p.returncode}\n--- stdout\n{p.stdout}--- stderr\n{p.stderr}"
    return normalise(text, root=root)


def test_the_terminal_panels_and_table(suite: Path) -> None:
    p = cli("run", "cases", *RUN, cwd=suite, env=WIDTH)
    assert p.returncode == 3, p.stderr
    assert "\x1b[" not in p.stdout + p.stderr  # no colour in a golden
    assert_golden("run-pretty.txt", rendered(p, suite))


def test_the_github_annotations(suite: Path) -> None:
    p = cli("run", "cases", *RUN, "--format", "github", cwd=suite)
    assert p.returncode == 3, p.stderr
    assert_golden("run-github.txt", rendered(p, suite))


def test_the_junit_xml(suite: Path, tmp_path: Path) -> None:
    junit = tmp_path / "junit.xml"
    p = cli("run", "cases", *RUN, "--format", "json", "--junit", junit, cwd=suite)
    assert p.returncode == 3, p.stderr
    assert_golden("run-junit.xml", normalise(junit.read_text(encoding="utf-8"), root=suite))


@pytest.fixture(scope="module")
def report(suite: Path) -> str:
    """The suite's JSON Lines report (``run --format json``)."""
    p = cli("run", "cases", *RUN, "--format", "json", cwd=suite)
    assert p.returncode == 3, p.stderr
    return p.stdout


def test_the_json_report(suite: Path, report: str) -> None:
    verdicts = [json.loads(line).get("verdict") for line in report.splitlines()]
    assert verdicts == [None, "error", "pass", "fail", "drifted", None]  # header ... footer
    assert_golden("run-report.jsonl", normalise(report, root=suite))


def test_the_compliance_page(report: str, tmp_path: Path) -> None:
    (tmp_path / "report.jsonl").write_text(report, encoding="utf-8")
    p = cli("report", "html", "report.jsonl", "-o", "page", cwd=tmp_path)
    assert p.returncode == 0, p.stderr
    page = (tmp_path / "page" / "index.html").read_text(encoding="utf-8")
    assert_golden("report-page.html", normalise(page, root=tmp_path))
    assert_golden("report-html-command.txt", rendered(p, tmp_path))


@pytest.mark.parametrize("fmt", ["pretty", "github"])
def test_a_drifted_agent(agent_project: Path, fmt: str) -> None:
    p = cli(
        "run", "cases", *RUN, "--agent", "stock_agent:agent", "--format", fmt,
        cwd=agent_project, env=WIDTH if fmt == "pretty" else None,
    )  # fmt: skip
    assert p.returncode == 0, p.stderr  # drifted passes unless --strict
    assert "system prompt changed" in p.stdout
    assert_golden(f"agent-drift-{fmt}.txt", rendered(p, agent_project))


def test_an_agent_that_does_not_load_is_said_once_not_per_case(tmp_path: Path) -> None:
    """`--agent` naming a module that does not exist: every case is an error (the verdict says
    what happened to it), and the terminal says the one error once, under the table."""
    for name in ("reads-notes", "weather-stub"):
        shutil.copytree(CONFORMANCE / name, tmp_path / "cases" / name)
    (tmp_path / "pyproject.toml").write_text('[project]\nname = "x"\n', encoding="utf-8")
    args = ["run", "cases", *RUN, "--agent", "no_such_agent:agent"]
    p = cli(*args, cwd=tmp_path, env=WIDTH)
    assert p.returncode == 3, p.stderr
    assert p.stdout.count("cannot load the agent") == 1, p.stdout
    assert_golden("agent-unavailable-once.txt", rendered(p, tmp_path))
    js = cli(*args, "--format", "json", cwd=tmp_path)
    results = [json.loads(x) for x in js.stdout.splitlines() if '"kind":"result"' in x]
    assert [(r["verdict"], r["reasons"]) for r in results] == [("error", ["agent_unavailable"])] * 2


def test_a_layout_change_fails_its_golden(monkeypatch: pytest.MonkeyPatch) -> None:
    """The comparison is byte for byte: one border character more is a failure."""
    monkeypatch.delenv("THREADS_CASES_UPDATE_GOLDEN", raising=False)
    text = (GOLDEN / "run-pretty.txt").read_text(encoding="utf-8")
    assert_golden("run-pretty.txt", text)
    for changed in (text.replace("━┳━", "━━┳━", 1), text.replace("│ ", "│  ", 1)):
        assert changed != text
        with pytest.raises(AssertionError, match="differs from"):
            assert_golden("run-pretty.txt", changed)


def test_the_normaliser_hides_only_what_varies(tmp_path: Path) -> None:
    from threads_cases import __version__

    one = (
        f'{{"cwd":"{tmp_path}","duration_ms":131.412,"started_at":"2026-12-02T09:44:44Z",'
        f'"version":"{__version__}","ts":"2026-11-29T20:00:00.005Z"}}\n'
        '<testcase time="0.247" />\n│ 4 results: 1 pass in 0.33s │\n'
        f"started 2026-12-02T09:44:44Z, threads-cases {__version__}"
    )
    other = one.replace("131.412", "7.5").replace("0.247", "12.000").replace("0.33s", "1s")
    other = other.replace("09:44:44", "23:59:01")
    assert normalise(one, root=tmp_path) == normalise(other, root=tmp_path)
    out = normalise(one, root=tmp_path)
    assert '"ts":"2026-11-29T20:00:00.005Z"' in out  # a recorded timestamp is not volatile
    assert '"cwd":"<root>"' in out and "│ 4 results: 1 pass in <seconds>s │" in out
    assert "threads-cases <version>" in out and __version__ not in out
