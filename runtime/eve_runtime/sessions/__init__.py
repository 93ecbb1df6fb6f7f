"""`sessions`: read any session's stored events from code running inside the server, without HTTP.

eve's `sessions.attach(id).stream({startIndex, follow})` from `eve/server`, in Python:

```python
from eve_runtime import sessions

async for event in sessions.attach(session_id).stream(start_index=0, follow=False):
    ...  # {"type", "data", "meta"}, as the stream route sends it
```

It works in tools, hooks, dynamic resolvers and anything else the runtime runs (it reads the
store of the runtime that runs the calling code, or else of the runtime started last in this
process). It reads any session id without auth, stranded and ended sessions included: pass only
ids your code got from eve (such as `ctx.session.predecessor`), never one from a request or a
model.

- `start_index` >= 0 is an absolute position; < 0 counts back from the tail (`-1`: the newest event).
- `follow=False` ends at the tail observed when the read opens; `follow=True` keeps yielding
  new events until the session has ended and every event was read (or `timeout` passes).
- It yields events that are durable. In a hook or a tool, the current step's events may still
  be on their way to the store: a bounded read can end before them; read again to catch up.

The runtime behind sessions lives in this package's modules: `runtime` (sessions by id, actors,
deliveries), `creation`, `controls`, `timeouts`, `availability`, `ownership` (leases),
`addresses`, `replacement`, `agents`, `children` (the child sessions of tasks), and `schedules`
with `schedule_fire` (the schedule timer, and what one fire does).
"""

from __future__ import annotations

from eve_runtime.sessions.reader import AttachedSession, UnknownSession, attach

__all__ = ["AttachedSession", "UnknownSession", "attach"]
