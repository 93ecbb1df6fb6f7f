"""Secret redaction: the one place that knows which values are secret and masks them.

A secret is the value (at least `MIN_SECRET_LENGTH` characters, so that `DEBUG=1` masks
nothing) of

- an environment variable whose name holds `KEY`, `TOKEN`, `SECRET`, `PASSWORD` (or `PASSWD`,
  `CREDENTIAL`), such as `EVE_AUTH_TOKEN` and the provider keys (`OPENAI_API_KEY`, ...), except
  names that say they hold a location (`..._DIR`, `..._PATH`, `..._FILE`, `..._SOCK`);
- the password of a URL in the environment (`EVE_DATABASE_URL=postgresql://eve:PASSWORD@...`);
- a value registered with [`Redactor.add`][eve_runtime.redaction.Redactor.add]: the compiler
  registers the secret-looking entries of `model_options` (`api_key`, `token`, `secret`,
  `password`, `authorization`, ...).

Each occurrence becomes `MASK` (`[redacted]`). The runtime masks at a few choke points: the
emitter's write (every event, history entry and checkpoint before the store, and so before the
stream and hooks), a tool's outcome (before the model reads it), the compiler's artifact
writer (`.eve/compile/manifest.json`, ...), the info builders (`eve info`, `GET /eve/v1/info`)
and the log records (`install_log_redaction`). The values themselves stay where they are
needed: `model_options` still reach the provider unmasked at call time.
"""

from __future__ import annotations

import json
import logging
import os
import re
from collections.abc import Mapping
from typing import Any, TypeVar

__all__ = [
    "MASK",
    "MIN_SECRET_LENGTH",
    "REDACTOR",
    "RedactingFilter",
    "Redactor",
    "install_log_redaction",
    "is_secret_name",
    "is_secret_option",
]

T = TypeVar("T")

MASK = "[redacted]"
MIN_SECRET_LENGTH = 8
_MASK_BYTES = MASK.encode()

_SECRET_NAME = re.compile(r"KEY|TOKEN|SECRET|PASSWORD|PASSWD|CREDENTIAL", re.IGNORECASE)
_LOCATION_NAME = re.compile(r"_(DIR|PATH|FILE|SOCK|URL_PATH)$", re.IGNORECASE)
_URL_PASSWORD = re.compile(r"://[^/:@\s]*:([^/@\s]+)@")
"""The password of a URL such as `postgresql://user:password@host/db` (`EVE_DATABASE_URL`)."""
_SECRET_OPTION = re.compile(
    r"api[_-]?key|access[_-]?key|private[_-]?key|token|secret|password|passwd|authori[sz]ation|credential|cookie",
    re.IGNORECASE,
)


def is_secret_name(name: str) -> bool:
    """Whether an environment variable's name says it holds a secret."""
    return bool(_SECRET_NAME.search(name)) and not _LOCATION_NAME.search(name)


def is_secret_option(key: str) -> bool:
    """Whether a `model_options` key (or a header name) looks like it holds a secret."""
    return bool(_SECRET_OPTION.search(key))


def _forms(secret: str) -> set[str]:
    """The secret as text, and as it appears inside JSON strings (escaped, ASCII or not)."""
    return {secret, json.dumps(secret)[1:-1], json.dumps(secret, ensure_ascii=False)[1:-1]}


class Redactor:
    """The secrets of this process, and the masking of text and JSON data that may hold them.

    The environment is read once and again whenever its size changes; `refresh()` re-reads it
    (the servers call it at start, after `.env` files are loaded).
    """

    def __init__(self, environ: Mapping[str, str] | None = None) -> None:
        self._environ = environ if environ is not None else os.environ
        self._extra: set[str] = set()
        self._seen_size = -1
        self._secrets: tuple[str, ...] = ()
        self._patterns: tuple[str, ...] = ()
        self._encoded: tuple[bytes, ...] = ()

    def add(self, value: object) -> None:
        """Treat `value` as a secret from now on (ignored unless a string of the minimum length)."""
        if isinstance(value, str) and len(value) >= MIN_SECRET_LENGTH and value not in self._extra:
            self._extra.add(value)
            self._seen_size = -1

    def refresh(self) -> None:
        """Read the environment again."""
        self._seen_size = -1

    def secrets(self) -> tuple[str, ...]:
        """The secret values, longest first."""
        self._update()
        return self._secrets

    def _update(self) -> None:
        size = len(self._environ)
        if size == self._seen_size:
            return
        found = {v for k, v in self._environ.items() if is_secret_name(k) and len(v) >= MIN_SECRET_LENGTH}
        found |= {m for v in self._environ.values() for m in _URL_PASSWORD.findall(v) if len(m) >= MIN_SECRET_LENGTH}
        found |= self._extra
        secrets = sorted(found, key=lambda s: (-len(s), s))
        self._secrets = tuple(secrets)
        patterns: set[str] = set()
        for secret in secrets:
            patterns |= _forms(secret)
        self._patterns = tuple(sorted(patterns, key=lambda s: (-len(s), s)))
        self._encoded = tuple(p.encode() for p in self._patterns)
        self._seen_size = size

    def text(self, text: str) -> str:
        """`text` with every secret (in plain or JSON-escaped form) masked."""
        self._update()
        for pattern in self._patterns:
            if pattern in text:
                text = text.replace(pattern, MASK)
        return text

    def data(self, data: bytes) -> bytes:
        """UTF-8 text (an event's JSON line) with every secret masked."""
        self._update()
        for pattern in self._encoded:
            if pattern in data:
                data = data.replace(pattern, _MASK_BYTES)
        return data

    def value(self, value: T) -> T:
        """JSON data with every secret inside its strings (keys too) masked; the same object when none is."""
        self._update()
        if not self._patterns:
            return value
        masked: T = self._value(value)
        return masked

    def _value(self, value: Any) -> Any:
        if isinstance(value, str):
            return self.text(value)
        if isinstance(value, dict):
            return {self.text(k) if isinstance(k, str) else k: self._value(v) for k, v in value.items()}
        if isinstance(value, (list, tuple)):
            return [self._value(v) for v in value]
        return value

    def options(self, options: Mapping[str, Any]) -> dict[str, Any]:
        """Model options as they may be shown or stored: secret-looking entries masked at any depth."""
        return {k: self._option(k, v) for k, v in options.items()}

    def _option(self, key: str, value: Any) -> Any:
        if is_secret_option(key) and isinstance(value, (str, int, float)) and not isinstance(value, bool):
            return MASK
        if isinstance(value, Mapping):
            return {k: self._option(str(k), v) for k, v in value.items()}
        if isinstance(value, (list, tuple)):
            return [self._option(key, v) for v in value]
        return self.value(value)

    def remember_options(self, options: Mapping[str, Any]) -> None:
        """Register the values of secret-looking option entries (at any depth) as secrets."""
        for key, value in options.items():
            if isinstance(value, Mapping):
                self.remember_options({str(k): v for k, v in value.items()})
            elif is_secret_option(key):
                for item in value if isinstance(value, (list, tuple)) else [value]:
                    self.add(item)


REDACTOR = Redactor()
"""The process's redactor: the environment of this process plus the registered values."""


class RedactingFilter(logging.Filter):
    """Masks secrets in a log record: its message (arguments merged in), its traceback and stack."""

    def __init__(self, redactor: Redactor = REDACTOR) -> None:
        super().__init__()
        self.redactor = redactor

    def filter(self, record: logging.LogRecord) -> bool:
        redactor = self.redactor
        if not redactor.secrets():
            return True
        try:
            message = record.getMessage()
        except Exception:  # a bad format string: the handler reports it as usual
            return True
        record.msg, record.args = redactor.text(message), ()
        if record.exc_info and not record.exc_text:
            record.exc_text = logging.Formatter().formatException(record.exc_info)
        if record.exc_text:
            record.exc_text = redactor.text(record.exc_text)
        if record.stack_info:
            record.stack_info = redactor.text(record.stack_info)
        return True


def install_log_redaction(redactor: Redactor = REDACTOR) -> None:
    """Mask secrets in every log record of this process, whichever handler writes it.

    The filter runs as each record is made (it wraps the log record factory), so handlers added
    later (a file log, a test's capture) see masked records too. Calling it again changes nothing.
    """
    current = logging.getLogRecordFactory()
    if getattr(current, "_eve_redacting", False):
        return
    masking = RedactingFilter(redactor)

    def factory(*args: Any, **kwargs: Any) -> logging.LogRecord:
        record = current(*args, **kwargs)
        masking.filter(record)
        return record

    factory._eve_redacting = True  # type: ignore[attr-defined]
    logging.setLogRecordFactory(factory)
