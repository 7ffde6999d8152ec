"""Where the shipped spec/ and schemas/ live: inside the wheel, or beside the package in a
source checkout."""

from __future__ import annotations

from functools import cache
from pathlib import Path

_PKG = Path(__file__).resolve().parent.parent  # the threads_cases package


@cache
def data_root() -> Path:
    """The folder holding ``spec/`` and ``schemas/`` (package data first, then the checkout)."""
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
