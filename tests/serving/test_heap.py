"""The server process tunes its garbage collector before its sessions start (`eve_runtime.serving.heap`)."""

from __future__ import annotations

import subprocess
import sys

from eve_runtime.serving.heap import YOUNG_THRESHOLD

_PROBE = """
import gc
from eve_runtime.serving.heap import settle_heap
settle_heap(reload={reload})
print(gc.get_threshold()[0], gc.get_freeze_count() > 0)
"""


def _settled(reload: bool) -> list[str]:
    # in a process of its own: freezing this one would change the heap every later test runs on
    done = subprocess.run([sys.executable, "-c", _PROBE.format(reload=reload)], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    return done.stdout.split()


def test_a_server_collects_the_young_generation_less_often_and_freezes_what_startup_made() -> None:
    assert _settled(reload=False) == [str(YOUNG_THRESHOLD), "True"]


def test_a_reloading_server_freezes_nothing_so_old_generations_stay_collectable() -> None:
    assert _settled(reload=True) == [str(YOUNG_THRESHOLD), "False"]
