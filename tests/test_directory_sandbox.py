"""DirectorySandbox never reads or writes outside its root (issue 19 section 4): a symlink
out of the root is refused, a hard link is never read and never written through."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from threads_cases.core.errors import CaseError
from threads_cases.reference.sandbox import DirectorySandbox


@pytest.fixture
def outside(tmp_path: Path) -> Path:
    f = tmp_path / "outside.txt"
    f.write_bytes(b"outside bytes\n")
    return f


def test_a_symlink_out_of_the_root_is_refused(tmp_path: Path, outside: Path) -> None:
    root = tmp_path / "root"
    sb = DirectorySandbox(root)
    (root / "link.txt").symlink_to(outside)
    (root / "dir").symlink_to(tmp_path)
    for path in ("link.txt", "dir/outside.txt", "dir/new.txt"):
        with pytest.raises(CaseError) as info:
            sb.read(path)
        assert info.value.code == "invalid_request"
        with pytest.raises(CaseError):
            sb.write(path, b"overwritten")
    assert outside.read_bytes() == b"outside bytes\n"
    assert not (tmp_path / "new.txt").exists()


def test_a_hard_link_is_neither_read_nor_written_through(tmp_path: Path, outside: Path) -> None:
    root = tmp_path / "root"
    sb = DirectorySandbox(root)
    os.link(outside, root / "hard.txt")
    with pytest.raises(CaseError) as info:
        sb.read("hard.txt")
    assert info.value.code == "invalid_request" and "hard link" in info.value.message
    sb.write("hard.txt", b"new bytes")  # replaces the link, never writes through it
    assert outside.read_bytes() == b"outside bytes\n"
    assert sb.read("hard.txt") == b"new bytes"
    assert sorted(p.name for p in root.iterdir()) == ["hard.txt"]


def test_ordinary_files_still_work(tmp_path: Path) -> None:
    sb = DirectorySandbox(tmp_path / "root")
    sb.write("a/b.txt", b"x")
    assert sb.read("a/b.txt") == b"x"
    assert sb.list() == ["a/b.txt"]
    with pytest.raises(FileNotFoundError):
        sb.read("missing.txt")
    with pytest.raises(IsADirectoryError):
        sb.read("a")
