"""The component schemas of the OpenAPI document: every request and response body of `/eve/v1`.

The request schemas are exactly as strict as `server/bodies.py` (a body they reject, the server
rejects); the response schemas are what the routes of `server/app.py` answer. `openapi.py`
refers to them by name with `ref()`.
"""

from __future__ import annotations

from typing import Any

from eve_runtime.server.bodies import MAX_ID_LENGTH

__all__ = ["JSON", "component_schemas", "dev_build_schema", "dev_schedule_schema", "dev_sessions_schema", "ref"]

JSON = dict[str, Any]

_REF = "#/components/schemas/"
_ID_STRING: JSON = {"type": "string", "minLength": 1, "maxLength": MAX_ID_LENGTH, "pattern": "^[^\\x00-\\x1f\\x7f]+$"}
_SESSION_ID: JSON = {"type": "string", "pattern": "^wrun_[0-9A-HJKMNP-TV-Z]{26}$"}
_FORBIDDEN_ON_EVERY_BODY = ["continuationToken"]


def ref(name: str) -> JSON:
    """A `$ref` to the component schema `name`."""
    return {"$ref": _REF + name}


def _none_of(*keys: str) -> JSON:
    return {"not": {"anyOf": [{"required": [key]} for key in keys]}}


def component_schemas() -> JSON:
    """The schemas every mode serves, by name (`components.schemas`)."""
    text_part = {
        "type": "object",
        "required": ["type", "text"],
        "properties": {"type": {"const": "text"}, "text": {"type": "string", "minLength": 1}},
    }
    turn_fields = {
        "clientContext": {
            "description": "Turn-scoped context for the model (not persisted): each entry becomes a user message.",
            "oneOf": [
                {"type": "string"},
                {"type": "array", "items": {"type": "string", "minLength": 1}},
                {"type": "object"},
            ],
        },
        "outputSchema": {"type": "object", "description": "A JSON Schema the turn's result must match."},
        "turnPolicy": {"enum": ["steer", "queue"], "description": "Steer the running turn (default) or queue."},
        "idempotencyKey": {**_ID_STRING, "description": "A retried send with the same key starts nothing new."},
    }
    source = {
        "type": "string",
        "minLength": 1,
        "description": "base64, a data: URL, or an http(s) URL to a public host (handed to the model, never fetched).",
    }
    file_part = {
        "type": "object",
        "required": ["type", "data", "mediaType"],
        "properties": {
            "type": {"const": "file"},
            "data": source,
            "mediaType": {"type": "string", "minLength": 3},
            "filename": {"type": "string", "minLength": 1},
        },
    }
    image_part = {
        "type": "object",
        "required": ["type", "image"],
        "properties": {"type": {"const": "image"}, "image": source, "mediaType": {"type": "string", "minLength": 3}},
    }
    message = {
        "description": "The user's message: text, or an array of text, file and image parts.",
        "oneOf": [
            {"type": "string", "minLength": 1},
            {
                "type": "array",
                "minItems": 1,
                "items": {"oneOf": [ref("TextPart"), ref("FilePart"), ref("ImagePart")]},
            },
        ],
    }
    input_response = {
        "type": "object",
        "required": ["requestId"],
        "properties": {"requestId": _ID_STRING, "optionId": {"type": "string"}, "text": {"type": "string"}},
    }
    ok = {"const": True}
    return {
        "Error": {
            "type": "object",
            "required": ["ok", "error"],
            "properties": {
                "ok": {"const": False},
                "error": {"type": "string"},
                "code": {"type": "string"},
                "errorId": {"type": "string"},
            },
        },
        "TextPart": text_part,
        "FilePart": file_part,
        "ImagePart": image_part,
        "InputResponse": input_response,
        "CreateSession": {
            "type": "object",
            "properties": {
                "message": message,
                **turn_fields,
                "mode": {
                    "type": "string",
                    "description": "`task`: no person answers prompts (budgets fail the turn); else a conversation.",
                },
                "operationId": {**_ID_STRING, "description": "Create-once key: a repeat returns the same session."},
            },
            "dependentRequired": {"clientContext": ["message"], "outputSchema": ["message"]},
            **_none_of(*_FORBIDDEN_ON_EVERY_BODY, "inputResponses", "callback", "forwardedPrincipal", "forwardedAuth"),
        },
        "SendToSession": {
            "type": "object",
            "properties": {
                "message": message,
                "inputResponses": {"type": "array", "minItems": 1, "items": ref("InputResponse")},
                **turn_fields,
            },
            "oneOf": [{"required": ["message"]}, {"required": ["inputResponses"]}],
            **_none_of(*_FORBIDDEN_ON_EVERY_BODY),
        },
        "Cancel": {
            "type": "object",
            "properties": {"turnId": {**_ID_STRING, "description": "Cancel only if this turn is running."}},
            **_none_of(*_FORBIDDEN_ON_EVERY_BODY),
        },
        "Reset": {
            "type": "object",
            "properties": {"reason": {"type": "string", "minLength": 1}},
            **_none_of(*_FORBIDDEN_ON_EVERY_BODY),
        },
        "Control": {"type": "object", **_none_of(*_FORBIDDEN_ON_EVERY_BODY)},
        "Health": {
            "type": "object",
            "required": ["ok", "status", "workflowId"],
            "properties": {"ok": ok, "status": {"const": "ready"}, "workflowId": {"type": "string"}},
        },
        "HealthDegraded": {
            "type": "object",
            "required": ["ok", "status", "code", "reason", "workflowId"],
            "properties": {
                "ok": {"const": False},
                "status": {"const": "degraded"},
                "code": {"const": "store_unavailable"},
                "reason": {"type": "string"},
                "workflowId": {"type": "string"},
            },
        },
        "AgentInfo": {
            "type": "object",
            "required": ["kind", "version", "mode"],
            "properties": {
                "kind": {"const": "eve-agent-info"},
                "version": {"type": "integer"},
                "mode": {"enum": ["development", "production"]},
            },
        },
        "Accepted": {
            "type": "object",
            "required": ["ok", "sessionId", "status"],
            "properties": {"ok": ok, "sessionId": _SESSION_ID, "status": {"const": "accepted"}},
        },
        "DeliveryAccepted": {
            "type": "object",
            "required": ["ok", "sessionId", "status", "deliveryId"],
            "properties": {
                "ok": ok,
                "sessionId": _SESSION_ID,
                "status": {"const": "accepted"},
                "deliveryId": {"type": "string"},
            },
        },
        "ConnectionToken": {
            "type": "object",
            "required": ["token"],
            "properties": {
                key: {"type": "string", "minLength": 1, "maxLength": 16384}
                for key in ("token", "sessionId", "requestId", "principalId")
            },
            "dependentRequired": {"sessionId": ["requestId"], "requestId": ["sessionId"]},
        },
        "TokenAccepted": {
            "type": "object",
            "required": ["ok", "connection"],
            "properties": {"ok": ok, "connection": {"type": "string"}, "deliveryId": {"type": "string"}},
        },
        "SignInDone": {
            "type": "object",
            "required": ["ok", "connection", "outcome", "resumed"],
            "properties": {
                "ok": ok,
                "connection": {"type": "string"},
                "outcome": {"enum": ["authorized", "declined"]},
                "resumed": {"type": "integer", "minimum": 0},
                "reason": {"type": "string"},
            },
        },
        "NoActiveTurn": _status_only("no_active_turn"),
        "NoActiveSession": _status_only("no_active_session"),
        "ResetDone": {
            "type": "object",
            "required": ["ok", "previousSessionId", "status"],
            "properties": {"ok": ok, "previousSessionId": _SESSION_ID, "status": {"const": "reset"}},
        },
    }


def _status_only(status: str) -> JSON:
    return {
        "type": "object",
        "required": ["ok", "status"],
        "properties": {"ok": {"const": True}, "status": {"const": status}},
        "not": {"required": ["sessionId"]},
    }


def dev_sessions_schema() -> JSON:
    """The body of `GET /eve/v1/dev/sessions` (`eve dev` only)."""
    session = {
        "type": "object",
        "required": ["sessionId", "status", "state", "createdAt", "agent", "preview"],
        "properties": {
            "sessionId": _SESSION_ID,
            "status": {"enum": ["active", "completed", "failed", "reset"], "description": "As stored."},
            "state": {
                "enum": ["running", "waiting-for-input", "idle", "dormant", "stranded", "ended"],
                "description": "What the session does now (dormant: of an earlier eve dev run without --resume).",
            },
            "createdAt": {"type": "string", "format": "date-time"},
            "agent": {"type": "string"},
            "preview": {"type": "string", "description": "The first message, on one line, cut at 80 characters."},
        },
    }
    return {
        "type": "object",
        "required": ["ok", "sessions"],
        "properties": {"ok": {"const": True}, "sessions": {"type": "array", "items": session}},
    }


def dev_build_schema() -> JSON:
    """The body of `GET /eve/v1/dev/build` (`eve dev` only)."""
    return {
        "type": "object",
        "required": ["ok", "generation", "rebuilds", "status", "diagnostics"],
        "properties": {
            "ok": {"const": True},
            "generation": {"type": "integer", "description": "The generation serving new turns."},
            "rebuilds": {"type": "integer", "description": "Rebuilds since the server started, failed ones included."},
            "status": {"enum": ["ready", "failed"], "description": "How the newest rebuild went."},
            "diagnostics": {"type": "array", "items": {"type": "object"}, "description": "A failed build's."},
            "serving": {
                "type": "boolean",
                "description": "false while no build of this eve dev compiled (the agent was broken from the start).",
            },
        },
    }


def dev_schedule_schema() -> JSON:
    """The body of `POST /eve/v1/dev/schedules/{scheduleId}` (`eve dev` only)."""
    return {
        "type": "object",
        "required": ["ok", "scheduleId", "sessionIds"],
        "properties": {
            "ok": {"const": True},
            "scheduleId": {"type": "string"},
            "sessionIds": {"type": "array", "items": _SESSION_ID, "description": "The sessions the fire reached."},
        },
    }
