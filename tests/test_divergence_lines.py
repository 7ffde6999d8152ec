"""What a newcomer reads first in a failure panel (issue 38, spec/reports.md 7): a
``missing_stub`` divergence compares the recorded stub input with the replayed call input,
both as JSON, at the pointer inside them; and every divergence names its event one way, by
the seq and event id of the log (the numbering of the matcher sentences), with model calls
counted from 0 as model.json's replies and ``model:<n>`` keys count them. Golden files hold
the rendered lines (tests/golden.py)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

from conftest import cli
from golden import assert_golden

CASES = Path(__file__).resolve().parent.parent / "spec" / "conformance" / "cases"


def _copy(tmp_path: Path, name: str) -> Path:
    case = tmp_path / "cases" / name
    shutil.copytree(CASES / name, case)
    return case


def _edit(path: Path, change: Any) -> None:
    data = json.loads(path.read_text())
    change(data)
    path.write_text(json.dumps(data, indent=2))


def _run(tmp_path: Path) -> tuple[str, list[dict[str, Any]]]:
    """The text panels' divergence lines and the JSON results of one threads-py run."""
    text = cli("run", "cases", "--impl", "threads-py", cwd=tmp_path, env={"COLUMNS": "100"})
    js = cli("run", "cases", "--impl", "threads-py", "--format", "json", cwd=tmp_path)
    results = [json.loads(x) for x in js.stdout.splitlines() if '"kind":"result"' in x]
    lines = [x for x in text.stdout.splitlines() if "first divergence" in x or x.startswith("│ ")]
    return "\n".join(lines) + "\n", results


def test_a_missing_stub_compares_recorded_input_with_replayed_input(tmp_path: Path) -> None:
    case = _copy(tmp_path, "weather-stub")
    _edit(case / "stubs.json", lambda s: s["calls"][0]["input"].update(city="Bergen"))
    panel, results = _run(tmp_path)
    d = results[0]["divergence"]
    assert results[0]["verdict"] == "fail"
    assert (d["kind"], d["pointer"], d["event_type"]) == ("stop", "/city", "tool_called")
    assert (d["recorded"], d["replayed"]) == ({"city": "Bergen"}, {"city": "Oslo"})
    assert (d["seq"], d["event_id"]) == (5, "weather-stub.5")
    assert 'recorded input {"city":"Bergen"} != replayed input {"city":"Oslo"}' in d["summary"]
    assert "the agent called" not in d["summary"]  # a sentence is not a value to compare
    assert_golden("divergence-missing-stub.txt", d["summary"] + "\n" + panel)


def test_the_compliance_page_shows_the_missing_stub_as_the_panel_does(tmp_path: Path) -> None:
    from threads_cases.harness.check.compliance import _divergence

    case = _copy(tmp_path, "weather-stub")
    _edit(case / "stubs.json", lambda s: s["calls"][0]["input"].update(city="Bergen"))
    _panel, results = _run(tmp_path)
    view = _divergence(results[0]["divergence"])
    assert view.where == "seq 5 tool_called (weather-stub.5)"
    assert (view.pointer, view.recorded, view.replayed) == (
        "/city",
        '{\n  "city": "Bergen"\n}',
        '{\n  "city": "Oslo"\n}',
    )


def test_a_missing_stub_compares_the_first_stub_the_replay_left(tmp_path: Path) -> None:
    # two equal calls take the two stubs in file order (replay.md 3.5): when the second stub
    # no longer fits, the second call is compared with it, not with the used first one
    case = _copy(tmp_path, "repeated-stub-order")
    _edit(case / "stubs.json", lambda s: s["calls"][1]["input"].update(q="threadz"))
    _panel, results = _run(tmp_path)
    d = results[0]["divergence"]
    assert (d["pointer"], d["recorded"], d["replayed"]) == (
        "/q",
        {"q": "threadz"},
        {"q": "threads"},
    )
    assert "stubs.json /calls/1 is the first unused stub" in d["summary"]
    assert_golden("divergence-missing-stub-second.txt", d["summary"] + "\n")


def test_a_missing_stub_with_no_stub_left_says_so(tmp_path: Path) -> None:
    case = _copy(tmp_path, "weather-stub")
    _edit(case / "stubs.json", lambda s: s["calls"][0].update(tool="web_search"))
    _panel, results = _run(tmp_path)
    d = results[0]["divergence"]
    assert "recorded" not in d and d["replayed"] == {"city": "Oslo"}
    assert_golden("divergence-missing-stub-none-left.txt", d["summary"] + "\n")


def test_a_request_divergence_names_its_event_by_seq_and_id(tmp_path: Path) -> None:
    case = _copy(tmp_path, "reads-notes")

    def record_other_result(model: dict[str, Any]) -> None:  # as if recorded from another file
        reply = model["replies"][1]
        reply["request"]["messages"][1]["content"][0]["content"] = "buy bread\n"
        reply["request_sha256"] = "f" * 64

    _edit(case / "model.json", record_other_result)
    panel, results = _run(tmp_path)
    d = results[0]["divergence"]
    assert (d["call"], d["seq"], d["event_id"], d["event_index"]) == (1, 9, "reads-notes.9", 8)
    assert d["summary"].startswith(
        "request (model call 1, model.json /replies/1) on seq 9 model_requested (reads-notes.9) at "
    )
    assert "event 8" not in panel  # one numbering: the turn's index is not shown
    assert_golden("divergence-request.txt", d["summary"] + "\n" + panel)


def test_the_summary_line_counts_cases_and_results_apart(tmp_path: Path) -> None:
    for name in ("reads-notes", "weather-stub"):
        _copy(tmp_path, name)
    p = cli("run", "cases", cwd=tmp_path)
    assert p.returncode == 0, p.stdout + p.stderr
    last = p.stdout.splitlines()[-1]
    assert last.startswith("2 cases on 2 implementations, 4 results: 4 pass in "), last
    one = cli("run", "cases/reads-notes", "--impl", "threads-py", cwd=tmp_path)
    line = one.stdout.splitlines()[-1]
    assert_golden("summary-line.txt", last.split(" in ")[0] + "\n" + line.split(" in ")[0] + "\n")


def test_piped_narrow_output_never_breaks_a_word(tmp_path: Path) -> None:
    case = _copy(tmp_path, "weather-stub")
    _edit(case / "stubs.json", lambda s: s["calls"][0]["input"].update(city="Bergen"))
    cfg = '[implementations.my-impl]\ncommand = ["./no-such-driver"]\ndialect = "threads-py"\n'
    (tmp_path / "threads-cases.toml").write_text(cfg)
    p = cli(
        "run",
        "cases",
        "--impl",
        "threads-py",
        "--impl",
        "my-impl",
        cwd=tmp_path,
        env={"COLUMNS": "30"},
    )
    shown = p.stdout.splitlines()[:-1]  # the last line holds the time
    words = {w for line in shown for w in line.replace("│", " ").replace("┃", " ").split()}
    for whole in (
        "driver_unavailable",
        "missing_stub",
        "/city:",
        '{"city":"Bergen"}',
        "cases/weather-stub",
    ):
        assert whole in words, (whole, p.stdout)
    assert "…" not in p.stdout
    impls = cli("implementations", cwd=tmp_path, env={"COLUMNS": "30"})
    assert any(
        "driver_unavailable" in line.split()
        for line in (x.replace("│", " ") for x in impls.stdout.splitlines())
    )
    drawn = [x for x in shown if not x.startswith("error[")]  # that line names tmp_path
    assert_golden("run-piped-narrow.txt", "\n".join(drawn) + "\n")


def test_show_piped_narrow_wraps_at_spaces_only(tmp_path: Path) -> None:
    _copy(tmp_path, "weather-stub")
    p = cli("show", "cases/weather-stub", cwd=tmp_path, env={"COLUMNS": "40"})
    assert p.returncode == 0, p.stderr
    words = {w for line in p.stdout.splitlines() for w in line.replace("│", " ").split()}
    for whole in ("thread_started", "conformance-agent", "external_effects", "get_weather"):
        assert whole in words, (whole, p.stdout)
    # the matcher is one word, longer than the width: on a line of its own, never cut
    assert '{"data":{"is_error":false,"name":"get_weather"},"type":"tool_result"}' in words
    assert_golden("show-piped-narrow.txt", p.stdout)
