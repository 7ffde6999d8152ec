"""One concept per module (issue 14): no module in threads_cases/ or ts/src/ over 500 lines of
code (docstrings, comments and blank lines are free: issue 33, so that a module is split at a
seam and never made to fit by trimming its explanations), no function body over 60 lines
(signature and docstring excluded).

Cheap and static: Python is measured with ``ast``; TypeScript with a small scanner that
blanks comments, strings, template literals and regular expressions, then matches braces and
counts the lines between a function's ``{`` and its ``}``.
"""

from __future__ import annotations

import ast
import io
import re
import tokenize
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
MAX_MODULE_LINES = 500
MAX_BODY_LINES = 60

#: Functions allowed over the limit, each with its reason ("path::name": why); none today.
#: An entry that is no longer over the limit fails the test, so the list only shrinks.
ALLOWED: dict[str, str] = {}


def _python_functions(path: Path) -> list[tuple[str, int]]:
    """(name, body lines) of every function in a Python module."""
    out = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            continue
        body = node.body
        if ast.get_docstring(node, clean=False) is not None:
            body = body[1:]
        if body:
            end = body[-1].end_lineno or body[-1].lineno
            out.append((node.name, end - body[0].lineno + 1))
    return out


_REGEX_BEFORE = set("(,=:[!&|?{};+-*%<>~^")
_REGEX_AFTER_WORDS = {"return", "typeof", "case", "in", "of", "delete", "void", "throw", "else"}


def _regex_allowed(code: list[str]) -> bool:
    """Whether a ``/`` here starts a regular expression (not a division), from the code
    before it."""
    text = "".join(code[-40:]).rstrip()
    if not text:
        return True
    if text[-1] in _REGEX_BEFORE:
        return True
    word = re.search(r"[A-Za-z_$][\w$]*$", text)
    return word is not None and word.group() in _REGEX_AFTER_WORDS


def _blank(text: str) -> str:
    """``text`` as an operand placeholder of the same lines: ``0`` then spaces, newlines kept."""
    return "0" + "".join("\n" if ch == "\n" else " " for ch in text[1:])


def _skip_string(src: str, i: int) -> int:
    quote, j, n = src[i], i + 1, len(src)
    while j < n and src[j] != quote and src[j] != "\n":
        j += 2 if src[j] == "\\" else 1
    return min(j + 1, n)


def _skip_template(src: str, i: int, holes: list[int]) -> int:
    """From a backtick (or the ``}`` closing a hole) to the next backtick or ``${``."""
    j, n = i + 1, len(src)
    while j < n:
        if src[j] == "\\":
            j += 2
        elif src[j] == "`":
            return j + 1
        elif src.startswith("${", j):
            holes.append(0)
            return j + 2
        else:
            j += 1
    return n


def _skip_regex(src: str, i: int) -> int:
    j, n, in_class = i + 1, len(src), False
    while j < n and src[j] != "\n":
        ch = src[j]
        if ch == "\\":
            j += 2
            continue
        if ch == "[":
            in_class = True
        elif ch == "]":
            in_class = False
        elif ch == "/" and not in_class:
            j += 1
            break
        j += 1
    while j < n and (src[j].isalnum() or src[j] == "_"):
        j += 1  # flags
    return j


def _ts_code(src: str, comments: bool = True) -> str:
    """``src`` with comments, strings, template text and regexes blanked (lines kept); with
    ``comments=False`` a comment becomes spaces, not an operand placeholder."""
    code: list[str] = []
    holes: list[int] = []  # open braces inside each open template hole ``${ ... }``
    i, n = 0, len(src)
    while i < n:
        ch = src[i]
        comment = src.startswith(("//", "/*"), i)
        if src.startswith("//", i):
            j = src.find("\n", i)
            j = n if j < 0 else j
        elif src.startswith("/*", i):
            j = src.find("*/", i + 2)
            j = n if j < 0 else j + 2
        elif ch in "'\"":
            j = _skip_string(src, i)
        elif ch == "`" or (ch == "}" and holes and holes[-1] == 0):
            if ch == "}":
                holes.pop()
            j = _skip_template(src, i, holes)
        elif ch == "/" and _regex_allowed(code):
            j = _skip_regex(src, i)
        else:
            if holes and ch in "{}":
                holes[-1] += 1 if ch == "{" else -1
            code.append(ch)
            i += 1
            continue
        blanked = _blank(src[i:j])
        code.append(blanked if comments or not comment else " " + blanked[1:])
        i = j
    return "".join(code)


_CONTROL = {"if", "for", "while", "switch", "catch", "with", "return", "function"}
_AFTER_PARAMS = re.compile(r"\)\s*(?::[^;{}=]*?)?\s*$")
_NAME_BEFORE_PARAMS = re.compile(r"([A-Za-z_$][\w$]*)\s*(?:<[^()]*>)?\s*$")
_ARROW_NAME = re.compile(r"([A-Za-z_$][\w$]*)\s*(?::[^=]*)?=\s*(?:async\s*)?(?:\(|[A-Za-z_$])")


def _open_paren(code: str, close: int) -> int:
    depth = 0
    for k in range(close, -1, -1):
        if code[k] == ")":
            depth += 1
        elif code[k] == "(":
            depth -= 1
            if depth == 0:
                return k
    return -1


def _function_name(code: str, brace: int) -> str | None:
    """The name of the function whose body opens at ``brace``, or None (not a function)."""
    before = code[max(0, brace - 2000) : brace]
    offset = brace - len(before)
    if before.rstrip().endswith("=>"):
        line = before[before.rfind("\n") + 1 :]
        found = _ARROW_NAME.search(line)
        return found.group(1) if found else "<arrow>"
    params = _AFTER_PARAMS.search(before)
    if params is None:
        return None
    start = _open_paren(code, offset + params.start())
    if start < 0:
        return None
    name = _NAME_BEFORE_PARAMS.search(code[max(0, start - 200) : start])
    if name is None:
        return None if code[:start].rstrip().endswith(("=>", "=")) else "<anonymous>"
    return None if name.group(1) in _CONTROL - {"function"} else name.group(1)


def _ts_functions(path: Path) -> list[tuple[str, int]]:
    return _ts_functions_in(path.read_text(encoding="utf-8"))


def _ts_functions_in(src: str) -> list[tuple[str, int]]:
    """(name, body lines) of every function, method and block-bodied arrow in TS source."""
    code = _ts_code(src)
    out: list[tuple[str, int]] = []
    opened: list[tuple[int, int]] = []
    line = 1
    for k, ch in enumerate(code):
        if ch == "\n":
            line += 1
        elif ch == "{":
            opened.append((k, line))
        elif ch == "}" and opened:
            start, start_line = opened.pop()
            name = _function_name(code, start)
            if name is not None:
                out.append((name, max(0, line - start_line - 1)))
    return out


def _modules() -> list[Path]:
    return sorted((ROOT / "threads_cases").rglob("*.py")) + sorted(
        (ROOT / "ts" / "src").rglob("*.ts")
    )


def _python_code_lines(src: str) -> int:
    """Lines of Python ``src`` holding code: not blank, not only a comment, not part of a
    docstring (the first statement of a module, class or function, when a string)."""
    free: set[int] = set()
    for node in ast.walk(ast.parse(src)):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
            first = node.body[0] if node.body else None
            if (
                isinstance(first, ast.Expr)
                and isinstance(first.value, ast.Constant)
                and isinstance(first.value.value, str)
            ):
                free.update(range(first.lineno, (first.end_lineno or first.lineno) + 1))
    code: set[int] = set()
    skip = {tokenize.COMMENT, tokenize.NL, tokenize.NEWLINE, tokenize.INDENT, tokenize.DEDENT}
    for tok in tokenize.generate_tokens(io.StringIO(src).readline):
        if tok.type not in skip and tok.type != tokenize.ENDMARKER:
            code.update(range(tok.start[0], tok.end[0] + 1))
    return len(code - free)


def _ts_code_lines(src: str) -> int:
    """Lines of TypeScript ``src`` holding code once comments are blanked (strings and
    template text stay as placeholders, so a line of them counts)."""
    return sum(1 for line in _ts_code(src, comments=False).splitlines() if line.strip())


def test_no_module_is_over_500_code_lines() -> None:
    long = {}
    for path in _modules():
        src = path.read_text(encoding="utf-8")
        lines = _python_code_lines(src) if path.suffix == ".py" else _ts_code_lines(src)
        if lines > MAX_MODULE_LINES:
            long[str(path.relative_to(ROOT))] = lines
    assert not long, f"split these modules at a seam (issues 14, 33): {long}"


def test_code_lines_leave_out_docstrings_comments_and_blank_lines() -> None:
    python = (
        '"""Module docstring,\non two lines."""\n'
        "\n"
        "# a comment\n"
        "X = (\n"
        "    1,  # trailing comment: the line is code\n"
        ")\n"
        "\n"
        "\n"
        "def f() -> str:\n"
        '    """Docstring."""\n'
        '    return """not a docstring,\n'
        "three lines\n"
        '"""\n'
    )
    assert _python_code_lines(python) == 7  # X = ( 1, ) and def, return and its string
    ts = "/** A doc\n * comment. */\nexport const a = 1; // trailing\n\n// alone\nconst b = 2;\n"
    assert _ts_code_lines(ts) == 2


def test_no_function_body_is_over_60_lines() -> None:
    long = {}
    for path in _modules():
        measure = _python_functions if path.suffix == ".py" else _ts_functions
        for name, lines in measure(path):
            if lines > MAX_BODY_LINES:
                long[f"{path.relative_to(ROOT).as_posix()}::{name}"] = lines
    over = {k: v for k, v in long.items() if k not in ALLOWED}
    assert not over, f"split these functions, one job each (issue 14): {over}"
    stale = sorted(set(ALLOWED) - set(long))
    assert not stale, f"no longer over {MAX_BODY_LINES} lines: remove from ALLOWED: {stale}"


def test_the_typescript_scanner_finds_functions_and_skips_strings() -> None:
    src = (
        "const re = /[{]{2}/g;\n"
        "const s = `a ${ {x: 1}.x } }`;\n"
        "// } {\n"
        "export function f(a: string): Map<string, number> {\n"
        "  if (a) {\n"
        "    return new Map();\n"
        "  }\n"
        "  return new Map();\n"
        "}\n"
        "const g = (x: number): void => {\n"
        "  void '}';\n"
        "};\n"
        "class C {\n"
        "  m<T>(t: T): T {\n"
        "    return t / 2 / 1;\n"
        "  }\n"
        "}\n"
    )
    code = _ts_code(src)
    assert len(code.splitlines()) == len(src.splitlines())
    assert dict(_ts_functions_in(src)) == {"f": 4, "g": 1, "m": 1}
