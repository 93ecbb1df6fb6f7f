"""`define_channel`, the route helpers and `eve_channel`: what they accept and how they refuse mistakes."""

from __future__ import annotations

from typing import Any

import pytest
from starlette.datastructures import Headers

from eve_runtime import DefinitionError
from eve_runtime.authoring.channels import (
    GET,
    POST,
    Principal,
    allow_anonymous,
    bearer_token,
    define_channel,
    disable_channel,
    eve_channel,
)


def handler(request: Any, ctx: Any) -> None:
    return None


def test_routes_keep_their_paths_and_accept_eve_style_parameters() -> None:
    channel = define_channel(routes=[POST("/hooks/:thread/messages", handler), GET("/hooks/{thread}", handler)])
    assert [(r.method, r.path, r.display_path) for r in channel.routes] == [
        ("POST", "/hooks/{thread}/messages", "/hooks/:thread/messages"),
        ("GET", "/hooks/{thread}", "/hooks/:thread"),
    ]
    assert channel.turn_policy == "steer" and channel.auth is None


@pytest.mark.parametrize(
    "make",
    [
        lambda: POST("no-slash", handler),
        lambda: POST("/eve/v1/mine", handler),
        lambda: POST("/eve", handler),
        lambda: POST("/bad path", handler),
        lambda: POST("/x/{1bad}", handler),
        lambda: POST("/x", "not callable"),  # type: ignore[arg-type]
        lambda: define_channel(routes=[POST("/x", handler), POST("/x", handler)]),
        lambda: define_channel(routes=POST("/x", handler)),  # type: ignore[arg-type]
        lambda: define_channel(events={"message.done": handler}),
        lambda: define_channel(events={"message.completed": "nope"}),  # type: ignore[dict-item]
        lambda: define_channel(turn_policy="later"),  # type: ignore[arg-type]
        lambda: define_channel(auth="token"),  # type: ignore[arg-type]
        lambda: define_channel(auth=[42]),  # type: ignore[list-item]
        lambda: eve_channel(auth=None),  # type: ignore[arg-type]
    ],
)
def test_mistakes_are_definition_errors(make: Any) -> None:
    with pytest.raises(DefinitionError):
        make()


def test_eve_channel_and_disable_channel() -> None:
    chain = [bearer_token(token="t"), allow_anonymous()]
    assert eve_channel(auth=chain).auth == tuple(chain) and not eve_channel(auth=chain).disabled
    assert disable_channel().disabled


class _Request:
    def __init__(self, headers: dict[str, str] | list[tuple[bytes, bytes]]) -> None:
        raw = headers if isinstance(headers, list) else [(k.encode(), v.encode()) for k, v in headers.items()]
        self.headers = Headers(raw=raw)


def test_bearer_token_skips_without_a_bearer_and_refuses_a_wrong_one(monkeypatch: pytest.MonkeyPatch) -> None:
    from eve_runtime.authoring.channels import AuthError

    check = bearer_token()
    monkeypatch.delenv("EVE_AUTH_TOKEN", raising=False)
    assert check(_Request({"authorization": "Bearer x"})) is None  # no token configured: skip
    monkeypatch.setenv("EVE_AUTH_TOKEN", "right")
    assert check(_Request({})) is None
    assert check(_Request({"authorization": "Bearer right"})) == Principal("token", "service", "bearer")
    with pytest.raises(AuthError):
        check(_Request({"authorization": "Bearer wrong"}))
    with pytest.raises(AuthError):
        check(_Request({"authorization": "Basic right"}))
    for pair in (["Bearer right", "Bearer wrong"], ["Bearer wrong", "Bearer right"]):
        with pytest.raises(AuthError) as refused:
            check(_Request([(b"authorization", value.encode()) for value in pair]))
        assert (refused.value.status, refused.value.code) == (400, "duplicate_authorization")


def test_state_metadata_and_deliver_are_checked() -> None:
    channel = define_channel(state={"turns": 0}, metadata=lambda state: state, deliver=lambda payload, channel: None)
    assert channel.stateful and channel.initial_state() == {"turns": 0}
    assert channel.initial_state() is not channel.initial_state()  # a fresh copy per session
    assert define_channel(state=lambda: [1]).initial_state() == [1]
    assert not define_channel().stateful
    bad: list[dict[str, Any]] = [
        {"state": {"when": object()}},
        {"state": float("nan")},
        {"metadata": "topic"},
        {"deliver": 42},
    ]
    for options in bad:
        with pytest.raises(DefinitionError):
            define_channel(**options)
