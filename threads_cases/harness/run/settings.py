"""The project settings: all of ``threads-cases.toml``, or ``[tool.threads-cases]`` of
``pyproject.toml``, in the project's folder (:func:`~threads_cases.core.statedir.project_home`:
the nearest folder upward holding one of them or ``.git``, the folder that holds
``.threads-cases/`` too), read and checked in one place.

Keys (spec/driver-protocol.md 5.3, spec/reports.md 5.1, spec/replay.md 12.1)::

    [tool.threads-cases]
    strict = true                           # a boolean
    baseline = ".threads-cases/baseline.json"   # a non-empty string (a path)
    pass_env = ["MY_AGENT_HOME", "MY_AGENT_*"]   # variables drivers get beyond the allow-list
    impl = ["threads-py"]                   # the implementations run without --impl

    agent = "notes_agent:agent"             # a string, or a table {implementation: ref}
    app-dir = ["src"]                       # a string or a list of strings (folders)

    [tool.threads-cases.implementations.my-impl]
    command = ["./my-driver"]               # required: a non-empty list of strings
    dialect = "threads-py"                  # optional: a dialect name
    timeout = 30                            # optional: a number of seconds > 0

A value of the wrong type anywhere is refused with ``CaseError("invalid_request")`` naming
the file and the key, with a hint that shows the right shape. So is a key this version does
not know, in the table or in an implementation's table (a misspelt key would otherwise be
dropped without a word), in particular pyproject's ``tool.threads-cases.`` prefix written in
threads-cases.toml; a configured implementation with the name of a built-in one; and
settings in both threads-cases.toml and pyproject.toml of the same folder.
"""

from __future__ import annotations

import tomllib
from pathlib import Path
from typing import Any

from ...core.errors import CaseError
from ...core.statedir import has_settings_table, project_home
from ...protocol.driver_env import check_pass_env


def _shape(src: Path, what: str) -> str:
    """The hint for a malformed setting ``what``: the right shape, as written in ``src``."""
    toml = src.name == "threads-cases.toml"
    table = "implementations.my-impl" if toml else "tool.threads-cases.implementations.my-impl"
    where = f"at the top of {src.name}" if toml else "under [tool.threads-cases]"
    impl = (
        f'[{table}] with command = ["./my-driver"], optional dialect = "threads-py" and '
        "timeout = 30 (spec/driver-protocol.md 5.3)"
    )
    return {
        "settings": "write the settings as a table: [tool.threads-cases] with strict, "
        "baseline, pass_env and [tool.threads-cases.implementations.NAME] tables",
        "strict": f"write strict = true (or false) {where}",
        "baseline": f'write baseline = ".threads-cases/baseline.json" {where}',
        "implementations": f"declare each implementation as a table: {impl}",
        "command": 'write command = ["./my-driver", "--flag"] (the driver\'s argv, a '
        f"non-empty list of strings) in [{table}]",
        "dialect": 'write dialect = "threads-py" (a dialect name under spec/dialects/)',
        "timeout": "write timeout = 30 (seconds per request, a number greater than 0)",
        "agent": f'write agent = "my_agent:agent" {where}, or a table [{_table(src, "agent")}] '
        'with threads-py = "my_agent:agent" and threads-ts = "./agent.mjs#agent" '
        "(spec/replay.md 8.2)",
        "app-dir": f'write app-dir = ["src"] {where} (folders the agent is imported from)',
        "pass_env": f'write pass_env = ["MY_VAR", "MY_PREFIX_*"] {where} (variable names, '
        "each optionally ending in *; spec/driver-protocol.md 5.6)",
        "impl": f'write impl = ["threads-py"] {where} (the implementations run when no --impl '
        "is given: threads-py, threads-ts or one of [implementations]; spec/reports.md 3.2)",
    }[what]


def _table(src: Path, name: str) -> str:
    return name if src.name == "threads-cases.toml" else f"tool.threads-cases.{name}"


def _type_name(value: Any) -> str:
    if isinstance(value, bool):
        return f"the boolean {str(value).lower()}"
    if isinstance(value, int | float):
        return f"the number {value}"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, list):
        return "a list" if value else "an empty list"
    if isinstance(value, dict):
        return "a table"
    return type(value).__name__


def _refuse(src: Path, key: str, want: str, value: Any, shape: str) -> CaseError:
    return CaseError(
        "invalid_request",
        f"{key} must be {want}, not {_type_name(value)}",
        file=str(src),
        hint=_shape(src, shape),
    )


def _key(src: Path, *parts: str) -> str:
    """The TOML key of a setting as the user wrote it in ``src``."""
    prefix = [] if src.name == "threads-cases.toml" else ["tool", "threads-cases"]
    return ".".join(_quoted(p) for p in [*prefix, *parts])


def _quoted(part: str) -> str:
    bare = part.replace("-", "").replace("_", "").isalnum() and part.isascii()
    return part if bare else '"' + part.replace("\\", "\\\\").replace('"', '\\"') + '"'


def load_toml(path: Path) -> dict[str, Any]:
    """A TOML file as a table; ``CaseError("invalid_request")`` when it is not TOML."""
    try:
        return tomllib.loads(path.read_text("utf-8"))
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise CaseError(
            "invalid_request",
            f"cannot read {path}: {exc}",
            file=str(path),
            hint="the file must be TOML (https://toml.io)",
        ) from None


def settings_table(start: Path | None = None) -> tuple[Path, dict[str, Any]]:
    """The settings table and the file it came from, in the project's folder seen from
    ``start`` (default the current folder; :func:`project_home`); the table is empty when
    neither file exists. Each key is checked (:func:`check_settings`)."""
    base = project_home(start).absolute()
    src = base / "threads-cases.toml"
    if src.is_file():
        table: Any = load_toml(src)
        _one_file(src, base / "pyproject.toml")
    else:
        src = base / "pyproject.toml"
        if not src.is_file():
            return src, {}
        tool = load_toml(src).get("tool", {})
        if not isinstance(tool, dict):
            raise _refuse(src, "tool", "a table", tool, "settings")
        table = tool.get("threads-cases", {})
        if not isinstance(table, dict):
            raise _refuse(src, "tool.threads-cases", "a table", table, "settings")
    check_settings(src, table)
    return src, table


#: the keys of the settings table, and of one implementation's table
KEYS = ("strict", "baseline", "implementations", "agent", "app-dir", "pass_env", "impl")
IMPLEMENTATION_KEYS = ("command", "dialect", "timeout")
#: implementations a configuration may not redefine (harness/run/registry.py BUILTIN)
BUILTIN_NAMES = ("threads-py", "threads-ts")


def _unknown(src: Path, table: dict[str, Any], known: tuple[str, ...], *parts: str) -> None:
    """Refuse the first key of ``table`` not in ``known`` (``parts``: where the table is)."""
    for key in table:
        if key in known:
            continue
        if key == "tool" and not parts and src.name == "threads-cases.toml":
            impls = (
                table["tool"].get("threads-cases", {}) if isinstance(table["tool"], dict) else {}
            )
            impls = impls.get("implementations") if isinstance(impls, dict) else None
            name = next(iter(impls), "my-impl") if isinstance(impls, dict) else "my-impl"
            raise CaseError(
                "invalid_request",
                "threads-cases.toml holds a [tool...] table: the tool.threads-cases. prefix "
                "belongs in pyproject.toml only",
                file=str(src),
                hint="in threads-cases.toml write the tables without the prefix: "
                f'[implementations.{_quoted(name)}] with command = ["./my-driver"], and strict '
                "or baseline at the top (spec/driver-protocol.md 5.3)",
            )
        where = _key(src, *parts) if (parts or src.name != "threads-cases.toml") else src.name
        raise CaseError(
            "invalid_request",
            f"unknown key {_key(src, *parts, key)} in {where}",
            file=str(src),
            hint=f"the keys there are {', '.join(known)}: fix the spelling or remove it "
            "(spec/driver-protocol.md 5.3)",
        )


def _one_file(toml: Path, pyproject: Path) -> None:
    """Refuse settings in both files of the project's folder: threads-cases.toml wins, and
    the pyproject table would be dropped without a word."""
    if not has_settings_table(pyproject):
        return
    raise CaseError(
        "invalid_request",
        f"settings in both {toml.name} and {pyproject.name} ([tool.threads-cases]); "
        f"only {toml.name} would be read",
        file=str(pyproject),
        hint=f"keep them in one file: move the [tool.threads-cases] tables into {toml.name} "
        "(without the tool.threads-cases. prefix), or delete it",
    )


def check_settings(src: Path, table: dict[str, Any]) -> None:
    """Refuse a key of ``table`` this version does not know, or a known one whose value has
    the wrong type or shape."""
    _unknown(src, table, KEYS)
    strict = table.get("strict", False)
    if not isinstance(strict, bool):
        raise _refuse(src, _key(src, "strict"), "true or false", strict, "strict")
    baseline = table.get("baseline", "x")
    if not isinstance(baseline, str) or not baseline:
        want = "a path (a non-empty string)"
        raise _refuse(src, _key(src, "baseline"), want, baseline, "baseline")
    pass_env = table.get("pass_env", [])
    if check_pass_env(pass_env) is None:
        want = "a list of variable names (letters, digits, _, optionally ending in *)"
        raise _refuse(src, _key(src, "pass_env"), want, pass_env, "pass_env")
    impls = table.get("implementations", {})
    if not isinstance(impls, dict):
        want = "a table of implementations"
        raise _refuse(src, _key(src, "implementations"), want, impls, "implementations")
    for name, spec in impls.items():
        _check_implementation(src, name, spec)
    _check_agent(src, table)
    _check_impl(src, table, [*BUILTIN_NAMES, *impls])


def _check_impl(src: Path, table: dict[str, Any], known: list[str]) -> None:
    """``impl``: a non-empty list of distinct implementation names, each built in or
    configured in the same file (spec/reports.md 3.2)."""
    names = table.get("impl", ["threads-py"])
    if not (isinstance(names, list) and names and all(isinstance(n, str) for n in names)):
        want = "a non-empty list of implementation names"
        raise _refuse(src, _key(src, "impl"), want, names, "impl")
    for name in names:
        if name not in known:
            raise CaseError(
                "invalid_request",
                f"{_key(src, 'impl')} names the unknown implementation {name!r}; known: "
                f"{', '.join(known)}",
                file=str(src),
                hint=_shape(src, "impl"),
            )
    if len(set(names)) != len(names):
        twice = next(n for n in names if names.count(n) > 1)
        raise CaseError(
            "invalid_request",
            f"{_key(src, 'impl')} names {twice!r} twice",
            file=str(src),
            hint=_shape(src, "impl"),
        )


def _check_agent(src: Path, table: dict[str, Any]) -> None:
    """``agent``: a non-empty string or a table of them; ``app-dir``: a non-empty string or
    a list of them (spec/replay.md 8.2)."""
    agent = table.get("agent", "x")
    if isinstance(agent, dict):
        for name, ref in agent.items():
            if not isinstance(ref, str) or not ref:
                want = "an agent reference (a non-empty string)"
                raise _refuse(src, _key(src, "agent", name), want, ref, "agent")
    elif not isinstance(agent, str) or not agent:
        want = "an agent reference or a table of them"
        raise _refuse(src, _key(src, "agent"), want, agent, "agent")
    dirs = table.get("app-dir", "x")
    items = [dirs] if isinstance(dirs, str) else dirs
    if not isinstance(items, list) or not items or not all(isinstance(d, str) and d for d in items):
        want = "a folder or a list of folders (non-empty strings)"
        raise _refuse(src, _key(src, "app-dir"), want, dirs, "app-dir")


def _check_implementation(src: Path, name: str, spec: Any) -> None:
    key = _key(src, "implementations", name)
    if not isinstance(spec, dict):
        raise _refuse(src, key, "a table", spec, "implementations")
    if name in BUILTIN_NAMES:
        raise CaseError(
            "invalid_request",
            f"{key}: {name} is a built-in implementation and cannot be redefined",
            file=str(src),
            hint=f"give yours another name ([{_key(src, 'implementations', 'my-impl')}]); "
            "to run threads-py as a driver process use --isolated",
        )
    _unknown(src, spec, IMPLEMENTATION_KEYS, "implementations", name)
    cmd = spec.get("command")
    if not (isinstance(cmd, list) and cmd and all(isinstance(c, str) and c for c in cmd)):
        want = "a non-empty list of non-empty strings"
        if cmd is None:
            raise CaseError(
                "invalid_request",
                f"{key}.command is missing",
                file=str(src),
                hint=_shape(src, "command"),
            )
        raise _refuse(src, f"{key}.command", want, cmd, "command")
    dialect = spec.get("dialect", "threads-py")
    if not isinstance(dialect, str):
        raise _refuse(src, f"{key}.dialect", "a dialect name (a string)", dialect, "dialect")
    from ...core.dialects import get_dialect

    try:
        get_dialect(dialect)
    except CaseError as err:  # name the file and the key, not only the dialect
        raise CaseError(err.code, f"{key}.dialect: {err.message}", file=str(src)) from None
    timeout = spec.get("timeout", 60)
    if isinstance(timeout, bool) or not isinstance(timeout, int | float) or not timeout > 0:
        want = "a number of seconds greater than 0"
        raise _refuse(src, f"{key}.timeout", want, timeout, "timeout")


def pass_env_setting(start: Path | None = None) -> list[str]:
    """``pass_env`` under ``[tool.threads-cases]`` (or in threads-cases.toml): the variable
    names every driver gets beyond the allow-list (spec/driver-protocol.md 5.6), [] when not
    set. Raises ``CaseError("invalid_request")`` as :func:`check_settings` does."""
    return list(settings_table(start)[1].get("pass_env", []))
