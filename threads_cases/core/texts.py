"""Language-neutral texts for messages and logged results (spec/replay.md, "Texts").

Every name or value that a message or a logged event quotes is written as its canonical
JSON text (RFC 8785, spec/strict-json.md 4.1): a string ``a'b`` is quoted as ``"a'b"``, a
list as ``["x","y"]``. No text depends on a language's own printing of values.
"""

from __future__ import annotations

import re
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


#: what a terminal or a CI log would act on rather than show: C0 controls but tab and line
#: feed (ESC starts colour and cursor codes, CR overwrites a line, NUL cuts a log), DEL, C1
#: controls, and the bidirectional overrides and isolates that reorder what is shown
_UNSHOWABLE = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")


def shown_text(text: str) -> str:
    """``text`` safe to print on a terminal or in a GitHub workflow command
    (spec/reports.md 4): each character of :data:`_UNSHOWABLE` written as ``\\xNN`` (or
    ``\\uNNNN``), so a driver's message or stderr shows ``\\x1b[31m`` instead of turning the
    terminal red. Case strings need none of this: :func:`quote` escapes them already."""
    return _UNSHOWABLE.sub(
        lambda m: f"\\x{ord(m[0]):02x}" if ord(m[0]) < 0x100 else f"\\u{ord(m[0]):04x}", text
    )
