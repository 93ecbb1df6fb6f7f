"""The one `Authorization` parser (`eve_runtime.authoring.authorization`) of `/eve/v1` and channel routes."""

from __future__ import annotations

import hmac

import pytest

from eve_runtime.authoring.authorization import (
    Credentials,
    DuplicateAuthorization,
    bearer_matches,
    read_authorization,
)


@pytest.mark.parametrize(
    ("headers", "expected"),
    [
        ([], None),
        ([(b"host", b"x"), (b"x-authorization", b"Bearer t")], None),
        ([(b"authorization", b"Bearer t0k")], Credentials("bearer", b"t0k")),
        ([(b"Authorization", b"  BEARER   t0k \t")], Credentials("bearer", b"t0k")),
        ([(b"authorization", b"Basic dXNlcjpwdw==")], Credentials("basic", b"dXNlcjpwdw==")),
        ([(b"authorization", b"t0k")], Credentials("t0k", b"")),
        ([(b"authorization", b"")], Credentials("", b"")),
        ([(b"authorization", b"Bearer \xe9")], Credentials("bearer", b"\xe9")),
    ],
    ids=["none", "other headers", "bearer", "case and spaces", "basic", "no scheme", "empty", "latin-1"],
)
def test_one_header_is_read(headers: list[tuple[bytes, bytes]], expected: Credentials | None) -> None:
    assert read_authorization(headers) == expected


@pytest.mark.parametrize(
    "headers",
    [
        [(b"authorization", b"Bearer a"), (b"authorization", b"Bearer b")],
        [(b"authorization", b"Bearer a"), (b"Authorization", b"Bearer a")],
        [(b"authorization", b""), (b"host", b"x"), (b"authorization", b"")],
    ],
    ids=["different", "the same, other case", "empty ones"],
)
def test_two_headers_are_refused(headers: list[tuple[bytes, bytes]]) -> None:
    with pytest.raises(DuplicateAuthorization, match="more than one Authorization header"):
        read_authorization(headers)


def test_bearer_matches() -> None:
    assert bearer_matches(Credentials("bearer", b"s3cret"), b"s3cret")
    assert not bearer_matches(None, b"s3cret")
    assert not bearer_matches(Credentials("basic", b"s3cret"), b"s3cret")
    assert not bearer_matches(Credentials("bearer", b"s3cre"), b"s3cret")
    assert not bearer_matches(Credentials("bearer", b"s3cret "), b"s3cret")
    assert not bearer_matches(Credentials("bearer", b""), b"s3cret")


def test_tokens_are_compared_in_constant_time(monkeypatch: pytest.MonkeyPatch) -> None:
    """The comparison is `hmac.compare_digest`'s, never `==` (which stops at the first difference)."""
    compared: list[tuple[bytes, bytes]] = []
    compare = hmac.compare_digest

    def spy(a: bytes, b: bytes) -> bool:
        compared.append((a, b))
        return compare(a, b)

    monkeypatch.setattr(hmac, "compare_digest", spy)  # the module the parser calls through
    assert bearer_matches(Credentials("bearer", b"guess"), b"s3cret") is False
    assert bearer_matches(Credentials("bearer", b"s3cret"), b"s3cret") is True
    assert compared == [(b"guess", b"s3cret"), (b"s3cret", b"s3cret")]
