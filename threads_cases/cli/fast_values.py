"""Option values typer would coerce with pydantic, coerced without it where the answer is
certain (start-up: issue 37, "Fast single runs").

typer 0.29 builds a pydantic ``TypeAdapter`` for every parameter it processes, given on the
command line or not (importing pydantic and building the adapters of ``run``'s 33 options is
about 0.1 CPU-s, several times a bare interpreter's start-up). :func:`fast_process_value`
wraps one parameter's ``process_value`` (click's public hook: coerce, check it is given when
required, run its callback) so that the values whose coercion cannot differ from typer's are
coerced here:

* a missing value (``None``): ``None``, or ``()`` for a repeatable parameter, as typer's
  coercion answers before it looks at the type;
* ``str`` (no ``parser=``): ``str(value)``;
* ``int`` and ``float`` written as plain decimal digits (``12``, ``0.5``), or the default
  already of that type, inside the parameter's ``min``/``max`` (no ``clamp``);
* a ``Literal`` choice matching one of its values exactly (case-sensitive, no token
  normaliser);
* ``Path`` (no ``exists``, ``resolve_path``, ``allow_dash`` or ``path_type``): ``Path(value)``
  after the same file/directory/readable/writable checks typer makes;
* a repeatable parameter of any of these, item by item, as a list.

Anything else (a value typer would refuse, an out-of-range number, an unusual type) goes to
typer's own ``process_value`` unchanged, so every error message and exit status stays
typer's. tests/test_fast_values.py compares both coercions over every option of every
command.
"""

from __future__ import annotations

import os
import re
import stat
from collections.abc import Callable
from pathlib import Path
from typing import Any, Literal, get_args, get_origin

__all__ = ["fast_params", "fast_process_value"]

#: a result this module cannot give with certainty (typer's own coercion decides)
_UNSURE = object()
_INT = re.compile(r"0|[1-9][0-9]{0,17}")
_FLOAT = re.compile(r"(0|[1-9][0-9]{0,14})(\.[0-9]{1,15})?")


def _in_range(info: Any, number: float) -> bool:
    if info.clamp:
        return False
    return (info.min is None or number >= info.min) and (info.max is None or number <= info.max)


def _number(annotation: type[float], info: Any, value: Any) -> Any:
    number: float
    if type(value) is annotation:
        number = value
    elif type(value) is str and (_INT if annotation is int else _FLOAT).fullmatch(value):
        number = annotation(value)
    else:
        return _UNSURE
    return number if _in_range(info, number) else _UNSURE


def _path(info: Any, value: Any) -> Any:
    if info.exists or info.resolve_path or info.allow_dash or info.path_type is not None:
        return _UNSURE
    if type(value) is not str or not value or "\x00" in value:
        return _UNSURE
    path = Path(value)
    try:
        st = os.stat(path)
    except OSError:
        return path
    if not info.file_okay and stat.S_ISREG(st.st_mode):
        return _UNSURE
    if not info.dir_okay and stat.S_ISDIR(st.st_mode):
        return _UNSURE
    if info.readable and not os.access(path, os.R_OK):
        return _UNSURE
    if info.writable and not os.access(path, os.W_OK):
        return _UNSURE
    return path


def _leaf(annotation: Any, info: Any, value: Any, ctx: Any) -> Any:
    if info.parser is not None:
        return _UNSURE
    if annotation is str:
        return str(value) if type(value) is str else _UNSURE
    if annotation is int or annotation is float:
        return _number(annotation, info, value)
    if get_origin(annotation) is Literal:
        exact = info.case_sensitive and getattr(ctx, "token_normalize_func", None) is None
        choices = get_args(annotation)
        if exact and type(value) is str and all(type(c) is str for c in choices):
            return value if value in choices else _UNSURE
        return _UNSURE
    if annotation is Path:
        return _path(info, value)
    return _UNSURE


def _coerce(param: Any, value: Any, ctx: Any) -> Any:
    desc = getattr(param, "type_descriptor", None)
    if desc is None or desc.is_file:
        return _UNSURE
    many = param.multiple or param.nargs == -1
    if value is None:
        return () if many else None
    annotation, info = desc.annotation, desc.parameter_info
    if annotation is bool:
        return value if type(value) is bool else _UNSURE
    if not many:
        return _leaf(annotation, info, value, ctx)
    if get_origin(annotation) is not list or type(value) not in (list, tuple):
        return _UNSURE
    (item_type,) = get_args(annotation)
    items = [_leaf(item_type, info, item, ctx) for item in value]
    return _UNSURE if any(item is _UNSURE for item in items) else items


def fast_process_value(param: Any, typer_process: Callable[[Any, Any], Any]) -> Any:
    """A ``process_value(ctx, value)`` for ``param`` (a typer option or argument): the
    value coerced as described in the module docstring, then, as typer does, the required
    check (left to ``typer_process``, typer's bound ``process_value``, when the value is
    missing) and the parameter's callback; ``typer_process`` itself for any other value."""

    def process_value(ctx: Any, value: Any) -> Any:
        coerced = _coerce(param, value, ctx)
        if coerced is _UNSURE or (param.required and param.value_is_missing(coerced)):
            return typer_process(ctx, value)
        if param.callback is not None:
            coerced = param.callback(ctx, param, coerced)
        return coerced

    return process_value


def fast_params(params: list[Any]) -> list[Any]:
    """``params`` (a command's ``get_params(ctx)``: its own, the help option typer adds, the
    root's completion options), each with :func:`fast_process_value` in place (once)."""
    for param in params:
        if not getattr(param, "_threads_cases_fast", False):
            param._threads_cases_fast = True
            param.process_value = fast_process_value(param, param.process_value)
    return params
