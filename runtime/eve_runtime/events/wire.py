"""Serializing stream events as NDJSON lines, exactly once, in the v26 envelope.

An event is `{"data", "type", "meta": {"at", "id", "deliveryIds"}}` (eve's key order). Lines are
UTF-8 JSON; a lone surrogate (which UTF-8 cannot carry) falls back to JSON escapes, and U+2028 /
U+2029 are always escaped so that no line splitter ever breaks an event in two.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Sequence
from datetime import UTC, datetime
from typing import Any

__all__ = ["dumps", "event_line", "now_iso"]

_SEPARATOR_ESCAPES = str.maketrans({"\u2028": "\\u2028", "\u2029": "\\u2029"})


_second = [-1, ""]  # the last second printed, and its text up to the seconds


def now_iso() -> str:
    """The current time as eve prints it: ISO 8601, milliseconds, `Z`.

    Every event is stamped, so the text of the current second is kept, and only the milliseconds
    are printed anew (datetime's own formatting cost a few percent of a step's CPU).
    """
    microseconds = time.time_ns() // 1000
    second, fraction = divmod(microseconds, 1_000_000)
    cached = _second
    if second != cached[0]:
        cached[0] = second
        cached[1] = datetime.fromtimestamp(second, UTC).strftime("%Y-%m-%dT%H:%M:%S.")
    return f"{cached[1]}{fraction // 1000:03d}Z"


_ENCODER = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"), allow_nan=False)
_make_encoder: Callable[..., Callable[[Any, int], list[str]]] | None = getattr(json.encoder, "c_make_encoder", None)
_encode_chunks = (  # json.dumps builds an encoder per call: made once, C's spells an event in about half the time
    _make_encoder(None, _ENCODER.default, json.encoder.encode_basestring, None, ":", ",", False, False, False)
    if _make_encoder is not None
    else None
)


def dumps(value: Any) -> str:
    """Compact JSON text, safe to put on one NDJSON line."""
    if _encode_chunks is not None and isinstance(value, dict):
        text = "".join(_encode_chunks(value, 0))
    else:
        text = _ENCODER.encode(value)
    return text.translate(_SEPARATOR_ESCAPES) if "\u2028" in text or "\u2029" in text else text


def event_line(event_type: str, data: dict[str, Any], *, event_id: str, at: str, delivery_ids: Sequence[str]) -> bytes:
    """One event as an NDJSON line (UTF-8, without the newline)."""
    meta: dict[str, Any] = {"at": at, "id": event_id}
    if delivery_ids:
        meta["deliveryIds"] = list(delivery_ids)
    text = dumps({"data": data, "type": event_type, "meta": meta})
    try:
        return text.encode("utf-8")
    except UnicodeEncodeError:  # a lone surrogate from a model or a tool: keep it, escaped
        envelope = {"data": data, "type": event_type, "meta": meta}
        return json.dumps(envelope, ensure_ascii=True, separators=(",", ":"), allow_nan=False).encode("ascii")
