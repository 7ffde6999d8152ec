"""Where the shipped spec/ and schemas/ live: inside the wheel, or beside the package in a
source checkout."""

from __future__ import annotations

import os
from functools import cache
from pathlib import Path

_PKG = Path(__file__).resolve().parent.parent  # the threads_cases package


@cache
def data_root() -> Path:
    """The folder holding ``spec/`` and ``schemas/``: the one ``THREADS_CASES_DATA`` names
    when it is set (the client sets it for every driver it starts, spec/driver-protocol.md
    1.5), else the package data, else the checkout."""
    named = os.environ.get("THREADS_CASES_DATA")
    if named:
        return Path(named).resolve()
    packaged = _PKG / "_data"
    if (packaged / "schemas").is_dir():
        return packaged
    return _PKG.parent


def packaged() -> bool:
    """True in an installed wheel (spec/ and schemas/ are package data under ``_data/``)."""
    return data_root() == _PKG / "_data"


def spec_dir() -> Path:
    return data_root() / "spec"


def schemas_dir() -> Path:
    return data_root() / "schemas"


def conformance_dir() -> Path:
    return spec_dir() / "conformance"
