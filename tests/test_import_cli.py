"""The `import`, `turns`, `draft` and `save --from/--turn/--draft` commands, run as real
subprocesses on the hand-written sample transcripts of tests/importers/, each saved turn
then replayed with `threads-cases run` (the samples' logs validated by one `validate` and
their cases replayed by one `run`, each sample's result checked on its own)."""

from __future__ import annotations

import json
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from conftest import cli

SAMPLES = Path(__file__).resolve().parent / "importers"
CONFORMANCE = Path(__file__).resolve().parents[1] / "spec" / "conformance" / "cases"

#: The implementations every saved case is run on (add "threads-ts" once its driver exists).
IMPLEMENTATIONS: tuple[str, ...] = ("threads-py", "threads-ts")

#: sample -> (format, turn to save, extra import arguments, expected number of turns)
CASES: dict[str, tuple[str, int, tuple[str, ...], int]] = {
    "claude-code-parallel.jsonl": ("claude-code", 1, (), 2),
    "claude-code-fork.jsonl": ("claude-code", 2, (), 2),
    "claude-code-sidechain.jsonl": ("claude-code", 3, (), 3),
    "claude-code-sidechain-only.jsonl": ("claude-code", 1, (), 1),
    "codex-exec-basic.jsonl": ("codex", 1, ("--prompt", "Résume le README"), 1),
    "codex-exec-failed.jsonl": ("codex", 1, (), 2),
    "codex-rollout-basic.jsonl": ("codex", 1, (), 1),
    "codex-rollout-parallel.jsonl": ("codex", 1, (), 3),
}


def run_verdicts(
    cwd: Path, cases: Path, impls: tuple[str, ...] = IMPLEMENTATIONS
) -> dict[tuple[str, str], dict[str, Any]]:
    """Run every case under ``cases`` on ``impls``; ``{(case, impl): result line}``."""
    args: list[str] = ["run", str(cases), "--format", "json"]
    for impl in impls:
        args += ["--impl", impl]
    p = cli(*args, cwd=cwd)
    lines = [json.loads(x) for x in p.stdout.splitlines() if x.strip()]
    return {(r["case"], r["implementation"]): r for r in lines if r.get("kind") == "result"}


@dataclass
class Imported:
    """What the CLI said for one sample: ``import``, ``turns`` and ``save --draft`` of its
    own, ``validate`` and ``run`` shared by every sample (one subprocess each)."""

    log: Path
    case: Path
    imported: subprocess.CompletedProcess[str]
    turns: subprocess.CompletedProcess[str]
    saved: subprocess.CompletedProcess[str]
    validated: subprocess.CompletedProcess[str]
    verdicts: dict[tuple[str, str], dict[str, Any]]


@pytest.fixture(scope="module")
def imported(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Imported]:
    """Every sample imported, listed and its turn saved as ``cases/<sample stem>``; then
    the logs validated in one ``validate`` and the cases replayed in one ``run``."""
    root = tmp_path_factory.mktemp("imports")
    done = {}
    for sample, (fmt, n, extra, _count) in sorted(CASES.items()):
        name = sample.removesuffix(".jsonl")
        work = root / name
        work.mkdir()
        log = work / "thread.jsonl"
        imp = cli("import", fmt, SAMPLES / sample, "-o", log, "--verbose", *extra, cwd=work)
        turns = cli("turns", log, "--format", "json", cwd=work)
        saved = cli(
            "save", log, "--turn", n, "--name", name, "--dir", root / "cases", "--draft", cwd=work
        )
        done[sample] = (log, root / "cases" / name, imp, turns, saved)
    validated = cli("validate", *(d[0] for d in done.values()), "--format", "json", cwd=root)
    verdicts = run_verdicts(root, root / "cases")
    return {k: Imported(*v, validated, verdicts) for k, v in done.items()}


@pytest.mark.xdist_group("import-samples")  # the module fixture is built once, on one worker
@pytest.mark.parametrize("sample", sorted(CASES))
def test_sample_imports_lists_saves_and_replays(imported: dict[str, Imported], sample: str) -> None:
    _fmt, n, _extra, count = CASES[sample]
    got = imported[sample]
    p = got.imported
    assert p.returncode == 0, p.stderr
    assert f"{count} turn(s)" in p.stdout
    assert "skipped" in p.stderr  # --verbose always reports
    validation = json.loads(got.validated.stdout)
    mine = [r for r in validation["results"] if Path(r["file"]) == got.log]
    assert [r["valid"] for r in mine] == [True], validation

    p = got.turns
    assert p.returncode == 0, p.stderr
    turns = json.loads(p.stdout)
    assert [t["index"] for t in turns] == list(range(1, count + 1))
    turn = turns[n - 1]
    assert turn["status"] == "completed"
    events = [json.loads(x) for x in got.log.read_text(encoding="utf-8").splitlines()]
    ids = [e["event_id"] for e in events]
    assert ids[ids.index(turn["user_message"]) - 1] == turn["fork_point"]
    assert events[ids.index(turn["terminal"])]["type"] == "turn_completed"

    p = got.saved
    assert p.returncode == 0, p.stderr
    case = json.loads((got.case / "case.json").read_text("utf-8"))
    assert case["at"] == turn["fork_point"]
    assert case["expect"]["must"][-1]["type"] == "turn_completed"
    assert all(t["kind"] == "external" for t in case["agent"]["tools"])

    for impl in IMPLEMENTATIONS:
        r = got.verdicts[(got.case.name, impl)]
        assert r["verdict"] == "pass", r


def test_save_from_transcript_in_memory(tmp_path: Path) -> None:
    """`save --from` imports in memory: same case as import + save, nothing else written."""
    src = SAMPLES / "claude-code-fork.jsonl"
    p = cli(
        "save",
        "--from",
        "claude-code",
        src,
        "--turn",
        "1",
        "--name",
        "first",
        "--dir",
        "cases",
        "--must",
        '{"type": "tool_result", "data": {"name": "Read"}}',
        cwd=tmp_path,
    )
    assert p.returncode == 0, p.stderr
    assert cli("import", "claude-code", src, "-o", "t.jsonl", cwd=tmp_path).returncode == 0
    p = cli(
        "save",
        "t.jsonl",
        "--turn",
        "1",
        "--name",
        "second",
        "--dir",
        "cases",
        "--must",
        '{"type": "tool_result", "data": {"name": "Read"}}',
        cwd=tmp_path,
    )
    assert p.returncode == 0, p.stderr
    a, b = (tmp_path / "cases" / "first", tmp_path / "cases" / "second")
    for f in ("log.threads-py.jsonl", "model.json", "stubs.json", "expected.threads-py.json"):
        assert (a / f).read_bytes() == (b / f).read_bytes()
    verdicts = run_verdicts(tmp_path, tmp_path / "cases")
    assert {r["verdict"] for r in verdicts.values()} == {"pass"}


def test_draft_prints_matchers(tmp_path: Path) -> None:
    assert (
        cli(
            "import",
            "claude-code",
            SAMPLES / "claude-code-sidechain.jsonl",
            "-o",
            "t.jsonl",
            cwd=tmp_path,
        ).returncode
        == 0
    )
    p = cli("draft", "t.jsonl", "--turn", "2", cwd=tmp_path)
    assert p.returncode == 0, p.stderr
    assert json.loads(p.stdout) == {
        "must": [{"type": "turn_failed", "data": {"error": {"code": "interrupted"}}}],
        "expect": [{"type": "tool_called", "data": {"name": "Bash"}}],
    }
    p = cli("draft", "t.jsonl", "--turn", "9", cwd=tmp_path)
    assert p.returncode == 2 and "error[invalid_request]" in p.stderr


def test_malformed_line_refused_and_nothing_written(tmp_path: Path) -> None:
    out = tmp_path / "out.jsonl"
    src = SAMPLES / "claude-code-malformed.jsonl"
    p = cli("import", "claude-code", src, "-o", out, "--strict", cwd=tmp_path)
    assert p.returncode == 1
    first = p.stderr.splitlines()[0]
    assert first.startswith("error[import_invalid]: ")
    assert "claude-code-malformed.jsonl:3: assistant: " in first
    assert "hint:" in p.stderr and "Traceback" not in p.stderr
    assert not out.exists()
    assert [x.name for x in tmp_path.iterdir()] == []  # no temporary file left either
    # save --from skips it with the same warning as import, and saves the turn
    p = cli(
        "save",
        "--from",
        "claude-code",
        SAMPLES / "claude-code-malformed.jsonl",
        "--turn",
        "1",
        "--name",
        "x",
        "--dir",
        "cases",
        cwd=tmp_path,
    )
    assert p.returncode == 0, p.stderr
    assert "warning[import_skipped]: " in p.stderr and "malformed.jsonl:3: " in p.stderr


def test_save_from_a_transcript_that_cannot_be_imported_exits_1(tmp_path: Path) -> None:
    """spec/case-format.md 7.5: import_invalid under --from exits 1, as `import` does (text
    and --json); the other refusals exit 2."""
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"type":"user"\n')
    args = ["save", "--from", "claude-code", bad, "--turn", "1", "--name", "x", "--dir", "cases"]
    p = cli(*args, cwd=tmp_path)
    assert p.returncode == 1
    assert p.stderr.startswith("error[import_invalid]: ") and "  hint: " in p.stderr
    j = cli(*args, "--json", cwd=tmp_path)
    assert j.returncode == 1
    assert json.loads(j.stdout)["code"] == "import_invalid"
    assert not (tmp_path / "cases").exists()
    good = SAMPLES / "claude-code-malformed.jsonl"  # imports (a line skipped): other refusals
    refused = cli(*args[:3], good, *args[4:], "--draft", "--no-draft", cwd=tmp_path)
    assert refused.returncode == 2 and refused.stderr.startswith("error[invalid_request]: ")


def test_a_malformed_line_is_skipped_by_default_and_the_rest_imported(tmp_path: Path) -> None:
    p = cli(
        "import",
        "claude-code",
        SAMPLES / "claude-code-malformed.jsonl",
        "-o",
        "out.jsonl",
        cwd=tmp_path,
    )
    assert p.returncode == 0, p.stderr
    assert "skipped 1 unreadable or malformed record(s), each named above" in p.stderr
    p = cli("turns", "out.jsonl", "--format", "json", cwd=tmp_path)
    assert [t["text"] for t in json.loads(p.stdout)] == ["Say hello in Greek", "And in Russian?"]


def test_branch_option_and_unknown_format(tmp_path: Path) -> None:
    src = SAMPLES / "claude-code-fork.jsonl"
    p = cli(
        "import",
        "claude-code",
        src,
        "-o",
        "b.jsonl",
        "--branch",
        "22222222-0005-4000-8000-000000000005",
        "-v",
        cwd=tmp_path,
    )
    assert p.returncode == 0, p.stderr
    assert "branch not followed" in p.stderr
    turns = json.loads(cli("turns", "b.jsonl", "--format", "json", cwd=tmp_path).stdout)
    assert turns[1]["text"] == "Change the port to 9090"
    p = cli("import", "claude-code", src, "-o", "c.jsonl", "--branch", "nope", cwd=tmp_path)
    assert p.returncode == 2 and "error[invalid_request]" in p.stderr
    p = cli("import", "gemini", src, "-o", "c.jsonl", cwd=tmp_path)
    assert p.returncode == 2 and "is not one of" in p.stderr
    assert not (tmp_path / "c.jsonl").exists()


def test_impossible_timestamp_refused_at_its_line(tmp_path: Path) -> None:
    """A transcript line with 2026-02-30 is refused (log_invalid, file:line), even without
    --strict, and nothing is written; it used to take the previous line's time."""
    lines = (SAMPLES / "claude-code-parallel.jsonl").read_text("utf-8").splitlines()
    second = json.loads(lines[1])
    second["timestamp"] = "2026-02-30T00:00:00.000Z"
    src = tmp_path / "bad.jsonl"
    src.write_text("\n".join([lines[0], json.dumps(second), *lines[2:]]) + "\n", "utf-8")
    p = cli("import", "claude-code", src, "-o", "out.jsonl", cwd=tmp_path)
    assert p.returncode == 1, p.stderr
    first = p.stderr.splitlines()[0]
    assert first.startswith("error[log_invalid]: ") and "bad.jsonl:2: /timestamp: " in first
    assert '"2026-02-30T00:00:00.000Z" is not a real calendar date' in first
    assert not (tmp_path / "out.jsonl").exists()


EXAMPLES = Path(__file__).resolve().parent.parent / "examples" / "sessions"


@pytest.mark.parametrize(
    ("asked", "sample", "found"),
    [
        ("claude-code", "anthropic-cassette.yaml", "vcr"),
        ("codex", "anthropic-cassette.yaml", "vcr"),
        ("claude-code", "openhands-trajectory.json", "openhands"),
        ("codex", "claude-code-session.jsonl", "claude-code"),
    ],
)
def test_a_file_of_another_format_is_pointed_at_the_format_detected(
    tmp_path: Path, asked: str, sample: str, found: str
) -> None:
    """`import claude-code` on a VCR cassette named only claude-code and codex: the refusal
    now names the format `import auto` detects, with the command that imports the file."""
    path = EXAMPLES / sample
    p = cli("import", asked, str(path), "-o", "out.jsonl", cwd=tmp_path)
    assert p.returncode == 1 and "error[import_invalid]" in p.stderr
    assert f"{path}: this looks like " in p.stderr and f"({found}), not " in p.stderr
    want = f"  hint: import it with `threads-cases import {found} {path} -o LOG`"
    assert want in p.stderr, p.stderr
    assert not (tmp_path / "out.jsonl").exists()


def test_a_file_of_no_known_format_is_pointed_at_import_auto(tmp_path: Path) -> None:
    (tmp_path / "junk.jsonl").write_text('{"a": 1}\n')
    p = cli("import", "claude-code", "junk.jsonl", "-o", "out.jsonl", cwd=tmp_path)
    assert p.returncode == 1
    assert "  hint: `threads-cases import auto FILE -o LOG` tries every format" in p.stderr


def test_the_skipped_count_is_the_skips_named_above(tmp_path: Path) -> None:
    # a record cut short and joined to the next whole record leaves no whole line skipped:
    # the count said "skipped 1" under two import_skipped warnings, or nothing under one
    good = (SAMPLES / "claude-code-parallel.jsonl").read_bytes().splitlines(keepends=True)
    cut = good[1][: len(good[1]) // 2]
    damaged = tmp_path / "damaged.jsonl"
    damaged.write_bytes(good[0] + cut + good[1] + b"\0" * 64 + b"\n" + b"".join(good[2:]))
    p = cli("import", "claude-code", damaged, "-o", "out.jsonl", cwd=tmp_path)
    assert p.returncode == 0, p.stderr
    skipped = [line for line in p.stderr.splitlines() if "warning[import_skipped]" in line]
    assert len(skipped) == 2, p.stderr
    assert "skipped 2 unreadable or malformed record(s), each named above" in p.stderr


def test_output_dash_writes_the_log_to_standard_output(tmp_path: Path) -> None:
    src = SAMPLES / "claude-code-parallel.jsonl"
    p = cli("import", "claude-code", src, "-o", "file.jsonl", cwd=tmp_path)
    assert p.returncode == 0, p.stderr
    dash = cli("import", "claude-code", src, "-o", "-", cwd=tmp_path)
    assert dash.returncode == 0, dash.stderr
    assert dash.stdout == (tmp_path / "file.jsonl").read_text("utf-8")
    assert not (tmp_path / "-").exists()
    status = p.stdout.strip().removeprefix("wrote file.jsonl: ")
    assert dash.stderr.strip().splitlines()[-1] == f"wrote standard output: {status}"
    # a refused import writes nothing there either
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"not": "a transcript"}\n')
    refused = cli("import", "claude-code", bad, "-o", "-", "--strict", cwd=tmp_path)
    assert refused.returncode != 0 and refused.stdout == ""
    both = cli("import", "claude-code", src, "-o", "-", "--format", "json", cwd=tmp_path)
    assert both.returncode == 2 and json.loads(both.stdout)["code"] == "invalid_request"
    assert "both write standard output" in both.stdout


def test_an_option_that_writes_a_file_refuses_dash(tmp_path: Path) -> None:
    # it made a file named "-" where a user meant standard output
    shutil.copytree(CONFORMANCE / "reads-notes", tmp_path / "cases" / "reads-notes")
    for args in (["coverage", "cases", "-o", "-"], ["run", "cases", "--junit", "-"]):
        p = cli(*args, cwd=tmp_path)
        assert p.returncode == 2, p.stderr
        assert "-: this option writes a file, not standard output" in p.stderr
    assert not (tmp_path / "-").exists()
