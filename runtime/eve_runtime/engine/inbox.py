"""A session actor's inbox: the deliveries it took from the store and has not handled yet.

Deliveries are durable in the store's inbox before anyone hands them over; this is the actor's
working copy, in arrival order (by `seq`). Each delivery is taken once, however often it is
pushed. Some wait: answers that are stale while a turn is parked are *deferred* until the turn
ends, and what was accepted while the session was busy is *queued* on the build it runs (see
`eve_runtime.engine.handoff`). A change wakes whoever watches the running turn.

An inbox given the store's whole pending list before its actor loads (`take_current`: the enqueue
that woke the session read it) spares the actor reading it again, while nobody else may have added
to it since (`current`).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterable

from eve_runtime.store.base import DeliveryRecord

__all__ = ["Inbox"]


class Inbox:
    """The deliveries of one actor; see the module docstring."""

    def __init__(self) -> None:
        self._items: list[DeliveryRecord] = []
        self._seen: set[str] = set()
        self._deferred: set[str] = set()
        self._queued_through = -1
        self._changed = asyncio.Event()
        self.current = False
        """Holds what the store had pending when the session was woken: the actor need not read it (see
        `take_current`). Cleared when the actor takes its session's lease anew (see `SessionActor.hold_lease`)."""
        self.given = False
        """`take_current` filled it (the actor may never have read the store's list)."""

    def __bool__(self) -> bool:
        return bool(self._items)

    def __len__(self) -> int:
        return len(self._items)

    def push(self, delivery: DeliveryRecord, *, busy: bool) -> None:
        """Take a delivery handed over while the actor runs (once); `busy`: it is queued on this build."""
        if delivery.id in self._seen:
            return
        self._seen.add(delivery.id)
        self._items.append(delivery)
        if busy:
            self._queued_through = max(self._queued_through, delivery.seq)
        self.signal()

    def take_stored(self, deliveries: Iterable[DeliveryRecord]) -> None:
        """Take the store's pending deliveries (those not taken yet), in arrival order."""
        for delivery in deliveries:
            if delivery.id not in self._seen:
                self._seen.add(delivery.id)
                self._items.append(delivery)
        self._items.sort(key=lambda d: d.seq)

    def take_current(self, pending: Iterable[DeliveryRecord]) -> None:
        """Take the store's whole pending list, read when the delivery that woke the session was accepted."""
        self.take_stored(pending)
        self.current = self.given = True

    def first(self) -> DeliveryRecord | None:
        """The oldest delivery, without taking it."""
        return self._items[0] if self._items else None

    def take_next(self) -> DeliveryRecord | None:
        """Take the oldest delivery that is not deferred."""
        for index, delivery in enumerate(self._items):
            if delivery.id not in self._deferred:
                return self._items.pop(index)
        return None

    def take(self, delivery_id: str) -> DeliveryRecord | None:
        """Take one delivery by its id, if it waits here (a recovered turn's)."""
        for index, delivery in enumerate(self._items):
            if delivery.id == delivery_id:
                return self._items.pop(index)
        return None

    def defer(self, delivery: DeliveryRecord) -> None:
        """Put a delivery back to wait for the parked turn's end."""
        self._deferred.add(delivery.id)
        self._items.append(delivery)
        self._items.sort(key=lambda d: d.seq)

    def deferred(self, delivery: DeliveryRecord) -> bool:
        return delivery.id in self._deferred

    def release_deferred(self) -> None:
        """The turn ended: deferred deliveries are handled like any other now."""
        self._deferred.clear()

    def queue_all(self) -> None:
        """What waits now is handled on the build the session runs (it is busy)."""
        if self._items:
            self._queued_through = max(self._queued_through, self._items[-1].seq)

    def queued(self, delivery: DeliveryRecord) -> bool:
        """Whether the delivery was accepted while the session was busy."""
        return delivery.seq <= self._queued_through

    def route(self, take: Callable[[DeliveryRecord], bool]) -> None:
        """Offer each delivery that is not deferred to `take`; those it takes leave the inbox."""
        self._items = [d for d in self._items if d.id in self._deferred or not take(d)]

    def give_back(self, deliveries: Iterable[DeliveryRecord]) -> None:
        """Deliveries a turn took but did not use come back, in arrival order."""
        self._items = sorted([*deliveries, *self._items], key=lambda d: d.seq)

    def seen(self) -> frozenset[str]:
        """Every delivery taken into the inbox (handled, deferred or waiting)."""
        return frozenset(self._seen)

    def signal(self) -> None:
        """Something changed that the running turn's watcher must look at."""
        self._changed.set()

    def watch(self) -> asyncio.Task[bool]:
        """A task that ends at the next change (from now on)."""
        self._changed.clear()
        return asyncio.create_task(self._changed.wait())
