"""The event emitter of one session: numbering, coalescing and durable writing of its events.

Only a session's actor emits its events, so the emitter owns the next index without locks.
`emit` is synchronous and cheap: the event joins a pending list and a background write makes it
durable shortly after (waiting `linger` seconds first, so a fast model's whole step usually goes
in one transaction). While a write is in flight, adjacent text deltas of the same kind and
coordinates merge into one event (the concatenated text is unchanged), so a fast model never
outruns the store. Streamed deltas do not linger while someone reads the session's stream
(`Store.watched`): the first of a burst is written at once (the reader sees the first token
without delay), later ones at most every `delta_interval` seconds, merged meanwhile (a provider
streaming a token every few milliseconds then costs 20 writes a second, not hundreds: each write,
with the stream's read of it, costs about 1 ms of CPU). With nobody reading, a delta lingers like
any other event, since a sooner write would help no one: a fast model's step then costs one
transaction, not two. `hurry` ends a linger early: a step about to wait on a provider's network
call writes what it emitted so far meanwhile, instead of after the provider's client took the loop.
`settle` waits for a delta due now to be durable: a model call awaits it after its first output,
so that the first token of a watched stream is written and streamed before the provider's client
parses on (litellm parses a burst of buffered chunks without giving the loop, or the GIL, away).

State changes ride with events. `attach` queues history, consumed deliveries and a checkpoint
for the next write, which also carries every event emitted before them: they become durable
together, in one transaction, or not at all. The checkpoint records how many events it covers
(those emitted before it was attached), so recovery knows which later events belong to an
attempt that never reached its next checkpoint. `commit` writes everything pending now and
waits for it.

A `tap` (the session's telemetry recorder, when spans are on) sees each event as it is emitted.
An `observer` (the runtime's hook dispatcher) is told about every batch once it is durable; it
is never told about events read back from the store.

Every write is masked first (`eve_runtime.redaction`): a secret in an event, a history entry or
a checkpoint never reaches the store, so neither the stream nor a hook ever sees it.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable, Sequence
from typing import Any

from eve_runtime.engine.emitter_batch import Attachment, PendingEvent
from eve_runtime.events.catalog import DELTA_FIELDS, StreamEvent
from eve_runtime.events.wire import event_line, now_iso
from eve_runtime.ids import new_event_id
from eve_runtime.redaction import REDACTOR
from eve_runtime.store.base import Commit, EventRow, SessionHandoff, SessionStatus, Store

__all__ = ["DELTA_INTERVAL", "CheckpointFactory", "Emitter", "Observer"]

DELTA_INTERVAL = 0.05
"""Seconds between two background writes that carry streamed deltas (see the module docstring).

50 ms (20 updates a second) reads as smooth text; at 20 ms a paced 500-word reply cost the eve
process about 0.15 s more CPU (`bench/provider_stream.py`)."""

Observer = Callable[[Sequence[EventRow]], None]
"""Told about the events of each durable write, in order (hooks run from here)."""

CheckpointFactory = Callable[[int], str]
"""Given the number of events the checkpoint covers, the checkpoint document (called at once)."""


class Emitter:
    """Writes one session's events in order; see the module docstring."""

    def __init__(
        self,
        store: Store,
        session_id: str,
        next_index: int,
        *,
        linger: float = 0.0,
        delta_interval: float = DELTA_INTERVAL,
    ) -> None:
        self.store = store
        self.session_id = session_id
        self._next_index = next_index
        self._next_unassigned = next_index
        """The index the first pending event will get (writes in flight already took theirs)."""
        self.linger = linger
        self.delta_interval = delta_interval
        self._delta_written = -delta_interval
        """When (event loop time) the last background write carrying a delta started."""
        self.delivery_ids: tuple[str, ...] = ()
        """The deliveries that own what is emitted now (the current turn's)."""
        self._pending: list[PendingEvent] = []
        self._attached = Attachment()
        self._write_lock = asyncio.Lock()
        self._flushing: asyncio.Task[None] | None = None
        self._commits_waiting = 0
        """Commits waiting for the write lock: the background write gives way to them (see `_flush_loop`)."""
        self._nap: asyncio.Future[None] | None = None
        """What the background write waits on before its next transaction (set early by a due delta)."""
        self._hurried = False
        """`hurry` was called: the background write does not linger before its next transaction."""
        self._now = False
        """`settle(now=True)` was called: the next write does not wait for the delta interval."""
        self._wrote: asyncio.Future[None] | None = None
        """Resolved after the next write (or when the background write stops): what `settle` waits on."""
        self._failure: BaseException | None = None
        self._after: list[asyncio.Future[Any]] = []
        """Deliveries taken before they were durable: nothing is written before they are (`after`)."""
        self.observer: Observer | None = None
        self.tap: Callable[[StreamEvent], None] | None = None
        """Told each event as it is emitted (`eve_runtime.telemetry.recorder`); None when telemetry is off."""
        self.fence: int | None = None
        """The session lease's fencing token (many processes on one store): every commit carries it."""

    @property
    def next_index(self) -> int:
        """The index the next written event gets (the session's event count once all is durable)."""
        return self._next_index

    @next_index.setter
    def next_index(self, index: int) -> None:
        """Start at `index` (a session loaded from the store); only before anything is emitted."""
        if self._pending or self._flushing is not None:
            raise RuntimeError("the emitter's index cannot move while events are pending")
        self._next_index = index
        self._next_unassigned = index

    async def continue_deliveries(self) -> None:
        """Own what is emitted next by the deliveries of the newest durable event, unless some are set.

        Session-level events between turns (a clear, a compaction) carry the previous turn's
        delivery ids, also when the session was just loaded from the store.
        """
        if self.delivery_ids or self._next_index == 0:
            return
        rows = await self.store.read_events(self.session_id, self._next_index - 1, self._next_index)
        if rows:
            meta = json.loads(rows[0].line).get("meta", {})
            self.delivery_ids = tuple(str(i) for i in meta.get("deliveryIds", ()))

    def emit(self, event: StreamEvent) -> None:
        """Queue an event for writing (coalescing it into the previous delta when it can)."""
        event_type, data = event.type, event.wire()
        if self.tap is not None:
            self.tap(event)
        if self._pending and self._pending[-1].absorbs(event_type, data, self.delivery_ids):
            field_name = DELTA_FIELDS[event_type]
            last = self._pending[-1]
            last.data[field_name] = last.data[field_name] + data[field_name]
        else:
            self._pending.append(PendingEvent(event_type, data, self.delivery_ids, now_iso()))
        nap = self._nap
        if (
            nap is not None
            and event_type in DELTA_FIELDS
            and not nap.done()
            and self._wait(first=False) <= 0
            and self.store.watched(self.session_id)
        ):
            nap.set_result(None)  # a delta is due now: the write lingering for earlier events goes at once
        self._schedule()

    def attach(
        self,
        *,
        history: Sequence[str] = (),
        consumed: Sequence[str] = (),
        checkpoint: CheckpointFactory | None = None,
    ) -> None:
        """Queue state changes for the next write, with every event emitted so far."""
        attached = self._attached
        attached.history.extend(history)
        attached.consumed.extend(consumed)
        if checkpoint is not None:
            attached.checkpoint = checkpoint(self._next_unassigned + len(self._pending))
            if self._pending:
                self._pending[-1].sealed = True
        self._schedule()

    def hurry(self) -> None:
        """Write what is pending now instead of lingering for more (without waiting for it).

        For a step about to call a model over the network: the write then runs while the request
        is prepared and sent, and is done before the first token needs the store.
        """
        if not (self._pending or self._attached):
            return
        self._hurried = True
        nap = self._nap
        if nap is not None and not nap.done():
            nap.set_result(None)
        self._schedule()

    def after(self, durable: asyncio.Future[Any]) -> None:
        """Write nothing until `durable` resolved; if it fails, every write fails with its error.

        For a delivery the actor took before it was durable (`Store.enqueue_early`): whatever a
        turn writes about it, and every effect a tool has (tools run after a write), comes after it.
        A store that orders the session's writes after it (`Store.orders_after`) takes the write at
        once: it is durable together with the delivery, or later.
        """
        self._after.append(durable)

    async def settle(self, *, now: bool = False) -> None:
        """Wait until the deltas pending now are durable, when a reader watches and they are due now.

        With `now` they are due now in any case (the model's output is done): they are written at
        once. Returns at once otherwise (nobody watches, the last write of a delta was less than
        `delta_interval` ago, or the last event pending is not a delta). A write that fails does
        not raise here: the next flush or commit raises it.
        """
        if not self._pending or self._pending[-1].type not in DELTA_FIELDS or self._failure is not None:
            return
        if not self.store.watched(self.session_id):
            return
        if now:
            self._now = True
            nap = self._nap
            if nap is not None and not nap.done():
                nap.set_result(None)
            self._schedule()
        elif self._wait(first=False) > 0:
            return
        target = self._next_unassigned + len(self._pending)
        while self._next_index < target and self._failure is None and self._flushing is not None:
            if self._wrote is None:
                self._wrote = asyncio.get_running_loop().create_future()
            await asyncio.shield(self._wrote)

    async def flush(self) -> None:
        """Wait until every event emitted (and everything attached) so far is durable."""
        await self.commit()

    async def commit(
        self,
        *,
        history: Sequence[str] = (),
        checkpoint: CheckpointFactory | None = None,
        consumed: Sequence[str] = (),
        status: SessionStatus | None = None,
        replace_history: bool = False,
        handoff: SessionHandoff | None = None,
    ) -> None:
        """Write everything pending plus these changes in one durable transaction, and wait for it.

        With `replace_history`, `history` is the whole history from now on: history attached earlier
        and not written yet is dropped (it is part of what replaces it), and the events pending now
        land in the same transaction as the replacement. `handoff` moves the session record to
        another build (see `eve_runtime.engine.handoff`).
        """
        self._commits_waiting += 1
        try:
            await self._write_lock.acquire()
        finally:
            self._commits_waiting -= 1
        try:
            self._raise_failure()
            if replace_history:
                self._attached.history.clear()
            if history or checkpoint or consumed:
                self.attach(history=history, consumed=consumed, checkpoint=checkpoint)
            if not (self._pending or self._attached or status or replace_history or handoff):
                return
            await self._write(status=status, replace_history=replace_history, handoff=handoff)
            if self._nap is not None and not self._nap.done():
                self._nap.set_result(None)  # nothing is left for the background write to wait for
        finally:
            self._write_lock.release()

    async def close(self) -> None:
        """Wait for an in-flight background write so nothing is left running.

        A background write lingering when a commit took everything was woken by that commit, so
        the actor's end (and the session's next actor) need not wait out the linger.
        """
        task = self._flushing
        if task is not None:
            await asyncio.wait([task])

    def abort(self) -> None:
        """Stop the background write at once, as a crash would: what it had not written is lost."""
        if self._flushing is not None:
            self._flushing.cancel()

    def _schedule(self) -> None:
        if self._flushing is None:
            self._flushing = asyncio.create_task(self._flush_loop(), name=f"eve-flush-{self.session_id}")

    def _wait(self, *, first: bool) -> float:
        """Seconds the background write waits before its next transaction (see the module docstring)."""
        if self._now:
            return 0.0
        lingering = self.linger if first else 0.0
        if self._attached or not self._pending or self._pending[-1].type not in DELTA_FIELDS:
            return 0.0 if self._hurried else lingering
        paced = self._delta_written + self.delta_interval - asyncio.get_running_loop().time()
        if self.store.watched(self.session_id) or self._hurried:
            return paced
        return max(paced, lingering)

    async def _sleep(self, seconds: float) -> None:
        loop = asyncio.get_running_loop()
        self._nap = nap = loop.create_future()
        timer = loop.call_later(seconds, _wake, nap)
        try:
            await nap
        finally:
            timer.cancel()
            self._nap = None

    async def _flush_loop(self) -> None:
        try:
            first = True
            while (self._pending or self._attached) and self._failure is None:
                wait = self._wait(first=first)
                first = False
                if wait > 0:
                    await self._sleep(wait)
                async with self._write_lock:
                    await self._follow()  # before looking: a commit may queue up while it waits
                    if self._commits_waiting:
                        # A commit queued behind this write takes everything pending with its
                        # checkpoint: events written here first would be durable ahead of the
                        # state they belong to (a parked turn's `turn.waiting` without its park).
                        break
                    if (self._pending or self._attached) and self._failure is None:
                        if self._pending and self._pending[-1].type in DELTA_FIELDS:
                            self._delta_written = asyncio.get_running_loop().time()
                        await self._write()
        except BaseException as exc:  # kept for the next flush or commit, which raises it
            self._failure = exc
        finally:
            self._flushing = None
            self._written()

    async def _write(
        self,
        *,
        status: SessionStatus | None = None,
        replace_history: bool = False,
        handoff: SessionHandoff | None = None,
    ) -> None:
        await self._follow()
        batch, self._pending = self._pending, []
        attached, self._attached = self._attached, Attachment()
        self._hurried = self._now = False
        self._next_unassigned += len(batch)
        rows = []
        index = self._next_index
        mask, mask_line = REDACTOR.text, REDACTOR.data
        for pending in batch:
            line = event_line(
                pending.type, pending.data, event_id=new_event_id(), at=pending.at, delivery_ids=pending.delivery_ids
            )
            rows.append(EventRow(index=index, type=pending.type, line=mask_line(line)))
            index += 1
        checkpoint = attached.checkpoint
        await self.store.commit(
            self.session_id,
            Commit(
                events=rows,
                history=[mask(entry) for entry in attached.history],
                checkpoint=mask(checkpoint) if checkpoint is not None else None,
                consumed=attached.consumed,
                status=status,
                replace_history=replace_history,
                handoff=handoff,
                fence=self.fence,
            ),
        )
        self._next_index = index
        self._written()
        if self.observer is not None and rows:
            self.observer(rows)

    async def _follow(self) -> None:
        """Wait for the deliveries taken early, unless the store orders the session's writes after them."""
        while self._after:
            if not self._after[0].done() and self.store.orders_after(self.session_id):
                break  # the store applies this write after the delivery, or fails it with the delivery
            await asyncio.shield(self._after[0])  # raises its failure (the actor's own cancel leaves it be)
            del self._after[0]

    def _written(self) -> None:
        wrote, self._wrote = self._wrote, None
        if wrote is not None and not wrote.done():
            wrote.set_result(None)

    def _raise_failure(self) -> None:
        if self._failure is not None:
            failure, self._failure = self._failure, None
            raise failure


def _wake(nap: asyncio.Future[None]) -> None:
    if not nap.done():
        nap.set_result(None)
