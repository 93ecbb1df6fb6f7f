"""`define_state`: per-session values that persist across turns and restarts.

```python
from eve_runtime import define_state

visits = define_state("visits", lambda: 0)

def greet(name: str) -> str:
    \"\"\"Greet someone.\"\"\"
    count = visits.update(lambda n: n + 1)
    return f"Hello {name} (visit {count})"
```

A handle works only while eve runs a tool for a session: `get()` returns the session's value
(`initial()` on first access), `set()` and `update()` change it. Values are JSON and saved with
the step's checkpoint, so they outlive turns, restarts and a clear of the history; a subagent's
session starts from `initial()`. When a session moves to a new build of the app (a deployment
handoff), keys the new build does not define are dropped (and logged); define handles at module
level, where loading the app sees them. A crash between a tool's result and its step's checkpoint loses
that step's changes (the tool does not run again), like any effect that was not recorded.
"""

from __future__ import annotations

import contextlib
import contextvars
import json
import sys
import threading
import weakref
from collections.abc import Callable, Iterator, MutableMapping
from dataclasses import dataclass, field
from typing import Any, Generic, TypeVar

from eve_runtime.errors import DefinitionError, EveError

__all__ = ["SessionValues", "StateError", "StateHandle", "define_state", "defined_states", "session_values"]

T = TypeVar("T")


class StateError(EveError):
    """A state handle was used outside a session, or given a value that is not JSON."""


@dataclass
class SessionValues:
    """One session's state values while its tools run (shared by parallel calls, hence the lock)."""

    values: MutableMapping[str, Any]
    lock: threading.RLock = field(default_factory=threading.RLock)


_current: contextvars.ContextVar[SessionValues | None] = contextvars.ContextVar("eve_session_values", default=None)


@contextlib.contextmanager
def session_values(values: SessionValues) -> Iterator[None]:
    """Make `values` the state of the code run inside (the engine wraps every tool call)."""
    token = _current.set(values)
    try:
        yield
    finally:
        _current.reset(token)


def _checked(name: str, value: Any) -> Any:
    try:
        return json.loads(json.dumps(value, allow_nan=False))
    except (TypeError, ValueError) as exc:
        raise StateError(f"State {name!r} can only hold JSON values (got {type(value).__name__}): {exc}") from None


class StateHandle(Generic[T]):
    """A named per-session value (made by `define_state`)."""

    def __init__(self, name: str, initial: Callable[[], T], module: str = "") -> None:
        self.name = name
        self.module = module
        """The module that defined the handle (which build of the app it belongs to)."""
        self._initial = initial
        _handles.add(self)

    def _values(self) -> SessionValues:
        values = _current.get()
        if values is None:
            raise StateError(
                f"State {self.name!r} is only available while eve runs a tool for a session "
                "(not at import time, and not outside eve)."
            )
        return values

    def get(self) -> T:
        """The session's value (`initial()` the first time)."""
        values = self._values()
        with values.lock:
            if self.name not in values.values:
                values.values[self.name] = _checked(self.name, self._initial())
            value: T = values.values[self.name]
            return value

    def set(self, value: T) -> T:
        """Replace the session's value."""
        values = self._values()
        with values.lock:
            values.values[self.name] = _checked(self.name, value)
            return value

    def update(self, change: Callable[[T], T]) -> T:
        """Replace the value with `change(value)`, atomically with respect to parallel calls."""
        values = self._values()
        with values.lock:
            return self.set(change(self.get()))


_handles: weakref.WeakSet[StateHandle[Any]] = weakref.WeakSet()
"""Every handle alive, so a build of the app can tell which keys it defines."""


def define_state(name: str, initial: Callable[[], T]) -> StateHandle[T]:
    """Define a per-session value: `name` is its key in the session, `initial()` its first value."""
    if not isinstance(name, str) or not name.strip():
        raise DefinitionError("define_state(): 'name' must be a non-empty string", field="name")
    if not callable(initial):
        raise DefinitionError("define_state(): 'initial' must be a function returning the first value", field="initial")
    module = str(sys._getframe(1).f_globals.get("__name__", ""))
    return StateHandle(name, initial, module)


def defined_states() -> list[tuple[str, str]]:
    """`(key, defining module)` of every state handle alive."""
    return [(handle.name, handle.module) for handle in list(_handles)]
