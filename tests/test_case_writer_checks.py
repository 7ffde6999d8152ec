"""The one safe writer (spec/case-format.md 6.6): write_case_dir makes the save checks itself,
so no caller can write outside the case, under a device name, a credential, or an artifact
whose bytes do not match its name. ts/test/writer.test.ts checks writeCaseDir the same way."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest

from threads_cases.case.writer import write_case_dir
from threads_cases.core.errors import CaseError

BLOB = b"bytes\n"
GOOD = {"case.json": b"{}\n", "artifacts/" + hashlib.sha256(BLOB).hexdigest(): BLOB}
KEY = "sk-ant-api03-" + "Zq9x" * 20  # fabricated, right shape


def _refused(tmp_path: Path, name: str, files: dict[str, bytes], **kw: str) -> CaseError:
    with pytest.raises(CaseError) as info:
        write_case_dir(tmp_path / "cases", name, files, overwrite=False, **kw)  # type: ignore[arg-type]
    assert not (tmp_path / "cases").exists() or not any((tmp_path / "cases").iterdir())
    assert [p.name for p in tmp_path.rglob("*")] in ([], ["cases"])  # nothing written anywhere
    return info.value


@pytest.mark.parametrize(
    "rel",
    ["../../x.txt", "/etc/x", "a/../b", ".hidden", "a//b", "a\\b", "", "sub/CON", "nul.txt"],
)
def test_a_path_outside_the_case_or_a_device_name_is_refused(tmp_path: Path, rel: str) -> None:
    err = _refused(tmp_path, "c", {**GOOD, rel: b"x"})
    assert err.code == "invalid_request", err.message
    assert err.message.startswith("case file "), err.message


@pytest.mark.parametrize("name", ["CON", "../c", ".c", "a/b", "LPT1.txt"])
def test_a_bad_case_name_is_refused(tmp_path: Path, name: str) -> None:
    assert _refused(tmp_path, name, GOOD).code == "invalid_request"


def test_an_artifact_whose_bytes_do_not_match_its_name_is_refused(tmp_path: Path) -> None:
    wrong = {"case.json": b"{}\n", "artifacts/" + hashlib.sha256(b"other").hexdigest(): BLOB}
    err = _refused(tmp_path, "c", wrong)
    assert err.code == "invalid_request" and "a corrupt case" in err.message
    assert _refused(tmp_path, "c", {"artifacts/abc": BLOB}).code == "invalid_request"


def test_a_credential_is_refused_unless_allowed_and_never_quoted(tmp_path: Path) -> None:
    files = {"case.json": f'{{"input": "{KEY}"}}\n'.encode()}
    err = _refused(tmp_path, "c", files)
    assert err.code == "secret_detected" and KEY[:16] not in err.message
    assert write_case_dir(tmp_path, "c", files, overwrite=False, secrets="allow") == "created"


def test_a_good_case_is_written(tmp_path: Path) -> None:
    assert write_case_dir(tmp_path, "c", GOOD, overwrite=False) == "created"
    assert sorted(
        p.relative_to(tmp_path / "c").as_posix() for p in (tmp_path / "c").rglob("*")
    ) == [
        "artifacts",
        *sorted(k for k in GOOD if k.startswith("artifacts/")),
        "case.json",
    ]
