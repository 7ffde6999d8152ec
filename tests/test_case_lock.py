"""The case lock both writers honour (spec/case-format.md 6.5): a lock directory with an
owner file, waited for while its owner runs, taken over when its owner is gone. The lock
files here are written by hand, exactly as the TypeScript writer writes them."""

from __future__ import annotations

import hashlib
import json
import os
import socket
import threading
import time
from pathlib import Path

import pytest

from threads_cases.case import writer
from threads_cases.case.writer import write_case_dir
from threads_cases.core.errors import CaseError

BLOB = b"bytes\n"
FILES = {"case.json": b"{}\n", "artifacts/" + hashlib.sha256(BLOB).hexdigest(): BLOB}


def hold(d: Path, pid: int, token: str = "t") -> Path:
    lock = d / ".c.lock"
    lock.mkdir(parents=True)
    owner = {"host": socket.gethostname(), "pid": pid, "token": token}
    (lock / "owner.json").write_text(json.dumps(owner))
    return lock


def test_a_lock_whose_owner_is_gone_is_taken_over(tmp_path: Path) -> None:
    hold(tmp_path, 2**30)  # above any pid_max: no such process
    (tmp_path / ".c.tmp-1-deadbeef").mkdir()  # what that writer left
    assert write_case_dir(tmp_path, "c", FILES, overwrite=False) == "created"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["c"]


def test_a_lock_held_by_a_live_process_is_waited_for(tmp_path: Path) -> None:
    lock = hold(tmp_path, os.getpid())
    outcome: list[str] = []
    t = threading.Thread(
        target=lambda: outcome.append(write_case_dir(tmp_path, "c", FILES, overwrite=False))
    )
    t.start()
    time.sleep(0.3)
    assert outcome == [] and not (tmp_path / "c").exists()  # still waiting
    for p in lock.iterdir():
        p.unlink()
    lock.rmdir()
    t.join(timeout=60)
    assert outcome == ["created"]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["c"]


def test_an_orphan_lock_without_owner_is_stale_after_a_while(tmp_path: Path) -> None:
    (tmp_path / ".c.lock").mkdir()
    old = time.time() - 60
    os.utime(tmp_path / ".c.lock", (old, old))
    assert write_case_dir(tmp_path, "c", FILES, overwrite=False) == "created"


def test_a_lock_held_too_long_is_io_error(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    hold(tmp_path, os.getpid())
    monkeypatch.setattr(writer, "LOCK_WAIT_SECONDS", 0.2)
    with pytest.raises(CaseError) as info:
        write_case_dir(tmp_path, "c", FILES, overwrite=False)
    assert info.value.code == "io_error"
    assert info.value.location.file == str(tmp_path / ".c.lock")


def test_a_taker_that_moved_a_fresh_lock_puts_it_back(tmp_path: Path) -> None:
    lock = hold(tmp_path, os.getpid(), token="fresh")
    writer._take_over(lock, "the-stale-one")  # judged stale before the fresh lock was taken
    assert json.loads((lock / "owner.json").read_text())["token"] == "fresh"


def test_the_writer_module_needs_no_fcntl() -> None:
    import importlib
    import sys

    blocked = dict(sys.modules)
    sys.modules["fcntl"] = None  # type: ignore[assignment]
    try:
        for name in ("threads_cases.case.directory", "threads_cases.case.writer"):
            sys.modules.pop(name, None)
            importlib.import_module(name)
    finally:
        sys.modules.clear()
        sys.modules.update(blocked)
