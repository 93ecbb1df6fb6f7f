"""Named crash points for the crash tests: a real `kill -9` of this process at a chosen moment.

`EVE_TEST_CRASHPOINT=<name>[:<n>]` makes the n-th time (default the first) the process passes
`crashpoint(name)` send itself SIGKILL: no `finally`, no flush, exactly like an external kill.
Unset (always, outside tests), a crash point costs one dictionary lookup.
"""

from __future__ import annotations

import os
import signal
import sys

__all__ = ["CRASHPOINTS", "armed", "crashpoint"]

CRASHPOINTS = (
    "after-enqueue",
    "after-turn-start",
    "after-turn-opened",
    "during-model-call",
    "after-actions-requested",
    "after-input-requested",
    "after-tool-effect",
    "before-checkpoint",
    "before-turn-end",
    "during-compaction",
)
"""Every name the engine and server pass (see the crash harness in tests/crash/)."""


def _parse(setting: str | None) -> tuple[str, int] | None:
    if not setting:
        return None
    name, _, nth = setting.partition(":")
    return name, int(nth) if nth.isdigit() and int(nth) > 0 else 1


_TARGET = _parse(os.environ.get("EVE_TEST_CRASHPOINT"))
_counts: dict[str, int] = {}


def armed(name: str) -> bool:
    """Whether `EVE_TEST_CRASHPOINT` names this point (to bring about the moment it stands for first)."""
    return _TARGET is not None and _TARGET[0] == name


def crashpoint(name: str) -> None:
    """Die here (SIGKILL) when `EVE_TEST_CRASHPOINT` names this point and its count is reached."""
    if _TARGET is None or _TARGET[0] != name:
        return
    count = _counts.get(name, 0) + 1
    _counts[name] = count
    if count == _TARGET[1]:
        sys.stdout.flush()
        os.kill(os.getpid(), signal.SIGKILL)
