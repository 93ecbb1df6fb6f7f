"""The event emitter of one session: numbering, coalescing and durable writing of its events.

Only a session's actor emits its events, so the emitter owns the next index without locks.
`emit` is synchronous and cheap: the event joins a pending list and a background flush writes
it. While a flush is in flight, adjacent text deltas of the same kind and coordinates merge
into one event (the concatenated text is unchanged), so a fast model never outruns the store.
`flush` waits until everything emitted is durable; `commit` writes the pending events together
with history, checkpoint and consumed deliveries in one transaction.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from eve_runtime.ids import new_event_id
from eve_runtime.store.base import Commit, EventRow, SessionStatus, Store
from eve_runtime.wire import event_line, now_iso

__all__ = ["DELTA_FIELDS", "Emitter"]

DELTA_FIELDS = {
    "message.appended": "messageDelta",
    "reasoning.appended": "reasoningDelta",
    "action.input.appended": "inputTextDelta",
}
"""Delta events and the field holding their text."""


@dataclass
class _Pending:
    type: str
    data: dict[str, Any]
    delivery_ids: tuple[str, ...]
    at: str

    def absorbs(self, event_type: str, data: dict[str, Any], delivery_ids: tuple[str, ...]) -> bool:
        field = DELTA_FIELDS.get(event_type)
        if field is None or event_type != self.type or delivery_ids != self.delivery_ids:
            return False
        return all(self.data.get(k) == v for k, v in data.items() if k != field)


class Emitter:
    """Writes one session's events in order; see the module docstring."""

    def __init__(self, store: Store, session_id: str, next_index: int) -> None:
        self.store = store
        self.session_id = session_id
        self.next_index = next_index
        """The index the next written event gets (the session's event count once all is durable)."""
        self.delivery_ids: tuple[str, ...] = ()
        """The deliveries that own what is emitted now (the current turn's)."""
        self._pending: list[_Pending] = []
        self._write_lock = asyncio.Lock()
        self._flushing: asyncio.Task[None] | None = None
        self._failure: BaseException | None = None

    def emit(self, event_type: str, data: dict[str, Any]) -> None:
        """Queue an event for writing (coalescing it into the previous delta when it can)."""
        if self._pending and self._pending[-1].absorbs(event_type, data, self.delivery_ids):
            field = DELTA_FIELDS[event_type]
            last = self._pending[-1]
            last.data[field] = last.data[field] + data[field]
        else:
            self._pending.append(_Pending(event_type, dict(data), self.delivery_ids, now_iso()))
        if self._flushing is None:
            self._flushing = asyncio.create_task(self._flush_loop(), name=f"eve-flush-{self.session_id}")

    async def flush(self) -> None:
        """Wait until every event emitted so far is durable."""
        await self.commit()

    async def commit(
        self,
        *,
        history: Sequence[str] = (),
        checkpoint: Callable[[int], str] | None = None,
        consumed: Sequence[str] = (),
        status: SessionStatus | None = None,
        replace_history: bool = False,
    ) -> None:
        """Write the pending events plus these changes in one durable transaction.

        `checkpoint` is called with the event count the commit leaves (so the checkpoint can say
        which events it covers) and returns the checkpoint document.
        """
        async with self._write_lock:
            self._raise_failure()
            if not (self._pending or history or checkpoint or consumed or status or replace_history):
                return
            await self._write(
                Commit(history=history, consumed=consumed, status=status, replace_history=replace_history), checkpoint
            )

    def discard_pending(self) -> None:
        """Forget events not yet handed to the store (when the actor stops without finishing)."""
        self._pending.clear()

    async def close(self) -> None:
        """Wait for an in-flight background write so nothing is left running."""
        task = self._flushing
        if task is not None:
            await asyncio.wait([task])

    async def _flush_loop(self) -> None:
        try:
            while self._pending and self._failure is None:
                async with self._write_lock:
                    if self._pending and self._failure is None:
                        await self._write(Commit())
        except BaseException as exc:  # kept for the next flush or commit, which raises it
            self._failure = exc
        finally:
            self._flushing = None

    async def _write(self, commit: Commit, checkpoint: Callable[[int], str] | None = None) -> None:
        batch, self._pending = self._pending, []
        rows = []
        index = self.next_index
        for pending in batch:
            line = event_line(
                pending.type, pending.data, event_id=new_event_id(), at=pending.at, delivery_ids=pending.delivery_ids
            )
            rows.append(EventRow(index=index, type=pending.type, line=line))
            index += 1
        await self.store.commit(
            self.session_id,
            Commit(
                events=rows,
                history=commit.history,
                checkpoint=checkpoint(index) if checkpoint is not None else None,
                consumed=commit.consumed,
                status=commit.status,
                replace_history=commit.replace_history,
            ),
        )
        self.next_index = index

    def _raise_failure(self) -> None:
        if self._failure is not None:
            failure, self._failure = self._failure, None
            raise failure
