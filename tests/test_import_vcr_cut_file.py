"""A VCR cassette cut short (spec/importers.md 6.1, "Cut short"): ``head -c N`` of a cassette,
plain or gzipped, imports its whole interactions with a ``cut_record`` warning at the line its
text stops on (naming line and column); the interaction it stops in keeps its request when
that is whole and ends its turn ``interrupted`` with no reply; the turn saves and replays
``pass`` on both implementations. ``--strict`` refuses it; a cut before the first interaction
ends is a refusal naming the place; YAML damaged in the middle (more text after it) stays a
refusal naming the line and column, never a truncation.

The cassettes are the project's hand-written fixtures (tests/importers/vcr/), cut here.
"""

from __future__ import annotations

import gzip
import json
import zlib
from pathlib import Path

import pytest
from conftest import cli
from imported_cases import run_both
from test_import_vcr import VCR, imported, of_type, save_and_run

from threads_cases.case.turns import list_turns
from threads_cases.core.errors import CaseError
from threads_cases.importers.vcr.cut import gunzip_cut

TOOLS = VCR / "anthropic-messages-tools.yaml"


def cut_inside(text: bytes, entry: int, marker: bytes, extra: int = 0) -> bytes:
    """``text`` cut ``extra`` bytes after ``marker``'s first place in interaction ``entry``
    (from 1)."""
    start = -1
    for _ in range(entry):
        start = text.index(b"\n- request:", start + 1)
    return text[: text.index(marker, start) + extra]


def statuses(events: list[dict[str, object]]) -> list[str]:
    return [str(t["status"]) for t in list_turns(events)]


def test_a_cut_inside_a_response_keeps_the_request_and_ends_its_turn_interrupted(
    tmp_path: Path,
) -> None:
    data = TOOLS.read_bytes()
    src = tmp_path / "c.yaml"
    src.write_bytes(cut_inside(data, 5, b"string: '", 40))  # in interaction 5's response body
    whole, _ = imported(TOOLS)
    events, stats = imported(src)
    assert statuses(whole) == ["completed", "completed", "completed"]
    assert statuses(events) == ["completed", "completed", "failed"]
    [w] = stats.warnings
    text = src.read_bytes()
    line = text.count(b"\n") + 1
    col = len(text) - text.rfind(b"\n") - 1
    assert (w.code, w.reason, w.line) == ("import_repaired", "cut_record", line)
    assert w.message == (
        f"the cassette stops at line {line} column {col}, inside interaction 5 (cut short): its "
        "4 whole interaction(s) read; interaction 5's request is whole, its response is not: "
        "no reply"
    )
    failed = of_type(events, "turn_failed")[-1]["data"]["error"]
    assert failed["code"] == "interrupted"
    assert "interaction 5 stops before its end" in failed["message"]
    # the turn's user message came from the request kept; no reply was recorded for it
    assert of_type(events, "user_message")[-1]["data"]["content"] == "And Oslo?"
    assert len(of_type(events, "model_responded")) == len(of_type(whole, "model_responded")) - 1
    assert any("recorded as interrupted" in n for n in stats.notes)
    assert set(save_and_run(tmp_path / "run", src).values()) == {"pass"}
    with pytest.raises(CaseError) as exc:
        imported(src, strict=True)
    assert exc.value.code == "import_invalid"
    assert exc.value.location.line == line and exc.value.message == f"cut_record: {w.message}"
    assert "cut short" in exc.value.hint


def test_the_cli_imports_saves_and_runs_a_cut_cassette_and_its_gzipped_copy(
    tmp_path: Path,
) -> None:
    data = cut_inside(TOOLS.read_bytes(), 5, b"string: '", 40)
    plain = tmp_path / "cut.yaml"
    plain.write_bytes(data)
    gz = tmp_path / "cut.yaml.gz"
    whole = gzip.compress(TOOLS.read_bytes())
    # the gzip stream stops where the plain text is cut (or a little after: the deflate
    # blocks end where they end); the import reads what decompresses
    gz.write_bytes(whole[: len(whole) * len(data) // len(TOOLS.read_bytes())])
    for src in (plain, gz):
        p = cli("import", "vcr", src, "-o", tmp_path / f"{src.name}.jsonl", cwd=tmp_path)
        assert p.returncode == 0, p.stderr
        assert f"warning[import_repaired]: {src}:" in p.stderr and "cut_record" in p.stderr
        assert "recorded as interrupted" in p.stderr
        p = cli("turns", tmp_path / f"{src.name}.jsonl", "--format", "json", cwd=tmp_path)
        assert p.returncode == 0, p.stderr
        cases = tmp_path / f"cases-{src.name}"
        for n in (1, 2, 3):
            p = cli(
                "save", src, "--from", "vcr", "--turn", str(n), "--name", f"t{n}",
                "--dir", cases, cwd=tmp_path,
            )  # fmt: skip
            assert p.returncode == 0, p.stderr
            assert "cut_record" in p.stderr
        got = run_both(cases, tmp_path)
        assert {str(r["verdict"]) for r in got.values()} == {"pass"}, got
        assert len(got) == 6
        p = cli("import", "vcr", src, "--strict", "-o", tmp_path / "strict.jsonl", cwd=tmp_path)
        assert p.returncode == 1 and "error[import_invalid]" in p.stderr
        assert "cut_record: " in p.stderr and not (tmp_path / "strict.jsonl").exists()
    p = cli("import", "vcr", gz, "--format", "json", "-o", tmp_path / "g.jsonl", cwd=tmp_path)
    [w] = json.loads(p.stdout)["warnings"]
    assert w["message"].startswith(f"the gzip stream stops after {gz.stat().st_size} bytes")


def test_a_cut_inside_a_request_drops_it_and_the_open_turn_says_why(tmp_path: Path) -> None:
    src = tmp_path / "c.yaml"
    # interaction 2's request body: the results of interaction 1's calls never arrive
    src.write_bytes(cut_inside(TOOLS.read_bytes(), 2, b"body: '", 200))
    events, stats = imported(src)
    assert statuses(events) == ["completed", "failed"]
    [w] = stats.warnings
    assert "inside interaction 2 (cut short): its 1 whole interaction(s) read" in w.message
    assert w.message.endswith("interaction 2 is dropped (its request is not whole)")
    assert of_type(events, "turn_failed")[-1]["data"]["error"]["code"] == "interrupted"
    assert any("the cassette stops before a request answers its calls" in n for n in stats.notes)
    assert set(save_and_run(tmp_path / "run", src).values()) == {"pass"}


def test_a_cut_yaml_reads_although_is_told_by_its_last_entry(tmp_path: Path) -> None:
    """``status:\\n      code`` (the code cut) reads as YAML, as does a cut right after an
    entry's ``response:`` key: the last entry has no status code, so it is cut."""
    data = TOOLS.read_bytes()
    for k, extra in ((0, len(b"    status:\n      code")), (1, len(b"  response:\n"))):
        marker = (b"    status:", b"  response:")[k]
        src = tmp_path / f"c{k}.yaml"
        src.write_bytes(cut_inside(data, 2, marker, extra - (4 if k == 0 else 0)))
        events, stats = imported(src)
        [w] = stats.warnings
        assert w.reason == "cut_record" and "inside interaction 2" in w.message, w.message
        assert "interaction 2's request is whole" in w.message
        assert statuses(events) == ["completed", "failed"]


def test_a_cut_after_the_interactions_list_reads_them_all(tmp_path: Path) -> None:
    src = tmp_path / "c.yaml"
    src.write_bytes(TOOLS.read_bytes().removesuffix(b"\n").removesuffix(b"n: 1") + b"n")
    events, stats = imported(src)
    whole, _ = imported(TOOLS)
    assert statuses(events) == statuses(whole)
    [w] = stats.warnings
    assert "after its last interaction (cut short): its 5 interaction(s) are whole" in w.message


def test_a_cut_inside_a_character_is_a_cut(tmp_path: Path) -> None:
    data = TOOLS.read_bytes().replace(b"And Oslo?", "And Oslo \u00e9?".encode())
    at = data.index("\u00e9".encode(), data.index(b"\n- request:", len(data) // 2)) + 1
    src = tmp_path / "c.yaml"
    src.write_bytes(data[:at])  # the first byte of a two-byte character
    _, stats = imported(src)
    assert [w.reason for w in stats.warnings] == ["cut_record"]


def test_a_cut_before_the_first_interaction_ends_is_refused_naming_the_place(
    tmp_path: Path,
) -> None:
    data = TOOLS.read_bytes()
    for n in (20, 300, data.index(b"    status:")):
        src = tmp_path / "c.yaml"
        src.write_bytes(data[:n])
        with pytest.raises(CaseError) as exc:
            imported(src)
        assert exc.value.code == "import_invalid"
        assert "before its first interaction ends (cut short)" in exc.value.message
        assert exc.value.location.line == data[:n].rstrip().count(b"\n") + 1
        assert "cut short" in exc.value.hint
    p = cli("import", "vcr", src, "-o", tmp_path / "t.jsonl", cwd=tmp_path)
    assert p.returncode == 1 and p.stderr.startswith(f"error[import_invalid]: {src}:")
    assert "hint: " in p.stderr and not (tmp_path / "t.jsonl").exists()


@pytest.mark.parametrize(
    ("old", "new"),
    [
        (b"\n    method: POST\n", b"\n   method: POST\n"),  # bad indentation
        (b"\n    method: POST\n", b"\n    method: POST: x\n"),
    ],
)
def test_yaml_damaged_in_the_middle_stays_a_refusal(tmp_path: Path, old: bytes, new: bytes) -> None:
    data = TOOLS.read_bytes()
    at = data.index(old, len(data) // 3)
    src = tmp_path / "bad.yaml"
    src.write_bytes(data[:at] + new + data[at + len(old) :])
    line = data[:at].count(b"\n") + 2
    with pytest.raises(CaseError) as exc:
        imported(src)
    assert exc.value.code == "import_invalid" and exc.value.location.line == line
    assert exc.value.message.startswith(f"not YAML: line {line} column ")
    assert "not cut short" in exc.value.message
    gz = tmp_path / "bad.yaml.gz"
    gz.write_bytes(gzip.compress(src.read_bytes()))
    with pytest.raises(CaseError) as exc:
        imported(gz)
    assert exc.value.location.line == line


def test_a_gzip_stream_damaged_in_the_middle_stays_a_refusal(tmp_path: Path) -> None:
    data = bytearray(gzip.compress(TOOLS.read_bytes()))
    data[len(data) // 2] ^= 0xFF
    with pytest.raises(zlib.error):
        gunzip_cut(bytes(data))
    src = tmp_path / "bad.yaml.gz"
    src.write_bytes(bytes(data))
    with pytest.raises(CaseError) as exc:
        imported(src)
    assert exc.value.code == "import_invalid" and "damaged gzip stream" in exc.value.message


@pytest.mark.parametrize("name", sorted(p.name for p in VCR.glob("*.yaml")))
@pytest.mark.parametrize("gz", [False, True])
def test_every_cut_imports_or_refuses_and_completes_no_turn_it_cut(
    tmp_path: Path, name: str, gz: bool
) -> None:
    """Cut at ~40 places of each cassette: a refusal that says the cassette is cut before
    its first interaction (or, for the first bytes, that it is no cassette), or an import
    whose cut_record warning the strict import refuses, and whose completed turns are
    completed in the whole cassette too."""
    data = (VCR / name).read_bytes()
    if gz:
        data = gzip.compress(data)
    whole, _ = imported(VCR / name)
    done = statuses(whole)
    src = tmp_path / ("c.yaml.gz" if gz else "c.yaml")
    for n in range(3, len(data), max(1, len(data) // 40)):
        src.write_bytes(data[:n])
        try:
            events, stats = imported(src)
        except CaseError as exc:
            assert exc.code == "import_invalid", (n, exc.message)
            assert "before its first interaction ends" in exc.message or (
                "not a VCR cassette" in exc.message or "not text" in exc.message
            ), (n, exc.message)
            continue
        got = statuses(events)
        assert all(done[k] == "completed" for k, s in enumerate(got) if s == "completed"), n
        if any(w.reason == "cut_record" for w in stats.warnings):
            with pytest.raises(CaseError, match="cut_record: "):
                imported(src, strict=True)
