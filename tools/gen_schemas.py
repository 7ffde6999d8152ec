"""Regenerate schemas/event.schema.json and schemas/state.schema.json.

The schemas are committed; this script is the single place their repetitive parts (one data
schema per event type, one envelope per dialect) are written from. Run it after changing a
type: ``python tools/gen_schemas.py``.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from threads_cases.core.canonical import canonical_document  # noqa: E402
from threads_cases.core.strictjson import read_json_file  # noqa: E402

BASE = "https://threads-cases.dev/schemas/"
HEX64 = {"type": "string", "pattern": "^[0-9a-f]{64}$"}
ID = {"type": "string", "pattern": "^[A-Za-z0-9._:-]{1,128}$"}
NONEMPTY = {"type": "string", "minLength": 1}
COUNT = {"type": "integer", "minimum": 0, "maximum": 9007199254740991}
ARTIFACT_ID = {"type": "string", "pattern": "^sha256:[0-9a-f]{64}$"}
SANDBOX_PATH = {
    "type": "string",
    "maxLength": 4096,
    "pattern": "^[^/\\\\\\x00-\\x1f]+(/[^/\\\\\\x00-\\x1f]+)*$",
    "not": {"pattern": "(^|/)\\.\\.?(/|$)"},
}

TYPES = [
    "thread_started",
    "user_message",
    "turn_started",
    "model_requested",
    "model_responded",
    "tool_called",
    "tool_result",
    "sandbox_read",
    "sandbox_wrote",
    "artifact_added",
    "snapshot_taken",
    "restored",
    "forked",
    "turn_completed",
    "turn_failed",
]


def obj(
    props: dict[str, Any], required: list[str] | None = None, extra: bool = False
) -> dict[str, Any]:
    out: dict[str, Any] = {
        "type": "object",
        "properties": props,
        "required": sorted(props) if required is None else required,
    }
    if not extra:
        out["additionalProperties"] = False
    return out


def ref(name: str) -> dict[str, str]:
    return {"$ref": f"#/$defs/{name}"}


def content() -> dict[str, Any]:
    return {"oneOf": [{"type": "string"}, {"type": "array", "items": ref("block")}]}


def event_schema() -> dict[str, Any]:
    defs: dict[str, Any] = {}
    defs["usage"] = obj({"input_tokens": COUNT, "output_tokens": COUNT}, extra=True)
    defs["tool"] = obj(
        {
            "name": NONEMPTY,
            "description": {"type": "string"},
            "input_schema": {"type": "object"},
            "kind": {"enum": ["sandbox", "external"]},
            "effect": {"enum": ["read", "write", "pure"]},
        }
    )
    defs["agent"] = obj(
        {
            "name": {"type": "string"},
            "model": {"type": "string"},
            "system": {"type": "string"},
            "tools": {"type": "array", "items": ref("tool")},
        }
    )
    defs["block"] = {
        "type": "object",
        "required": ["type"],
        "properties": {"type": NONEMPTY},
        "allOf": [
            {
                "if": {"properties": {"type": {"const": "text"}}},
                "then": {"required": ["text"], "properties": {"text": {"type": "string"}}},
            },
            {
                "if": {"properties": {"type": {"const": "tool_use"}}},
                "then": {
                    "required": ["id", "name", "input"],
                    "properties": {"id": NONEMPTY, "name": NONEMPTY, "input": {"type": "object"}},
                },
            },
            {
                "if": {"properties": {"type": {"const": "tool_result"}}},
                "then": {
                    "required": ["tool_use_id"],
                    "properties": {
                        "tool_use_id": NONEMPTY,
                        "content": content(),
                        "is_error": {"type": "boolean"},
                    },
                },
            },
            {
                "if": {"properties": {"type": {"const": "thinking"}}},
                "then": {"required": ["thinking"], "properties": {"thinking": {"type": "string"}}},
            },
            {
                "if": {"properties": {"type": {"const": "image"}}},
                "then": {"required": ["source"], "properties": {"source": {"type": "object"}}},
            },
        ],
    }
    data = {
        "thread_started": obj({"agent": ref("agent"), "metadata": {"type": "object"}}),
        "user_message": obj({"content": content()}),
        "turn_started": obj({"turn_id": NONEMPTY}),
        "model_requested": obj(
            {"turn_id": NONEMPTY, "model": {"type": "string"}, "request_sha256": HEX64}
        ),
        "model_responded": obj(
            {
                "turn_id": NONEMPTY,
                "message": obj(
                    {
                        "role": {"const": "assistant"},
                        "content": {"type": "array", "items": ref("block")},
                    }
                ),
                "stop_reason": NONEMPTY,
                "usage": ref("usage"),
            }
        ),
        "tool_called": obj(
            {
                "turn_id": NONEMPTY,
                "tool_use_id": NONEMPTY,
                "name": NONEMPTY,
                "input": {"type": "object"},
                "kind": {"enum": ["sandbox", "external"]},
                "effect": {"enum": ["read", "write", "pure"]},
            }
        ),
        "tool_result": obj(
            {
                "turn_id": NONEMPTY,
                "tool_use_id": NONEMPTY,
                "name": NONEMPTY,
                "content": content(),
                "is_error": {"type": "boolean"},
            }
        ),
        "sandbox_read": obj(
            {
                "path": SANDBOX_PATH,
                "sha256": HEX64,
                "size": COUNT,
                "artifact": {"oneOf": [ARTIFACT_ID, {"type": "null"}]},
            }
        ),
        "sandbox_wrote": obj(
            {
                "path": SANDBOX_PATH,
                "sha256": {"oneOf": [HEX64, {"type": "null"}]},
                "size": COUNT,
                "artifact": {"oneOf": [ARTIFACT_ID, {"type": "null"}]},
            }
        ),
        "artifact_added": obj({"artifact_id": ARTIFACT_ID, "media_type": NONEMPTY, "size": COUNT}),
        "snapshot_taken": obj({"snapshot_id": NONEMPTY}),
        "restored": obj({"snapshot_id": NONEMPTY}),
        "forked": obj({"from_event_id": ID, "branch_id": NONEMPTY}),
        "turn_completed": obj(
            {"turn_id": NONEMPTY, "stop_reason": NONEMPTY, "usage": ref("usage")}
        ),
        "turn_failed": obj(
            {"turn_id": NONEMPTY, "error": obj({"code": NONEMPTY, "message": {"type": "string"}})}
        ),
    }
    for name, schema in data.items():
        defs[f"data.{name}"] = schema
    type_schema = {
        "oneOf": [{"enum": TYPES}, {"type": "string", "pattern": "^x_[A-Za-z0-9_.:-]{1,120}$"}]
    }
    envelope_props = {
        "event_id": ID,
        "thread_id": NONEMPTY,
        "seq": COUNT,
        "type": type_schema,
        "actor_kind": {"enum": ["user", "model", "tool", "sandbox", "system"]},
        "epoch": COUNT,
        "branch_id": NONEMPTY,
        "critical": {"type": "boolean"},
        "ts": {
            "type": "string",
            "pattern": "^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}\\.[0-9]{3}Z$",
        },
        "data": {"type": "object"},
    }
    dialects = {}
    for path in sorted((ROOT / "spec" / "dialects").glob("*.json")):
        d = read_json_file(path)
        dialects[d["name"]] = d["envelope"]
    by_type = [
        {
            "if": {"properties": {"type": {"const": t}}, "required": ["type"]},
            "then": {"properties": {"data": ref(f"data.{t}")}},
        }
        for t in TYPES
    ]
    for name, renames in dialects.items():
        props = {renames.get(k, k): v for k, v in envelope_props.items()}
        defs[f"envelope.{name}"] = obj(props)
        defs[f"event.{name}"] = {"allOf": [ref(f"envelope.{name}"), *by_type]}
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "$id": BASE + "event.schema.json",
        "title": "threads-cases event envelope (thread log v1, spec/thread-log.md)",
        "description": "One line of a thread log in any dialect. $defs/event.<dialect> is one "
        "dialect's event; $defs/envelope.<dialect> its envelope alone; "
        "$defs/data.<type> the data of one event type.",
        "anyOf": [ref(f"event.{n}") for n in dialects],
        "$defs": defs,
    }


def state_schema() -> dict[str, Any]:
    ev = BASE + "event.schema.json#/$defs/"
    defs: dict[str, Any] = {}
    turn = obj(
        {
            "turn_id": NONEMPTY,
            "status": {"enum": ["completed", "failed"]},
            "stop_reason": {"type": ["string", "null"]},
            "error": {
                "oneOf": [{"type": "null"}, {"$ref": ev + "data.turn_failed/properties/error"}]
            },
        }
    )
    message = obj(
        {
            "role": {"enum": ["user", "assistant"]},
            "content": {
                "oneOf": [{"type": "string"}, {"type": "array", "items": {"$ref": ev + "block"}}]
            },
        }
    )
    props = {
        "thread_id": {"type": ["string", "null"]},
        "branch_id": NONEMPTY,
        "epoch": COUNT,
        "last_seq": {"oneOf": [COUNT, {"type": "null"}]},
        "last_event_id": {"oneOf": [ID, {"type": "null"}]},
        "status": {"enum": ["idle", "in_turn", "failed"]},
        "current_turn": {"type": ["string", "null"]},
        "turns": {"type": "array", "items": ref("turn")},
        "agent": {"oneOf": [{"type": "null"}, {"$ref": ev + "agent"}]},
        "messages": {"type": "array", "items": ref("message")},
        "pending_tool_calls": {"type": "array", "items": NONEMPTY},
        "sandbox": obj(
            {
                "files": {
                    "type": "object",
                    "additionalProperties": HEX64,
                    "propertyNames": SANDBOX_PATH,
                }
            }
        ),
        "artifacts": {
            "type": "object",
            "propertyNames": ARTIFACT_ID,
            "additionalProperties": obj({"media_type": NONEMPTY, "size": COUNT}),
        },
        "usage": obj({"input_tokens": COUNT, "output_tokens": COUNT}),
        "snapshots": {"type": "array", "items": NONEMPTY},
    }
    defs["turn"] = turn
    defs["message"] = message
    names = []
    for path in sorted((ROOT / "spec" / "dialects").glob("*.json")):
        d = read_json_file(path)
        names.append(d["name"])
        defs[f"state.{d['name']}"] = obj({d["state"].get(k, k): v for k, v in props.items()})
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "$id": BASE + "state.schema.json",
        "title": "threads-cases reduced state (spec/reducer.md)",
        "description": (
            "The state a thread log reduces to, in any dialect; "
            "$defs/state.<dialect> is one dialect's."
        ),
        "anyOf": [ref(f"state.{n}") for n in names],
        "$defs": defs,
    }


if __name__ == "__main__":
    (ROOT / "schemas" / "event.schema.json").write_bytes(canonical_document(event_schema()))
    (ROOT / "schemas" / "state.schema.json").write_bytes(canonical_document(state_schema()))
    print("wrote schemas/event.schema.json and schemas/state.schema.json")
