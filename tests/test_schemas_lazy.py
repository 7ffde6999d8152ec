"""The schema validators are compiled on first use (issue 31: a fixed cost of every process
that checks events, and of every command's start-up)."""

from __future__ import annotations

import pytest

from threads_cases.core import schemas
from threads_cases.core.eventcheck import LogChecker


def test_event_validators_are_compiled_one_type_at_a_time(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    schemas.compiled_event_validators.cache_clear()
    compiled: list[object] = []
    real = schemas.jsonschema_rs.validator_for

    def counting(schema: object, **kw: object) -> object:
        compiled.append(schema)
        return real(schema, **kw)

    monkeypatch.setattr(schemas.jsonschema_rs, "validator_for", counting)
    by_type, extension = schemas.compiled_event_validators()
    checker = LogChecker()
    assert compiled == []  # nothing compiled by building them, nor by a checker
    ok = by_type["turn_started"]
    assert len(compiled) == 1 and by_type["turn_started"] is ok and len(compiled) == 1
    with pytest.raises(KeyError):
        by_type["no_such_type"]
    assert len(compiled) == 1
    assert not extension.is_valid({}) and len(compiled) == 2
    assert not extension.is_valid({}) and len(compiled) == 2  # compiled once
    assert len(dict(by_type.items())) == len(by_type._refs) >= 15  # items(): every type
    del checker
    schemas.compiled_event_validators.cache_clear()


def test_the_schema_documents_are_every_shipped_file() -> None:
    docs = schemas._documents()
    files = sorted(schemas.schemas_dir().rglob("*.schema.json"))
    assert len(docs) == len(files) > 30
    assert schemas.schema_document("event.schema.json") == docs["event.schema.json"]


def test_the_emitters_ts_form_is_the_schemas_ts_pattern() -> None:
    from threads_cases.importers.emitter import TS_FORM

    envelope = schemas.schema_document("event.schema.json")["$defs"]["envelope.threads-py"]
    assert envelope["properties"]["ts"]["pattern"] == f"^{TS_FORM.pattern}$"
