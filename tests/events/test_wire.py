"""Event stamps and lines: eve's ISO 8601 with milliseconds and `Z`, one JSON object per line."""

from __future__ import annotations

import json
from datetime import UTC, datetime

import pytest

from eve_runtime.events import wire
from eve_runtime.events.wire import event_line, now_iso


def test_stamps_are_utc_with_milliseconds_and_follow_the_clock(monkeypatch: pytest.MonkeyPatch) -> None:
    now = datetime.now(UTC)
    stamp = now_iso()
    assert stamp.endswith("Z") and len(stamp) == len("2026-12-02T02:20:44.749Z")
    assert abs((datetime.fromisoformat(stamp.replace("Z", "+00:00")) - now).total_seconds()) < 1
    clock = [1_796_177_999_998_765_432]  # ns: 2026-12-02T02:19:59.998765432Z
    monkeypatch.setattr("eve_runtime.events.wire.time.time_ns", lambda: clock[0])
    assert now_iso() == "2026-12-02T02:19:59.998Z"
    clock[0] += 1_500_000  # into the next second: the kept text of the second changes with it
    assert now_iso() == "2026-12-02T02:20:00.000Z"
    clock[0] += 999_000_000
    assert now_iso() == "2026-12-02T02:20:00.999Z"


def test_a_line_is_the_envelope_in_eves_key_order() -> None:
    line = event_line("text.delta", {"delta": "a\u2028b"}, event_id="evt_1", at="t", delivery_ids=("d1",))
    assert b"\\u2028" in line
    assert list(json.loads(line)) == ["data", "type", "meta"]
    assert json.loads(line)["meta"] == {"at": "t", "id": "evt_1", "deliveryIds": ["d1"]}


@pytest.mark.parametrize(
    "value",
    [
        {"a": 1, "b": [1.5, None, True, -0.0, 10**30], "c": {"d": 'é \u2028 \u2029 \x00 "q" \\'}},
        {"lone": "x\ud800y", 1: "int key", None: "null key"},
        ["not", "an", {"object": 1}],
        "text",
    ],
)
def test_dumps_is_compact_json_with_line_separators_escaped(value: object) -> None:
    expected = json.dumps(value, ensure_ascii=False, separators=(",", ":"), allow_nan=False)
    assert wire.dumps(value) == expected.replace("\u2028", "\\u2028").replace("\u2029", "\\u2029")


def test_dumps_refuses_what_json_cannot_say() -> None:
    with pytest.raises(ValueError):
        wire.dumps({"x": float("nan")})
    with pytest.raises(TypeError):
        wire.dumps({"x": object()})
    assert wire.dumps({"after": "failures"}) == '{"after":"failures"}'
