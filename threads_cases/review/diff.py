"""``diff``: the semantic changes between two versions of a case, or of one case file:
matchers by index, log events by seq, recordings by item, other JSON by pointer.

Reason codes: none raised; a file that is not strict JSON is reported as a byte change.

A change is *bookkeeping* (:attr:`Change.bookkeeping`) when only an id or a timestamp moved
(:data:`BOOKKEEPING_KEYS`, and case.json's ``/at`` and ``/fingerprint``): what recording the
same turn again with another thread id or clock changes. :func:`split_bookkeeping` sets them
apart, so ``diff`` says "re-recorded; no behavioural change" in one line unless ``--all``.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any

from ..core.errors import CaseError
from ..core.matchers import diff_values, values_equal
from .files import (
    _EXPECTED,
    _LIST_KEY,
    _LOG,
    CANONICAL_DIALECT,
    CASE_FILE_CODE,
    RECORDING_FILES,
    _decode_events,
    _decode_state,
    _dialect_of,
    _parse_json,
    _parse_jsonl,
    _render,
)

# --------------------------------------------------------------------------- diff

#: Keys whose value is an id or a timestamp: a change of only these is bookkeeping.
BOOKKEEPING_KEYS = frozenset(
    {"thread_id", "ts", "event_id", "from_event_id", "last_event_id", "tool_use_id", "snapshot_id"}
)
#: case.json pointers that follow the ids and the bytes (the fork point's id, the fingerprint).
_CASE_BOOKKEEPING = frozenset({"/at", "/fingerprint"})


@dataclass(frozen=True)
class Change:
    """One semantic difference between two versions of a case (or of one file).

    ``kind`` is ``added``, ``removed`` or ``changed``; ``item`` names what changed inside
    the file (``must[0]``, ``seq 4 tool_result``, ``replies[1]``; empty for the file itself);
    ``pointer`` is a JSON pointer inside that item (or the file), ``None`` for whole items.
    ``bookkeeping``: only an id or a timestamp changed (module docstring).
    """

    file: str
    kind: str
    item: str = ""
    pointer: str | None = None
    before: Any = None
    after: Any = None
    note: str = ""
    bookkeeping: bool = False

    def to_json(self) -> dict[str, Any]:
        return {
            "file": self.file,
            "kind": self.kind,
            "item": self.item,
            "pointer": self.pointer,
            "before": self.before,
            "after": self.after,
            "note": self.note,
            "bookkeeping": self.bookkeeping,
        }

    def render(self) -> str:
        mark = {"added": "+", "removed": "-", "changed": "~"}[self.kind]
        where = " ".join(p for p in (self.item, self.pointer or "") if p) or self.kind
        if not (self.item or self.pointer):
            return f"{mark} {where}" + (f": {self.note}" if self.note else "")
        if self.note:
            return f"{mark} {where}: {self.note}"
        if self.kind == "added":
            return f"{mark} {where}: {_render(self.after)}"
        if self.kind == "removed":
            return f"{mark} {where}: {_render(self.before)}"
        return f"{mark} {where}: {_render(self.before)} -> {_render(self.after)}"


def _value_changes(file: str, item: str, a: Any, b: Any, prefix: str = "") -> list[Change]:
    out = []
    for d in diff_values(a, b, prefix):
        if d.missing:
            out.append(Change(file, "removed", item, d.pointer, before=d.expected))
        elif d.extra:
            out.append(Change(file, "added", item, d.pointer, after=d.actual))
        else:
            out.append(Change(file, "changed", item, d.pointer, d.expected, d.actual))
    return out


def _list_changes(
    file: str, label: str, a: list[Any], b: list[Any], name: Callable[[Any], str] | None = None
) -> list[Change]:
    """Items added, removed or changed between two lists, aligned with difflib (so an
    insertion is one ``added``, not a cascade of changes); replaced items pair up by index
    and report their differences by pointer."""
    keys_a = [_render(x, 10**9) for x in a]
    keys_b = [_render(x, 10**9) for x in b]
    out: list[Change] = []

    def label_of(i: int, v: Any) -> str:
        return f"{label}[{i}]" + (f" {name(v)}" if name else "")

    sm = difflib.SequenceMatcher(a=keys_a, b=keys_b, autojunk=False)
    for op, i1, i2, j1, j2 in sm.get_opcodes():
        if op == "equal":
            continue
        pairs = min(i2 - i1, j2 - j1) if op == "replace" else 0
        for k in range(pairs):
            out.extend(_value_changes(file, label_of(j1 + k, b[j1 + k]), a[i1 + k], b[j1 + k]))
        for i in range(i1 + pairs, i2):
            out.append(Change(file, "removed", label_of(i, a[i]), None, before=a[i]))
        for j in range(j1 + pairs, j2):
            out.append(Change(file, "added", label_of(j, b[j]), None, after=b[j]))
    return out


def _event_label(ev: Any) -> str:
    if isinstance(ev, dict):
        return f"seq {ev.get('seq', '?')} {ev.get('type', '?')}"
    return "line"


def _log_changes(file: str, a: list[Any], b: list[Any]) -> list[Change]:
    """Events compared by seq (line order for lines without a seq)."""

    def keyed(events: list[Any]) -> dict[Any, Any]:
        out: dict[Any, Any] = {}
        for i, ev in enumerate(events):
            seq = ev.get("seq") if isinstance(ev, dict) else None
            key = seq if isinstance(seq, int) and seq not in out else ("line", i)
            out[key] = ev
        return out

    ka, kb = keyed(a), keyed(b)
    out: list[Change] = []
    for key in sorted(set(ka) | set(kb), key=lambda k: (isinstance(k, tuple), str(k).zfill(12))):
        if key not in kb:
            out.append(Change(file, "removed", _event_label(ka[key]), None, before=ka[key]))
        elif key not in ka:
            out.append(Change(file, "added", _event_label(kb[key]), None, after=kb[key]))
        elif not values_equal(ka[key], kb[key]):
            out.extend(_value_changes(file, _event_label(kb[key]), ka[key], kb[key]))
    return out


def _case_json_changes(file: str, a: Any, b: Any) -> list[Change]:
    if not (isinstance(a, dict) and isinstance(b, dict)):
        return _value_changes(file, "", a, b)
    out: list[Change] = []
    ea = a.get("expect") if isinstance(a.get("expect"), dict) else {}
    eb = b.get("expect") if isinstance(b.get("expect"), dict) else {}
    assert isinstance(ea, dict) and isinstance(eb, dict)
    for key in ("must", "expect"):
        la, lb = ea.get(key, []), eb.get(key, [])
        if isinstance(la, list) and isinstance(lb, list):
            out.extend(_list_changes(file, key, la, lb))
        else:
            out.extend(_value_changes(file, key, la, lb))
    rest_a = {k: v for k, v in a.items() if k != "expect"}
    rest_b = {k: v for k, v in b.items() if k != "expect"}
    rest_a["expect"] = {k: v for k, v in ea.items() if k not in ("must", "expect")}
    rest_b["expect"] = {k: v for k, v in eb.items() if k not in ("must", "expect")}
    # the fingerprint follows every other change: report it last
    changes = _value_changes(file, "", rest_a, rest_b)
    changes.sort(key=lambda c: c.pointer == "/fingerprint")
    return out + changes


def _recording_changes(file: str, a: Any, b: Any) -> list[Change]:
    key = _LIST_KEY[file.rsplit("/", 1)[-1]]
    if not (
        isinstance(a, dict)
        and isinstance(b, dict)
        and isinstance(a.get(key), list)
        and isinstance(b.get(key), list)
    ):
        return _value_changes(file, "", a, b)

    def name(v: Any) -> str:
        if not isinstance(v, dict):
            return ""
        if key == "replies":
            return str(v.get("stop_reason", ""))
        if key == "calls":
            return str(v.get("tool", ""))
        return str(v.get("path", ""))

    out = _list_changes(file, key, a[key], b[key], name)
    rest_a = {k: v for k, v in a.items() if k != key}
    rest_b = {k: v for k, v in b.items() if k != key}
    return out + _value_changes(file, "", rest_a, rest_b)


def _is_binary(data: bytes) -> bool:
    if b"\x00" in data:
        return True
    try:
        data.decode("utf-8")
    except UnicodeDecodeError:
        return True
    return False


def _size(data: bytes | None) -> str:
    return "absent" if data is None else f"{len(data)} bytes"


def _is_bookkeeping(c: Change) -> bool:
    if c.kind != "changed" or not c.pointer:
        return False
    if c.file.rsplit("/", 1)[-1] == "case.json" and not c.item and c.pointer in _CASE_BOOKKEEPING:
        return True
    key = c.pointer.rsplit("/", 1)[-1]
    return key in BOOKKEEPING_KEYS and isinstance(c.before, str) and isinstance(c.after, str)


def split_bookkeeping(changes: list[Change]) -> tuple[list[Change], list[Change]]:
    """``(behavioural, bookkeeping)``: the changes that matter, and those of ids and
    timestamps only. A fingerprint change is bookkeeping only when every other change is
    (otherwise it follows a real one and stays with it)."""
    kept = [c for c in changes if not c.bookkeeping]
    hidden = [c for c in changes if c.bookkeeping]
    if kept and hidden:
        moved = {id(c) for c in hidden if c.pointer == "/fingerprint"}
        # in the changes' order: the fingerprint stays under its case.json, never after the
        # other files' changes (a second "case.json" heading)
        kept = [c for c in changes if not c.bookkeeping or id(c) in moved]
        hidden = [c for c in hidden if id(c) not in moved]
    return kept, hidden


def bookkeeping_line(hidden: list[Change], rest: int, *, one_file: bool = False) -> str:
    """The one line that stands for ``hidden`` bookkeeping changes (``rest``: how many
    other changes are listed; ``one_file``: they are one file's, as git's diff driver sees
    it, so nothing is said about the whole case)."""
    n = 0
    for c in hidden:
        folded = _FOLDED.match(c.note)
        n += int(folded.group(1)) if folded else 1
    if one_file and rest == 0:
        return f"only ids and timestamps changed ({n}; threads-cases diff --all lists them)"
    if rest == 0:
        return (
            f"re-recorded; no behavioural change ({n} id and timestamp change(s); --all lists them)"
        )
    return f"{n} id and timestamp change(s) not listed (--all lists them)"


_FOLDED = re.compile(r"the same (\d+) change")


#: The labels of the two sides when the caller names no folders (git's convention).
GIT_ROOTS = ("a", "b")


def diff_file(
    name: str,
    old: bytes | None,
    new: bytes | None,
    *,
    unified: bool = False,
    roots: tuple[str, str] = GIT_ROOTS,
) -> list[Change] | list[str]:
    """:func:`_diff_file`, each change marked when it is bookkeeping. ``roots``: the folders
    (or labels) of the old and the new file, which an error about either file names."""
    out = _diff_file(name, old, new, unified=unified, roots=roots)
    return [
        replace(c, bookkeeping=True) if isinstance(c, Change) and _is_bookkeeping(c) else c
        for c in out
    ]  # type: ignore[return-value]


def _diff_file(
    name: str,
    old: bytes | None,
    new: bytes | None,
    *,
    unified: bool = False,
    roots: tuple[str, str] = GIT_ROOTS,
) -> list[Change] | list[str]:
    """The semantic changes of one file of a case (``name`` relative to the case).

    ``None`` stands for an absent file. JSON files are compared by pointer (case.json by
    matcher, the recording files by item), logs by event seq; other files (artifacts) by
    bytes. With ``unified`` a file that is not strict JSON gives unified-diff lines
    (``list[str]``) instead of one ``changed`` entry.
    """
    if old == new:
        return []
    base = name.rsplit("/", 1)[-1]
    artifact = name.startswith("artifacts/") or "/artifacts/" in name
    if old is None or new is None:
        return [
            Change(
                name,
                "added" if old is None else "removed",
                "",
                None,
                note=_size(new if old is None else old),
            )
        ]
    if not artifact and (name.endswith(".json") or name.endswith(".jsonl")):
        parsed = _parse_both(name, old, new, roots)
        if isinstance(parsed, str):
            if unified:
                return _unified(name, old, new, roots)
            return [Change(name, "changed", "", None, note=f"{parsed}; bytes differ")]
        a, b = parsed
        if name.endswith(".jsonl"):
            d = _dialect_of(base)
            if d is not None:
                return _log_changes(name, _decode_events(a, d), _decode_events(b, d))
            return _log_changes(name, a, b)
        if base == "case.json":
            return _case_json_changes(name, a, b)
        if base in _LIST_KEY:
            return _recording_changes(name, a, b)
        if _EXPECTED.match(base):
            d = _dialect_of(base)
            return _value_changes(name, "", _decode_state(a, d), _decode_state(b, d))
        changes = _value_changes(name, "", a, b)
        if not changes:
            return [
                Change(
                    name, "changed", "", None, note="same value, different bytes (not canonical)"
                )
            ]
        return changes
    if unified and not _is_binary(old) and not _is_binary(new):
        return _unified(name, old, new, roots)
    return [Change(name, "changed", "", None, note=f"{_size(old)} -> {_size(new)}")]


def _at(root: str, name: str) -> str:
    """The path of case file ``name`` under ``root`` (a folder or a label such as ``a``)."""
    return f"{root.rstrip('/')}/{name}" if root else name


def _parse_both(name: str, old: bytes, new: bytes, roots: tuple[str, str]) -> tuple[Any, Any] | str:
    """Both sides of a JSON (or JSON Lines) file parsed, or, when either is not strict JSON,
    a note naming each side's error at its real path (``not strict JSON (error[...]:
    cases/x/case.json:58: ...)``)."""
    log = name.endswith(".jsonl")
    parse, code = (_parse_jsonl, "log_invalid") if log else (_parse_json, CASE_FILE_CODE)
    values: list[Any] = []
    errors: list[str] = []
    for root, data in zip(roots, (old, new), strict=True):
        try:
            values.append(parse(data, _at(root, name), code))
        except CaseError as err:
            errors.append(err.render())
    if errors:
        return f"not strict JSON ({'; '.join(errors)})"
    return values[0], values[1]


def _unified(name: str, old: bytes, new: bytes, roots: tuple[str, str] = GIT_ROOTS) -> list[str]:
    a_name, b_name = _at(roots[0], name), _at(roots[1], name)
    if _is_binary(old) or _is_binary(new):
        return [f"Binary files {a_name} and {b_name} differ"]
    a = old.decode("utf-8").splitlines(keepends=True)
    b = new.decode("utf-8").splitlines(keepends=True)
    return [
        line if line.endswith("\n") else line + "\n\\ No newline at end of file\n"
        for line in difflib.unified_diff(a, b, a_name, b_name)
    ]


def diff_case_files(
    a: dict[str, bytes], b: dict[str, bytes], roots: tuple[str, str] = GIT_ROOTS
) -> list[Change]:
    """Every semantic change from case files ``a`` to case files ``b`` (as read by
    :func:`walk_case`), ordered: case.json, logs, expected states, recordings, artifacts,
    other files. The changes of a non-canonical dialect's log (or expected state) that are
    exactly those of the threads-py one are folded into one line saying so. ``roots``: the
    case folders of ``a`` and ``b`` (or labels such as ``REV:case``), which a note about a
    file that is not strict JSON names."""

    def order(name: str) -> tuple[int, str]:
        if name == "case.json":
            return 0, name
        if _LOG.match(name):
            return (1 if name == f"log.{CANONICAL_DIALECT}.jsonl" else 2), name
        if _EXPECTED.match(name):
            return (3 if name == f"expected.{CANONICAL_DIALECT}.json" else 4), name
        if name in RECORDING_FILES:
            return 5 + RECORDING_FILES.index(name), name
        if name.startswith("artifacts/"):
            return 9, name
        return 10, name

    out: list[Change] = []
    canonical: dict[str, list[Change]] = {}
    for name in sorted(set(a) | set(b), key=order):
        changes = diff_file(name, a.get(name), b.get(name), roots=roots)
        assert all(isinstance(c, Change) for c in changes)
        typed = [c for c in changes if isinstance(c, Change)]
        kind = "log" if _LOG.match(name) else "expected" if _EXPECTED.match(name) else None
        if kind and _dialect_of(name) == CANONICAL_DIALECT:
            canonical[kind] = typed
        elif kind and typed and kind in canonical and name in a and name in b:
            same = [(c.kind, c.item, c.pointer, c.before, c.after) for c in typed] == [
                (c.kind, c.item, c.pointer, c.before, c.after) for c in canonical[kind]
            ]
            if same:
                ref = (
                    f"log.{CANONICAL_DIALECT}.jsonl"
                    if kind == "log"
                    else f"expected.{CANONICAL_DIALECT}.json"
                )
                out.append(
                    Change(
                        name,
                        "changed",
                        "",
                        None,
                        note=f"the same {len(typed)} change(s) as {ref}",
                        bookkeeping=all(c.bookkeeping for c in typed),
                    )
                )
                continue
        out.extend(typed)
    return out
