"""The one reader of a request's `Authorization` header, for `/eve/v1` and for channel routes alike.

A request carries at most one `Authorization` header (RFC 9110 §11.6.2: it is not a list). Two
or more are refused everywhere with 400 `duplicate_authorization`, never resolved by taking the
first or the last, since a proxy and the server could pick different ones. A bearer token is
compared in constant time (`hmac.compare_digest`), so the time a refusal takes does not tell how
much of a guess was right.
"""

from __future__ import annotations

import hmac
from collections.abc import Iterable
from dataclasses import dataclass

__all__ = ["DUPLICATE_AUTHORIZATION", "Credentials", "DuplicateAuthorization", "bearer_matches", "read_authorization"]

DUPLICATE_AUTHORIZATION = "The request has more than one Authorization header: send exactly one."


class DuplicateAuthorization(ValueError):
    """The request has more than one `Authorization` header (answered 400 `duplicate_authorization`)."""

    def __init__(self) -> None:
        super().__init__(DUPLICATE_AUTHORIZATION)


@dataclass(frozen=True)
class Credentials:
    """What the `Authorization` header says: `<scheme> <value>`."""

    scheme: str
    """Lowercased (`bearer`, `basic`, ...); the whole header when it has no space."""
    value: bytes
    """The credentials after the scheme, surrounding whitespace removed."""


def read_authorization(headers: Iterable[tuple[bytes, bytes]]) -> Credentials | None:
    """The request's `Authorization` header (raw ASGI header pairs), or None when it has none.

    Raises:
        DuplicateAuthorization: It has more than one.
    """
    values = [value for name, value in headers if name.lower() == b"authorization"]
    if not values:
        return None
    if len(values) > 1:
        raise DuplicateAuthorization
    scheme, _, value = values[0].strip().partition(b" ")
    return Credentials(scheme.decode("latin-1").lower(), value.strip())


def bearer_matches(credentials: Credentials | None, expected: bytes) -> bool:
    """Whether `credentials` are `Bearer <expected>`, compared in constant time."""
    if credentials is None or credentials.scheme != "bearer":
        return False
    return hmac.compare_digest(credentials.value, expected)
