"""The server process's garbage collector: tuned once, before the sessions start.

A restart recovers every unfinished session at once, and each leaves a few hundred objects
alive (its state, history, actor, tasks). With CPython's default thresholds (a young collection
every 700 allocations, promoted survivors rescanned every 10 of those) the collector then spent a
third of the event loop's time of a 1,000-session recovery rescanning what was still alive;
full collections also walked everything the imports and the app's compilation made, which lives
as long as the process.

So the server collects the young generation every 50,000 allocations (a few milliseconds each)
and, unless it reloads code (`eve dev`, whose old generations must stay collectable), freezes
what startup made: full collections skip it from then on.
"""

from __future__ import annotations

import gc

__all__ = ["YOUNG_THRESHOLD", "settle_heap"]

YOUNG_THRESHOLD = 50_000
"""Allocations (net of frees) between two collections of the youngest generation."""


def settle_heap(*, reload: bool) -> None:
    """Tune the collector for a server about to start its sessions (see the module docstring)."""
    _young, middle, old = gc.get_threshold()
    gc.set_threshold(YOUNG_THRESHOLD, max(middle, 20), old)
    if not reload:
        gc.freeze()  # no collection first: it would cost the restart more than the garbage it frees
