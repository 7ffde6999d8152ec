"""Language-neutral texts for messages and logged results (spec/replay.md, "Texts").

Every name or value that a message or a logged event quotes is written as its canonical
JSON text (RFC 8785, spec/strict-json.md 4.1): a string ``a'b`` is quoted as ``"a'b"``, a
list as ``["x","y"]``. No text depends on a language's own printing of values.
"""

from __future__ import annotations

from typing import Any

from .canonical import canonical_line
from .errors import CaseError


def quote(value: Any) -> str:
    """The canonical JSON text of ``value`` (``"name"`` for a string).

    A value that has no canonical form (a lone surrogate, a non-JSON type) is written as
    ``"<unwritable value>"``, so a message never fails to build.
    """
    try:
        return canonical_line(value).decode("utf-8")
    except (CaseError, UnicodeDecodeError):
        return '"<unwritable value>"'
