"""The typer application, error rendering and output helpers shared by the commands."""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING, Any

import typer

from .._version import __version__
from ..core.canonical import dump_document
from ..core.errors import CaseError
from ..core.texts import shown_text
from .native import Group, verbosity

if TYPE_CHECKING:
    from rich.console import Console

app = typer.Typer(
    name="threads-cases",
    help="Save agent turns as cases, replay them, and check implementations against the spec.",
    cls=Group,
    no_args_is_help=True,
    add_completion=True,
    context_settings={"help_option_names": ["-h", "--help"]},
    pretty_exceptions_enable=False,
    rich_markup_mode=None,
)

_CONSOLES: dict[str, Console] = {}


def console(stream: str = "stdout") -> Console:
    """The rich console of ``stream`` (``stdout`` or ``stderr``), made on first use: a
    command whose output needs no rich (``--format json``) never imports it (start-up).
    The module attributes ``stdout`` and ``stderr`` are these two consoles."""
    made = _CONSOLES.get(stream)
    if made is None:
        from rich.console import Console

        made = Console(stderr=stream == "stderr", highlight=False, soft_wrap=True)
        _CONSOLES[stream] = made
    return made


def _version(value: bool) -> None:
    if value:
        typer.echo(f"threads-cases {__version__}")
        raise typer.Exit(0)


@app.callback()
def _root(
    version: bool = typer.Option(
        False, "--version", callback=_version, is_eager=True, help="Print the version and exit."
    ),
) -> None:
    """threads-cases: keep agents honest with saved, replayable cases."""


def note(message: str, style: str | None = None) -> None:
    """A warning or note on stderr, unless -q (``--help``: "-q prints only results and
    errors"): every warning and note of every command goes through here. ``style``: a rich
    style such as ``yellow`` (shown on a terminal only)."""
    if verbosity() < 0:
        return
    if style is None:
        print(message, file=sys.stderr)
    else:
        console("stderr").print(message, style=style, markup=False)


def render_error(err: CaseError) -> None:
    """Print ``error[code]: location: message`` and ``  hint: ...`` on stderr."""
    print(shown_text(err.render()), file=sys.stderr)
    if err.hint:
        print(f"  hint: {shown_text(err.hint)}", file=sys.stderr)


def print_refusal(err: CaseError) -> None:
    """A refusal under JSON output: the one line ``{"code","message","hint"}`` on stdout, the
    message led by the error's location (file, line, JSON pointer) and the hint as on stderr
    (spec/reports.md 5.2); nothing on stderr."""
    from .native import json_refusal

    json_refusal(err.code, err.problem().render(), err.hint)


def fail(err: CaseError, fmt: str | None = None) -> typer.Exit:
    """Print ``err`` (:func:`print_refusal` when ``fmt`` is ``json``, else
    :func:`render_error`) and exit with its code's status."""
    if fmt == "json":
        print_refusal(err)
    else:
        render_error(err)
    return typer.Exit(err.exit_status)


def print_json(value: Any) -> None:
    """Write a value to stdout as a canonical JSON document."""
    dump_document(value, sys.stdout.buffer.write)  # streamed: memory is not the output's
    sys.stdout.flush()


def wants_json(fmt: str | None) -> bool:
    """JSON when asked, or when stdout is not a terminal and no format was given."""
    if fmt is None:
        return not sys.stdout.isatty()
    return fmt == "json"


def main() -> None:
    """Console-script entry point (errors are rendered by :class:`~.native.Group`)."""
    try:
        app(prog_name="threads-cases")
    except KeyboardInterrupt:
        print("error: interrupted", file=sys.stderr)
        sys.exit(130)
