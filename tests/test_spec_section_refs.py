"""Every section reference in spec/*.md names a section that exists (issue 35): ``<file>.md
N.M`` / ``<file>.md section N`` / ``<file>.md §N.M`` in the named file, ``section N.M`` /
``§N.M`` (and ``section N.M of <file>.md``) in its own file or the one it names. A section
exists when a heading (``## 2. ...``, ``### 2.1 ...``) or a numbered paragraph (``5.9. ...``)
carries its number, or one of its sub-sections does; no number is carried twice in a file."""

from __future__ import annotations

import re
from collections import Counter
from pathlib import Path

SPEC = Path(__file__).resolve().parent.parent / "spec"
ID = r"\d+(?:\.\d+)*[a-z]?"
HEADING = re.compile(rf"^#+\s+({ID})\.?\s", re.M)
PARAGRAPH = re.compile(rf"^({ID})\.\s", re.M)
#: ``<file>.md N.M``, ``<file>.md's section N``, ``<file>.md §N`` (a line break may fall between)
IN_FILE = re.compile(rf"\b([\w-]+\.md)(?:'s)?,?\s+(?:sections?\s+|§)?({ID})\b")
#: ``section N.M`` / ``§N.M`` not right after a file name; ``of <file>.md`` may follow
BARE = re.compile(rf"(?:\bsections?\s+|§)({ID})\b(?:\s+of\s+([\w-]+\.md))?")
FILE_BEFORE = re.compile(r"\.md(?:'s)?,?\s+$")


def numbers(text: str) -> list[str]:
    """The section numbers a spec file carries, in order (headings and numbered paragraphs)."""
    return [m.group(1) for m in HEADING.finditer(text)] + [
        m.group(1) for m in PARAGRAPH.finditer(text) if "." in m.group(1)
    ]


def sections(text: str) -> set[str]:
    out = set()
    for number in numbers(text):
        parts = number.split(".")
        out |= {".".join(parts[: k + 1]) for k in range(len(parts))}
    return out


def texts() -> dict[str, str]:
    return {p.name: p.read_text("utf-8") for p in sorted(SPEC.glob("*.md"))}


def dangling() -> list[str]:
    docs = texts()
    known = {name: sections(text) for name, text in docs.items()}
    out = []
    for name, raw in docs.items():
        text = re.sub(r"\[([\w-]+\.md)\]\([^)]*\)", r"\1", raw)  # [x.md](x.md) 4.2

        def line(at: int, text: str = text) -> int:
            return text.count("\n", 0, at) + 1

        for m in IN_FILE.finditer(text):
            target, number = m.group(1), m.group(2)
            if target in known and number not in known[target]:
                out.append(f"{name}:{line(m.start())}: {target} {number}")
        for m in BARE.finditer(text):
            if FILE_BEFORE.search(text[max(0, m.start() - 40) : m.start()]):
                continue  # counted above, in the file it names
            target = m.group(2) or name
            if target in known and m.group(1) not in known[target]:
                out.append(f"{name}:{line(m.start())}: {target} {m.group(1)}")
    return out


def test_the_spec_has_sections_to_refer_to() -> None:
    docs = texts()
    assert len(docs) >= 10
    assert {"2.5.1", "1.5a", "3.2"} <= sections(docs["driver-protocol.md"])


def test_every_section_reference_resolves() -> None:
    assert dangling() == []


def test_no_section_number_is_carried_twice() -> None:
    twice = {
        name: [n for n, k in Counter(numbers(text)).items() if k > 1]
        for name, text in texts().items()
    }
    assert {name: ns for name, ns in twice.items() if ns} == {}


def test_the_checker_sees_references_and_numbers() -> None:
    """What the checks read: numbers of headings and paragraphs, references of every form."""
    text = "## 1. One\n\n1.1. A rule. See section 1.2 and reducer.md\nsection 99.\n"
    assert numbers(text) == ["1", "1.1"] and sections(text) == {"1", "1.1"}
    assert [m.group(1) for m in BARE.finditer(text)] == ["1.2", "99"]
    assert [m.groups() for m in IN_FILE.finditer(text)] == [("reducer.md", "99")]
