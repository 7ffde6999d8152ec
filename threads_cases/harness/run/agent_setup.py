"""Which agent each implementation replays: ``--agent`` / ``--app-dir`` and the ``agent`` /
``app-dir`` settings (spec/replay.md 8.2).

An agent option is ``IMPL=REF`` or a bare ``REF``. A bare reference goes to the built-in
implementation of its language (:func:`~threads_cases.reference.agent_ref.ref_language`):
``module:attribute`` to ``threads-py``, ``./file.mjs#export`` (or any reference holding ``/``
or ``#``) to ``threads-ts``. The settings take the same forms::

    [tool.threads-cases]
    agent = "notes_agent:agent"                 # one reference, placed by its language
    app-dir = ["src"]                           # folders the agent's imports are found in

    [tool.threads-cases.agent]                  # or one per implementation
    threads-py = "notes_agent:agent"
    threads-ts = "./agents/notes.mjs#notesBot"
    my-impl = "whatever/my-driver/takes"

Options given on the command line replace the settings (all of ``agent``, or all of
``app-dir``). Relative ``app-dir`` folders are resolved against where they were written (the
current folder for options, the settings file's folder for settings); without any, the
folder is that same place. Nothing of the user's code is imported here.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from ...core.errors import CaseError
from ...core.texts import quote
from ...reference.agent_ref import AgentRef, ref_language
from .settings import BUILTIN_NAMES, settings_table

BY_LANGUAGE = {"python": "threads-py", "javascript": "threads-ts"}
REF_HINT = (
    "give module:attribute for threads-py, ./file.mjs#export for threads-ts, or IMPL=REF "
    "for any implementation (spec/replay.md 8.2)"
)


def _place(ref: str, source: str) -> str:
    """The implementation a bare reference is for; ``invalid_request`` when it is none."""
    language = ref_language(ref)
    if language is None:
        module = ref.split("#", 1)[0]
        hint = REF_HINT
        if module.endswith(".py"):  # the module, not its file: my_agent.py#agent
            stem = module.rsplit("/", 1)[-1].removesuffix(".py")
            hint = f"a Python agent is module:attribute, such as {stem}:agent (spec/replay.md 8.2)"
        raise CaseError(
            "invalid_request", f"{source} {quote(ref)} is not an agent reference", hint=hint
        )
    return BY_LANGUAGE[language]


def _entries(values: Iterable[str], source: str) -> dict[str, str]:
    out: dict[str, str] = {}
    for value in values:
        impl, sep, ref = value.partition("=")
        if not sep:
            impl, ref = _place(value, source), value
        if not impl or not ref:
            raise CaseError(
                "invalid_request", f"{source} {quote(value)} is not IMPL=REF", hint=REF_HINT
            )
        if impl in out:
            raise CaseError(
                "invalid_request",
                f"{source} names two agents for {impl}",
                hint="give one agent per implementation",
            )
        out[impl] = ref
    return out


def _setting_entries(src: Path, value: Any) -> dict[str, str]:
    """The ``agent`` setting as ``{implementation: ref}`` (checked by settings.py)."""
    if isinstance(value, str):
        return _entries([value], f"{src}: agent")
    return {str(k): str(v) for k, v in value.items()}


def agent_refs(
    agents: Sequence[str] | None = None,
    app_dirs: Sequence[str | Path] | None = None,
    *,
    known: Iterable[str] = (),
    start: Path | None = None,
) -> dict[str, AgentRef]:
    """The agent of each implementation that has one, from the options ``agents``
    (``IMPL=REF`` or ``REF``) and ``app_dirs``, else from the settings seen from ``start``.
    ``known``: the configured implementation names besides the built-in ones. Raises
    ``CaseError("invalid_request")`` for a reference of no known form, two agents for one
    implementation, an unknown implementation, or an ``app-dir`` that is not a folder."""
    src, table = settings_table(start)
    here = Path.cwd()
    if agents:
        refs, where, origin = _entries(agents, "--agent"), here, None
    elif "agent" in table:
        refs, where, origin = _setting_entries(src, table["agent"]), src.parent, src
    else:
        return {}
    if app_dirs:
        dirs, base = [Path(d) for d in app_dirs], here
    elif "app-dir" in table:
        raw = table["app-dir"]
        dirs, base = [Path(d) for d in ([raw] if isinstance(raw, str) else raw)], src.parent
    else:
        dirs, base = [Path(".")], where
    folders = tuple(str(_folder(d, base)) for d in dirs)
    names = {*BUILTIN_NAMES, *known}
    for impl in refs:
        if impl not in names:
            key = "" if origin is None else f"{_setting_key(origin, impl)}: "
            raise CaseError(
                "invalid_request",
                f"{key}an agent is given for {impl}, which is no implementation",
                file=None if origin is None else str(origin),
                hint=f"the implementations are {', '.join(sorted(names))} "
                f"(configured ones under [{_table_key(origin, 'implementations')}])",
            )
    return {impl: AgentRef(ref, folders) for impl, ref in refs.items()}


def _setting_key(src: Path, impl: str) -> str:
    """The key of an implementation's agent as written in ``src``."""
    return _table_key(src, f"agent.{impl}")


def _table_key(src: Path | None, key: str) -> str:
    """``key`` as written in the settings file ``src``: bare in threads-cases.toml, under
    ``tool.threads-cases.`` in pyproject.toml (and when no file is known)."""
    return (
        key if src is not None and src.name == "threads-cases.toml" else f"tool.threads-cases.{key}"
    )


def _folder(path: Path, base: Path) -> Path:
    """``path`` (relative to ``base``) as an absolute folder; refused naming it as written."""
    resolved = (base / path).resolve()
    if not resolved.is_dir():
        raise CaseError(
            "invalid_request",
            "the app-dir is not a folder",
            file=str(path),
            hint="--app-dir (or app-dir in the settings) names folders the agent's imports "
            "are found in",
        )
    return resolved


def agent_note(agents: Mapping[str, AgentRef], implementations: Iterable[str]) -> str | None:
    """One line for the run's notes when some implementations replay the user's agent and
    others the recorded one; None when every one or none has an agent."""
    names = list(implementations)
    recorded = [n for n in names if n not in agents]
    if not agents or not recorded:
        return None
    return (
        f"note: {', '.join(recorded)} replay{'s' if len(recorded) == 1 else ''} the agent "
        "recorded in each case (no --agent given for it)"
    )
