"""`fmt` on cases that do not validate: it refuses them (naming each problem) instead of
stamping a fresh fingerprint on a broken case, and nothing sends the user to `fmt` for a case
it cannot fix. `run` warns about every stale fingerprint that `validate` reports."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

from conftest import cli

from threads_cases.review import unfixable_problems


def mixed(saved_case: Path) -> Path:
    """cases/: ok (untouched), e1 and e2 (case.json edited by hand: stale, not canonical),
    b-missing-model (edited, model.json removed), b-schema (an unknown key in case.json)."""
    root = saved_case.parent
    for name in ("ok", "e1", "e2", "b-missing-model", "b-schema"):
        shutil.copytree(saved_case, root / name)
    shutil.rmtree(saved_case)
    for name in ("e1", "e2", "b-missing-model"):
        meta = json.loads((root / name / "case.json").read_text())
        meta["expect"]["must"].append({"type": "turn_completed"})
        (root / name / "case.json").write_text(json.dumps(meta, indent=2))
    (root / "b-missing-model" / "model.json").unlink()
    meta = json.loads((root / "b-schema" / "case.json").read_text())
    meta["bogus"] = 1
    (root / "b-schema" / "case.json").write_text(json.dumps(meta, indent=2))
    return root


def snapshot(folder: Path) -> dict[str, bytes]:
    return {str(p.relative_to(folder)): p.read_bytes() for p in folder.rglob("*") if p.is_file()}


def test_unfixable_problems(saved_case: Path) -> None:
    root = mixed(saved_case)
    assert unfixable_problems(root / "ok") == []
    assert unfixable_problems(root / "e1") == []  # stale and not canonical: fmt fixes both
    (problem,) = unfixable_problems(root / "b-missing-model")
    assert problem.code == "case_invalid" and "model.json is missing" in problem.message
    (problem,) = unfixable_problems(root / "b-schema")
    assert "bogus" in problem.message


def test_fmt_refuses_cases_that_do_not_validate(saved_case: Path, tmp_path: Path) -> None:
    root = mixed(saved_case)
    broken = {n: snapshot(root / n) for n in ("b-missing-model", "b-schema")}
    p = cli("fmt", "--check", "cases", cwd=tmp_path)
    assert p.returncode == 1
    assert "b-missing-model" not in p.stdout and "b-schema" not in p.stdout
    assert "not formatted: cases/b-missing-model: the case does not validate" in p.stderr
    p = cli("fmt", "cases", cwd=tmp_path)
    assert p.returncode == 1, p.stdout + p.stderr
    assert sorted(re.findall(r"formatted cases/(\S+)/case.json", p.stdout)) == ["e1", "e2"]
    assert "error[case_invalid]: cases/b-missing-model/model.json: model.json is missing" in (
        p.stderr
    )
    assert "not formatted: cases/b-schema: the case does not validate" in p.stderr
    lines = p.stderr.splitlines()  # each error has validate's hint under it (once a hint)
    errors = [i for i, line in enumerate(lines) if line.startswith("error[")]
    assert errors and all(lines[i + 1].startswith(("  hint: ", "error[")) for i in errors)
    assert lines[errors[0] + 1].startswith("  hint: ")
    assert "  hint: fix it there: every file of a case follows spec/case-format.md" in lines
    for name, files in broken.items():
        assert snapshot(root / name) == files  # not a byte written
    for name in ("ok", "e1", "e2"):
        assert cli("validate", f"cases/{name}", cwd=tmp_path).returncode == 0


def test_run_warns_for_every_stale_fingerprint_validate_finds(
    saved_case: Path, tmp_path: Path
) -> None:
    mixed(saved_case)
    p = cli("validate", "cases", cwd=tmp_path)
    stale = set(re.findall(r"error\[fingerprint_stale\]: cases/([^/]+)/", p.stdout + p.stderr))
    assert stale == {"e1", "e2", "b-missing-model", "b-schema"}
    # the broken ones are not sent to fmt, by validate or by run
    for line in (p.stdout + p.stderr).splitlines():
        if "fingerprint_stale" in line and "/b-" in line:
            assert "run `threads-cases fmt`" not in line and "refuses" in line
    p = cli("run", "cases", "--impl", "threads-py", cwd=tmp_path)
    warnings = [x for x in (p.stdout + p.stderr).splitlines() if x.startswith("warning:")]
    fixable = next(x for x in warnings if "`threads-cases fmt` records" in x)
    assert "2 case(s)" in fixable and "cases/e1" in fixable and "b-" not in fixable
    broken = next(x for x in warnings if "no longer load" in x)
    assert (
        "2 case(s)" in broken and "cases/b-missing-model" in broken and "cases/b-schema" in broken
    )
    p = cli("run", "cases", "--impl", "threads-py", "--format", "json", cwd=tmp_path)
    lines = [json.loads(x) for x in p.stdout.splitlines()]
    warned = {
        Path(r["path"]).name
        for r in lines
        if r.get("kind") == "result" and "fingerprint_stale" in r["warnings"]
    }
    assert warned == stale


def test_run_does_not_send_a_case_that_loads_but_does_not_validate_to_fmt(
    saved_case: Path, tmp_path: Path
) -> None:
    """An expected state edited by hand: the run fails it (state_mismatch) and its
    fingerprint is stale, but fmt refuses it (validate reports the mismatch), so run's
    warning lists it with the cases to fix, not with the ones to fmt."""
    expected = saved_case / "expected.threads-py.json"
    state = json.loads(expected.read_text())
    state["thread_id"] = "other"
    expected.write_text(json.dumps(state))
    p = cli("run", "cases", "--impl", "threads-py", cwd=tmp_path)
    assert p.returncode == 3 and "state_mismatch" in p.stdout + p.stderr
    warnings = [x for x in p.stderr.splitlines() if x.startswith("warning:")]
    assert not any("`threads-cases fmt` records" in x for x in warnings), warnings
    (broken,) = [x for x in warnings if "no longer load or validate" in x]
    assert f"cases/{saved_case.name}" in broken
    assert cli("fmt", "cases", cwd=tmp_path).returncode == 1  # as the warning says


def test_validate_suggests_fmt_exactly_when_fmt_formats_the_case(
    saved_case: Path, tmp_path: Path
) -> None:
    """validate's "run `threads-cases fmt`" is a promise: for each case, it appears on a line
    of validate's output exactly when fmt then formats that case (a case with a schema problem
    or a missing file is refused by fmt, so validate must not send the user there; one with no
    fingerprint at all is formatted, case-format.md 4.3); a missing fingerprint reads "has
    none", never Python's None."""
    root = mixed(saved_case)
    meta = json.loads((root / "ok" / "case.json").read_text())
    shutil.copytree(root / "ok", root / "e-no-fingerprint")
    del meta["fingerprint"]
    (root / "e-no-fingerprint" / "case.json").write_text(json.dumps(meta, indent=2))
    for name in ("e1", "b-missing-model", "b-schema", "e-no-fingerprint"):
        shown = cli("validate", f"cases/{name}", cwd=tmp_path)
        out = shown.stdout + shown.stderr
        assert shown.returncode == 1 and "None" not in out, out
        suggests = "run `threads-cases fmt`" in out
        fmt = cli("fmt", f"cases/{name}", cwd=tmp_path)
        assert suggests == (fmt.returncode == 0), (name, out, fmt.stderr)
        assert suggests == name.startswith("e"), name
    shutil.copytree(root / "ok", root / "b-no-fingerprint-schema")
    meta["bogus"] = 1
    (root / "b-no-fingerprint-schema" / "case.json").write_text(json.dumps(meta, indent=2))
    shown = cli("validate", "cases/b-no-fingerprint-schema", cwd=tmp_path)
    assert "case.json has none; fix the problems above first" in shown.stdout + shown.stderr


def test_a_case_json_without_fingerprint_is_stale_and_fmt_adds_it(
    saved_case: Path, tmp_path: Path
) -> None:
    """A case written by hand (or by another tool) without ``fingerprint``: validate names the
    one problem fmt fixes, run warns and passes, fmt adds the fingerprint (case-format.md 4.3)."""
    meta = json.loads((saved_case / "case.json").read_text())
    saved = meta.pop("fingerprint")
    (saved_case / "case.json").write_text(json.dumps(meta, indent=2))
    p = cli("validate", str(saved_case), cwd=tmp_path)
    assert p.returncode == 1
    assert "case.json has none; run `threads-cases fmt`" in p.stderr, p.stderr
    assert "required property" not in p.stderr
    assert unfixable_problems(saved_case) == []
    p = cli("run", str(saved_case), "--impl", "threads-py", cwd=tmp_path)
    assert p.returncode == 0, p.stdout + p.stderr
    assert "fingerprint_stale" in p.stderr
    p = cli("fmt", str(saved_case), cwd=tmp_path)
    assert p.returncode == 0, p.stdout + p.stderr
    assert json.loads((saved_case / "case.json").read_text())["fingerprint"] == saved
    assert cli("validate", str(saved_case), cwd=tmp_path).returncode == 0
