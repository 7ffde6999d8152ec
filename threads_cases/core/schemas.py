"""JSON Schema validation against the shipped ``schemas/`` documents (JSON Schema 2020-12).

Every document under ``schemas/`` is registered by its ``$id`` so cross-file ``$ref``s
resolve offline. :func:`validator` returns a cached jsonschema validator for a whole document
or for one ``$defs`` entry of it; :func:`schema_problems` turns its errors into problems with
JSON pointers.

:func:`fast_validator` is the same schema compiled by jsonschema-rs, used where every event
of a log is checked (about 300 times faster here; see benchmarks/). It only answers
"valid or not"; the problems reported for an invalid value always come from
:func:`schema_problems`, and a test keeps both validators in agreement on the conformance
data and the bad-input corpus.

jsonschema and referencing are imported only when a value is invalid (or a whole schema
document is asked for): a command that reads valid files never loads them (fast start). The
schema documents are our own files, read once with orjson; the validators of
:func:`compiled_event_validators` are compiled on first use, one event type at a time.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from functools import cache
from typing import TYPE_CHECKING, Any

import jsonschema_rs
import orjson

from .errors import pointer_join
from .resources import schemas_dir
from .timestamps import CALENDAR_PATTERN

if TYPE_CHECKING:
    from referencing import Registry

BASE = "https://threads-cases.dev/schemas/"


@cache
def _documents() -> dict[str, Any]:
    """Every shipped schema document by file name relative to ``schemas/`` (our own files,
    read with orjson: the strict reader's checks are for the user's files)."""
    root = schemas_dir()
    return {
        path.relative_to(root).as_posix(): orjson.loads(path.read_bytes())
        for path in sorted(root.rglob("*.schema.json"))
    }


@cache
def _registry() -> Registry[Any]:
    from referencing import Registry, Resource

    resources = [(doc["$id"], Resource.from_contents(doc)) for doc in _documents().values()]
    return Registry().with_resources(resources)


def schema_document(name: str) -> dict[str, Any]:
    """The schema document ``schemas/<name>`` (for example ``"event.schema.json"``)."""
    doc: dict[str, Any] = _registry().contents(BASE + name)
    return doc


_END = re.compile(r"(?<!\\)\$$")


@cache
def _ecma_pattern(pattern: str) -> re.Pattern[str]:
    # ECMA-262 (what JSON Schema specifies) lets ``$`` match only at the end of the input;
    # Python's ``$`` also matches before a final newline, so "e0\n" would pass ^...$ here.
    return re.compile(_END.sub(r"\\Z", pattern))


def _pattern(validator: Any, pattern: str, instance: Any, schema: Any) -> Any:
    from jsonschema.exceptions import ValidationError

    if isinstance(instance, str) and not _ecma_pattern(pattern).search(instance):
        yield ValidationError(f"{instance!r} does not match {pattern!r}")


@cache
def _validator_class() -> Any:
    """Draft 2020-12 with ECMA-262 ``pattern`` (imports jsonschema on first use)."""
    from jsonschema import Draft202012Validator, validators

    return validators.extend(Draft202012Validator, {"pattern": _pattern})  # type: ignore[no-untyped-call]


@cache
def validator(name: str, definition: str | None = None) -> Any:
    """A validator for ``schemas/<name>``, or for its ``$defs/<definition>`` entry."""
    if definition is None:
        schema: dict[str, Any] = {"$ref": BASE + name}
    else:
        schema = {"$ref": f"{BASE}{name}#/$defs/{definition}"}
    return _validator_class()(schema, registry=_registry())


@cache
def _rs_registry() -> Any:
    return jsonschema_rs.Registry([(doc["$id"], doc) for doc in _documents().values()])


@cache
def fast_validator(name: str, definition: str | None = None) -> Any:
    """A jsonschema-rs validator with ``is_valid(value) -> bool`` for ``schemas/<name>`` or
    its ``$defs/<definition>`` entry."""
    ref = BASE + name if definition is None else f"{BASE}{name}#/$defs/{definition}"
    return jsonschema_rs.validator_for({"$ref": ref}, registry=_rs_registry())


class LazyValidator:
    """A validator compiled by ``compile_()`` on its first ``is_valid`` or ``iter_errors``
    call, which then puts the compiled validator's own methods in their place (no
    indirection after the first call). For a checker that may never need it."""

    def __init__(self, compile_: Callable[[], Any]) -> None:
        self._compile = compile_

    def _compiled(self) -> Any:
        check = self._compile()
        self.is_valid = check.is_valid  # type: ignore[method-assign]
        self.iter_errors = check.iter_errors  # type: ignore[method-assign]
        return check

    def is_valid(self, value: Any) -> bool:
        return bool(self._compiled().is_valid(value))

    def iter_errors(self, value: Any) -> Any:
        return self._compiled().iter_errors(value)


class _ByType(dict[str, Any]):
    """``{type: validator}`` of :func:`compiled_event_validators`, each compiled on its first
    lookup (``[type]``; an unknown type is a ``KeyError``); ``items()`` compiles them all."""

    def __init__(self, data_refs: dict[str, str], compile_: Callable[..., Any]) -> None:
        super().__init__()
        self._refs, self._compile = data_refs, compile_

    def __missing__(self, etype: str) -> Any:
        ref = self._refs[etype]  # KeyError: not a type of section 3.3
        check = self[etype] = self._compile(etype, {"$ref": f"{BASE}event.schema.json{ref}"})
        return check

    def items(self) -> Any:
        for etype in self._refs:
            self[etype]  # compiles it
        return super().items()


@cache
def _event_document() -> dict[str, Any]:
    """``schemas/event.schema.json`` alone (read once with orjson): the event validators need
    no other document (it has no ``$ref`` to another file; tests/test_import_fast_paths.py), so
    a process that checks events reads one file, not every shipped one."""
    doc: dict[str, Any] = orjson.loads((schemas_dir() / "event.schema.json").read_bytes())
    return doc


@cache
def _event_registry() -> Any:
    """A jsonschema-rs registry of :func:`_event_document` alone."""
    doc = _event_document()
    return jsonschema_rs.Registry([(doc["$id"], doc)])


@cache
def compiled_event_validators() -> tuple[dict[str, Any], Any]:
    """One jsonschema-rs validator per event type of section 3.3 of spec/thread-log.md for a
    canonical envelope, ``({type: validator}, extension)``: each holds the envelope schema, the
    schema of that type's data and :data:`~threads_cases.core.timestamps.CALENDAR_PATTERN` for
    ``ts``, so a valid event is told by one call; ``extension`` is the same for an ``x_`` type
    (the envelope and ``ts``). The types and their data schemas are read from the
    ``if``/``then`` pairs of ``event.schema.json``'s ``event.threads-py``, so a value is
    valid here exactly when :func:`fast_validator` of that definition and
    :func:`~threads_cases.core.timestamps.check_ts` accept it. Each validator is compiled on
    first use: look a type up with ``[type]`` (``KeyError`` for a type of no section)."""
    defs = _event_document()["$defs"]

    def compiled(etype: Any, data: dict[str, Any] | None) -> Any:
        # the envelope's own schema object with ts's pattern the whole rule, and for a type
        # of section 3.3 its type fixed (the dispatch already chose it) and its data's schema
        schema = dict(defs["envelope.threads-py"])
        props = schema["properties"] = dict(schema["properties"])
        props["ts"] = {**props["ts"], "pattern": CALENDAR_PATTERN}
        if data is not None:
            props["type"] = {"const": etype}
            props["data"] = {**props["data"], **data}  # both apply (2020-12)
        return jsonschema_rs.validator_for(schema, registry=_event_registry())

    refs = {}
    for part in defs["event.threads-py"]["allOf"]:
        if "if" in part:
            etype = part["if"]["properties"]["type"]["const"]
            refs[etype] = part["then"]["properties"]["data"]["$ref"]  # "#/$defs/data.<type>"
    return _ByType(refs, compiled), LazyValidator(lambda: compiled(None, None))


def schema_problems(
    value: Any, name: str, definition: str | None = None, *, prefix: str = ""
) -> list[tuple[str, str]]:
    """Every schema violation of ``value`` as ``(json_pointer, message)``, deepest first.

    ``prefix`` is prepended to each pointer (for a value nested in a larger document). A
    valid value is told by the jsonschema-rs validator (fast); only an invalid one is walked
    for its messages.
    """
    if fast_validator(name, definition).is_valid(value):
        return []
    out = []
    for err in validator(name, definition).iter_errors(value):
        leaf = _deepest(err)
        out.append((prefix + pointer_join(list(leaf.absolute_path)), _message(leaf)))
    return sorted(set(out))


def _deepest(err: Any) -> Any:
    """For oneOf/anyOf failures pick the sub-error deepest in the instance: the useful one."""
    best = err
    for sub in err.context or ():
        cand = _deepest(sub)
        if len(cand.absolute_path) > len(best.absolute_path):
            best = cand
    return best


def _message(err: Any) -> str:
    msg = str(err.message)
    if len(msg) > 200:
        msg = msg[:197] + "..."
    return msg
