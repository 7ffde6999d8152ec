"""What makes every command behave like a native tool, applied to all of them at once.

:class:`Group` is the click group typer builds for :data:`threads_cases.cli.app.app`:

- every usage error (unknown option, missing argument, ``--jobs 0``, a bad ``--format`` choice,
  a path that does not exist or is of the wrong kind) prints ``error[invalid_request]: message``
  and ``  hint: ...`` on stderr and exits 2, the status of ``invalid_request``
  (spec/reason-codes.md);
- a :class:`~threads_cases.core.errors.CaseError` escaping a command prints
  ``error[code]: location: message`` plus its hint and exits with the code's status;
- options get plain metavars (``PATH``, ``N``, ``SECONDS``, ``TEXT``; choices listed as
  ``[a|b]``), arguments their upper-case name, and the command list shows whole summaries;
- ``-q/--quiet`` and ``-v/--verbose`` are added to every command that does not define them
  (:func:`verbosity` reads the level);
- option values are coerced without pydantic where the answer is certain
  (:mod:`.fast_values`; start-up).

A command added later by ``@app.command()`` gets all of this without doing anything.

Only typer's public API is used (``typer.TyperException`` and ``typer.BadParameter``, the
classes of ``typer.core``, ``typer.main.get_command``): typer vendors its own click, whose
exception classes it does not export, so a usage error is told apart by what every click
usage error has (exit status 2 and the context it came from). The typer range this is
tested with is pinned in pyproject.toml; tests/test_typer_api.py fails on any other.
"""

from __future__ import annotations

import errno
import os
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any, get_args

import typer
import typer.main
from typer.core import TyperArgument, TyperGroup

from .fast_values import fast_params

__all__ = ["Group", "PathProblem", "set_verbosity", "verbosity"]

_VERBOSITY = 0


def verbosity() -> int:
    """-1 with -q (warnings and notes suppressed), 0 by default, 1 with -v."""
    return _VERBOSITY


def set_verbosity(level: int) -> None:
    global _VERBOSITY
    _VERBOSITY = level


class PathProblem(typer.BadParameter):
    """A path argument that does not exist or is of the wrong kind; carries the hint."""

    def __init__(self, message: str, hint: str) -> None:
        super().__init__(message)
        self.hint = hint

    def format_message(self) -> str:
        return self.message


def _is_usage_error(err: typer.TyperException) -> bool:
    """A usage error (click's ``UsageError`` and its kinds): status 2 and its context."""
    return getattr(err, "exit_code", None) == 2 and hasattr(err, "ctx")


def _is_no_args_help(err: typer.TyperException) -> bool:
    """The error a group called without a command raises to show its help: its message is
    the help of its context (click's ``NoArgsIsHelpError``)."""
    ctx = getattr(err, "ctx", None)
    return ctx is not None and err.format_message() == ctx.get_help()


def _usage_hint(err: typer.TyperException) -> str:
    ctx = getattr(err, "ctx", None)
    if ctx is None:
        return "run `threads-cases --help` for the commands"
    usage = ctx.get_usage().removeprefix("Usage: ").strip()
    return f"usage: {usage}; `{ctx.command_path} --help` for details"


def _message(err: typer.TyperException) -> str:
    text = err.format_message().strip()
    param = getattr(err, "param", None)
    if (
        type(err) is typer.BadParameter
        and param is not None
        and getattr(err, "param_hint", None) is None
    ):
        name = param.metavar if isinstance(param, TyperArgument) else "/".join(param.opts)
        text = f"{name}: {err.message.removeprefix('Value error, ')}"
    text = (
        text.replace("Invalid value for ", "")
        .replace("Value error, ", "")
        .replace("No such option: ", "unknown option ")
    )
    if text[1:2].islower():
        text = text[:1].lower() + text[1:]
    return text.removesuffix(".")


#: Commands whose refusals under JSON output are one ``{"code","message","hint"}`` line on
#: stdout (spec/reports.md 5.2, replay.md 12.4), usage errors included.
JSON_REFUSALS = {
    ("run",),
    ("conformance",),
    ("diff",),
    ("baseline", "update"),
    ("baseline", "prune"),
    ("import",),
    ("stale",),
    ("coverage",),
    ("validate",),
    ("list",),
    ("accept",),
    ("save",),
}


def _json_refusals(args: list[str]) -> bool:
    """Whether ``args`` ask one of :data:`JSON_REFUSALS` for JSON output (``--format json``,
    ``--format=json`` or ``--json``)."""
    words = [a for a in args if not a.startswith("-")]
    if tuple(words[:1]) not in JSON_REFUSALS and tuple(words[:2]) not in JSON_REFUSALS:
        return False
    pairs = zip(args, [*args[1:], ""], strict=True)
    return "--json" in args or "--format=json" in args or ("--format", "json") in pairs


def json_line(doc: dict[str, str]) -> None:
    from ..core.canonical import canonical_line

    sys.stdout.buffer.write(canonical_line(doc) + b"\n")
    sys.stdout.flush()


def json_refusal(code: str, message: str, hint: str | None) -> None:
    """The one line ``{"code","message","hint"}`` on stdout (spec/reports.md 5.2): the same
    code, message and hint the text refusal prints on stderr; no ``hint`` key when the text
    has no hint line."""
    json_line({"code": code, "message": message, **({"hint": hint} if hint else {})})


def render_usage_error(err: typer.TyperException) -> None:
    """``error[invalid_request]: message`` and a hint on stderr."""
    hint = getattr(err, "hint", None) or _usage_hint(err)
    print(f"error[invalid_request]: {_message(err)}", file=sys.stderr)
    print(f"  hint: {hint}", file=sys.stderr)


def _metavar(param: Any) -> str | None:
    desc = getattr(param, "type_descriptor", None)
    if desc is None:
        return None
    if isinstance(param, TyperArgument):
        name = (param.name or "value").upper()
        return name.removesuffix("S") if param.nargs != 1 else name
    if desc.is_choice and desc.choices:
        return "[" + "|".join(str(c) for c in desc.choices) + "]"
    if getattr(param, "is_flag", False):
        return None
    annotation = desc.annotation
    args = [a for a in get_args(annotation) if a is not type(None)] or [annotation]
    base = args[0]
    inner = get_args(base)
    if inner:
        base = inner[0]
    name = param.name or ""
    if base is Path:
        return "PATH"
    if base is int:
        return "N"
    if base is float:
        return "SECONDS" if "timeout" in name or "seconds" in name else "NUMBER"
    return "TEXT"


def _set_quiet(_ctx: Any, _param: Any, value: bool) -> None:
    if value:
        set_verbosity(-1)


def _set_verbose(_ctx: Any, _param: Any, value: bool) -> None:
    if value:
        set_verbosity(1)


_PLACEHOLDER = typer.Typer()


@_PLACEHOLDER.command()
def _quiet_verbose_placeholder(
    quiet: bool = typer.Option(
        False,
        "-q",
        "--quiet",
        expose_value=False,
        callback=_set_quiet,
        help="Print only results and errors (no warnings or notes).",
    ),
    verbose: bool = typer.Option(
        False,
        "-v",
        "--verbose",
        expose_value=False,
        callback=_set_verbose,
        help="Print more detail (and a traceback on an internal error).",
    ),
) -> None:
    """Where -q/-v are declared; :func:`polish` adds them to commands lacking them."""


def _quiet_verbose_options(cmd: Any) -> list[Any]:
    """Fresh -q/-v parameters (typer builds them from :func:`_quiet_verbose_placeholder`'s
    declarations: ``typer.main.get_command``) for those ``cmd`` does not have."""
    taken = {o for p in cmd.params for o in getattr(p, "opts", [])}
    built = typer.main.get_command(_PLACEHOLDER).params
    return [p for p in built if p.name in ("quiet", "verbose") and not set(p.opts) & taken]


def _full_summary(help_text: str | None) -> str | None:
    """The first paragraph of a docstring, on one line (never cut mid-sentence)."""
    if not help_text:
        return None
    first = help_text.strip().split("\n\n")[0]
    return " ".join(first.split())


def _plain_argument(param: TyperArgument) -> None:
    """Show an argument as ``LOG`` or ``PATH...`` (usage ``[PATH]...``), no Python type."""
    metavar = param.metavar or (param.name or "value").upper()
    many = "..." if param.nargs != 1 else ""
    shown = metavar + many
    usage = shown if param.required else f"[{metavar}]{many}"

    def no_type(ctx: Any) -> str | None:
        return None

    def display_name() -> str:
        return shown

    def usage_name() -> str:
        return usage

    param.display_type_rich = no_type  # type: ignore[method-assign]
    param._rich_display_name = display_name  # type: ignore[method-assign]
    param._usage_display_name = usage_name  # type: ignore[method-assign]


def polish(cmd: Any) -> None:
    """Metavars, whole summary and -q/-v for one command (idempotent)."""
    if getattr(cmd, "_threads_cases_polished", False):
        return
    cmd._threads_cases_polished = True
    if cmd.short_help is None:
        cmd.short_help = _full_summary(cmd.help)
    if isinstance(cmd, TyperGroup):  # a command group such as `report`: its commands
        for sub in cmd.commands.values():
            polish(sub)
        return
    for param in cmd.params:
        if param.metavar is None and param.name not in ("help",):
            param.metavar = _metavar(param)
        if isinstance(param, TyperArgument):
            _plain_argument(param)
    typer_params = cmd.get_params

    def get_params(ctx: Any) -> list[Any]:
        return fast_params(typer_params(ctx))

    cmd.get_params = get_params
    extra = _quiet_verbose_options(cmd)
    help_index = next((i for i, p in enumerate(cmd.params) if p.name == "help"), len(cmd.params))
    cmd.params[help_index:help_index] = extra


class Group(TyperGroup):
    """The root command: native error format, metavars, summaries, -q/-v on every command."""

    def get_params(self, ctx: Any) -> list[Any]:
        return fast_params(super().get_params(ctx))

    def get_command(self, ctx: Any, cmd_name: str) -> Any:
        cmd = super().get_command(ctx, cmd_name)
        if cmd is not None:
            polish(cmd)
        return cmd

    def format_commands(self, ctx: Any, formatter: Any) -> None:
        rows = []
        for name in self.list_commands(ctx):
            cmd = self.get_command(ctx, name)
            if cmd is not None and not cmd.hidden:
                rows.append((name, cmd.get_short_help_str(limit=10_000)))
        if rows:
            with formatter.section("Commands"):
                formatter.write_dl(rows)

    def main(  # type: ignore[override]
        self,
        args: Sequence[str] | None = None,
        prog_name: str | None = None,
        complete_var: str | None = None,
        standalone_mode: bool = True,
        **extra: Any,
    ) -> Any:
        if not standalone_mode:
            return super().main(args, prog_name, complete_var, standalone_mode=False, **extra)
        from ..core.errors import CaseError

        try:
            status = super().main(args, prog_name, complete_var, standalone_mode=False, **extra)
        except typer.TyperException as err:  # click's exceptions, as typer raises them
            self._refuse(err, args)
        except typer.Abort:
            print("error: aborted", file=sys.stderr)
            sys.exit(1)
        except CaseError as err:
            if _json_refusals(sys.argv[1:] if args is None else list(args)):
                json_refusal(err.code, err.problem().render(), err.hint)
            else:
                print(err.render(), file=sys.stderr)
                if err.hint:
                    print(f"  hint: {err.hint}", file=sys.stderr)
            sys.exit(err.exit_status)
        except Exception as exc:  # never a traceback for the user
            if isinstance(exc, OSError) and exc.errno == errno.ENAMETOOLONG:
                too_long = "a path component is longer than 255 bytes"
                short = "use a shorter file or directory name"
                if _json_refusals(sys.argv[1:] if args is None else list(args)):
                    json_refusal("invalid_request", too_long, short)
                else:
                    print(f"error[invalid_request]: {too_long}", file=sys.stderr)
                    print(f"  hint: {short}", file=sys.stderr)
                sys.exit(2)
            if os.environ.get("THREADS_CASES_DEBUG") or verbosity() > 0:
                raise
            print(f"error[internal_error]: {type(exc).__name__}: {exc}", file=sys.stderr)
            print(
                "  hint: this is a bug in threads-cases; rerun with -v for a traceback "
                "and report it",
                file=sys.stderr,
            )
            sys.exit(1)
        sys.exit(status if isinstance(status, int) else 0)

    @staticmethod
    def _refuse(err: typer.TyperException, args: Sequence[str] | None) -> None:
        """Exit on one of click's exceptions: a group's help when it was given no command
        (status 2), a usage error as ``error[invalid_request]`` (or its JSON line) with a
        hint (status 2), any other with its message and status."""
        if _is_no_args_help(err):
            typer.echo(err.format_message(), err=True)
            sys.exit(2)
        if _is_usage_error(err):
            if _json_refusals(sys.argv[1:] if args is None else list(args)):
                hint = getattr(err, "hint", None) or _usage_hint(err)
                json_refusal("invalid_request", _message(err), hint)
            else:
                render_usage_error(err)
            sys.exit(2)
        print(f"error[invalid_request]: {err.format_message()}", file=sys.stderr)
        sys.exit(getattr(err, "exit_code", 1))
