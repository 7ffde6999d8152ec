"""What one run reads once (issue 33): inside :func:`one_run`, the bytes of each case.json
(checked against a fresh ``lstat`` before they are used again: same file, size and times)
and each list of discovered cases are remembered, so that the checks before a run (the
dialects named implementations need, the names two cases share), the loader's upstream
check and its walk, in this process or in a worker forked from it, read each case.json
once. Outside :func:`one_run` nothing is remembered: every call reads."""

from __future__ import annotations

import os
import stat
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from ..core.files import read_regular

#: the run's memory: ``{"case.json": {path: (signature, bytes)}, "discover": {key: value}}``
_scope: dict[str, dict[Any, Any]] | None = None


@contextmanager
def one_run() -> Iterator[None]:
    """Remember case.json bytes and discovered cases until the block ends (nested: the
    outermost block's memory is used)."""
    global _scope
    outer = _scope
    if outer is None:
        _scope = {"case.json": {}, "discover": {}}
    try:
        yield
    finally:
        _scope = outer


def _signature(path: Path) -> tuple[int, ...] | None:
    try:
        st = os.lstat(path)
    except OSError:
        return None
    if not stat.S_ISREG(st.st_mode):
        return None
    return (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns)


def read_case_json(where: Path, **how: Any) -> bytes:
    """``read_regular(where, **how)`` (the same errors), or the bytes read before in this
    run when ``where`` is still the same regular file and they are within ``how["limit"]``."""
    memory = None if _scope is None else _scope["case.json"]
    if memory is None:
        return read_regular(where, **how)
    key = os.path.abspath(where)
    seen = memory.get(key)
    if seen is not None and seen[0] == _signature(where) and len(seen[1]) <= how["limit"]:
        return bytes(seen[1])
    data = read_regular(where, **how)
    signature = _signature(where)
    if signature is not None and signature[2] == len(data):
        memory[key] = (signature, data)
    return data


def discovered(key: Any, find: Callable[[], list[Path]]) -> list[Path]:
    """``find()``, or its list from before in this run for the same ``key``."""
    memory = None if _scope is None else _scope["discover"]
    if memory is None:
        return find()
    if key not in memory:
        memory[key] = find()
    return list(memory[key])
