"""`define_schedule`: prompts or code run on a cron schedule (`agent/schedules/**`).

A schedule is a 5-field cron expression (minute granularity, evaluated in UTC) and exactly one of:

- `markdown`: a prompt the agent runs in task mode, in a session of its own started for each
  fire (to completion, never waiting for a person; its output is dropped);
- `run`: a handler `run(ctx)` (sync or `async`) given a [`ScheduleContext`]: it picks a channel
  address with `ctx.to(channel, address)` and sends through it, usually as the app itself
  (`auth=ctx.app_auth`); `ctx.wait_until(work)` keeps the fire alive until `work` is done.

```python
from eve_runtime import define_schedule


async def digest(ctx):
    await ctx.to("webhook", "daily-digest").send("Summarize yesterday's alerts.", auth=ctx.app_auth)


schedule = define_schedule(cron="0 9 * * 1-5", run=digest)
```

`missed` says what happens to fires that fell while no server ran: `"latest"` (default) runs the
latest of them once when the server starts, `"skip"` drops them.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any, Literal, Protocol

from eve_runtime.authoring.channel_auth import Principal
from eve_runtime.authoring.channels import Channel
from eve_runtime.authoring.validation import Problems

__all__ = [
    "APP_AUTH",
    "MISSED_POLICIES",
    "ChannelTarget",
    "MissedPolicy",
    "Schedule",
    "ScheduleContext",
    "ScheduleHost",
    "ScheduledSend",
    "cron_problem",
    "define_schedule",
    "fires_after",
    "is_schedule_auth",
    "latest_fire",
    "missed_problem",
]

MissedPolicy = Literal["latest", "skip"]
MISSED_POLICIES: tuple[MissedPolicy, ...] = ("latest", "skip")

APP_AUTH = Principal(id="eve:app", type="runtime", authenticator="app")
"""The app's own principal: who a schedule's task-mode session runs as, and `ctx.app_auth`."""


def is_schedule_auth(principal: Principal | None) -> bool:
    """Whether `principal` is the app principal schedules use (who sent, not how a turn started)."""
    return principal is not None and (principal.id, principal.type, principal.authenticator) == (
        APP_AUTH.id,
        APP_AUTH.type,
        APP_AUTH.authenticator,
    )


@dataclass(frozen=True)
class Schedule:
    """A schedule: a 5-field cron expression (UTC) and either a prompt or a handler."""

    cron: str
    markdown: str | None = None
    """The prompt of a task-mode run."""
    run: Callable[..., Any] | None = None
    """A handler that sends through a channel target."""
    missed: MissedPolicy = "latest"
    """Fires missed while no server ran: run the latest one once at start, or skip them."""


@dataclass(frozen=True)
class ScheduledSend:
    """Where a schedule's send went."""

    session_id: str
    delivery_id: str
    created: bool
    """Whether the send started the session."""


class ChannelTarget(Protocol):
    """A channel-local address a `run` handler sends to (`ctx.to(channel, address)`)."""

    async def send(
        self,
        message: str,
        *,
        auth: Principal | None = None,
        idempotency_key: str | None = None,
        state: Any = None,
    ) -> ScheduledSend:
        """Send a message: to the address's session, or to a new one that claims the address.

        `auth` is who the turn runs as (`ctx.app_auth` for the app itself); `state` seeds the
        channel state of a session the send creates, as a channel route's `send` does.
        """
        ...


class ScheduleHost(Protocol):
    """What the runtime provides behind a [`ScheduleContext`] (tests may provide their own)."""

    def target(self, channel: str | Channel, address: str) -> ChannelTarget: ...

    def wait_until(self, work: Awaitable[Any]) -> None: ...


@dataclass(frozen=True)
class ScheduleContext:
    """The argument of a schedule's `run` handler."""

    name: str
    """The schedule's name (its path under `schedules/`)."""
    fire_at: datetime
    """The fire time (UTC); for a fire by hand, when it was asked for."""
    manual: bool = False
    """Fired by hand (`eve schedules run`, the dev route), not by the clock."""
    app_auth: Principal = APP_AUTH
    host: ScheduleHost | None = field(default=None, repr=False, compare=False)

    def _host(self) -> ScheduleHost:
        if self.host is None:
            raise RuntimeError("a ScheduleContext needs a running eve runtime")
        return self.host

    def to(self, channel: str | Channel, address: str) -> ChannelTarget:
        """The address `address` of a custom channel (its name, or the `define_channel` value)."""
        return self._host().target(channel, address)

    def wait_until(self, work: Awaitable[Any]) -> None:
        """Keep this fire alive until `work` (started now, beside the handler) is done."""
        self._host().wait_until(work)


def cron_problem(expression: object) -> str | None:
    """Why `expression` is not a 5-field cron expression, or None when it is one."""
    from cronsim import CronSim, CronSimError

    if not isinstance(expression, str) or not expression.strip():
        return "'cron' must be a non-empty string such as '0 14 * * 1'"
    if len(expression.split()) != 5:
        return f"cron {expression!r} must have 5 fields (minute hour day-of-month month day-of-week)"
    try:
        CronSim(expression, datetime(2000, 1, 1))
    except CronSimError as exc:
        return f"cron {expression!r} is invalid: {exc}"
    return None


def fires_after(cron: str, after: float, count: int = 1) -> list[float]:
    """The next `count` fire times of `cron` strictly after `after` (seconds since the epoch, UTC)."""
    from cronsim import CronSim

    times = CronSim(cron, datetime.fromtimestamp(after, UTC))
    return [next(times).timestamp() for _ in range(count)]


def latest_fire(cron: str, now: float) -> float:
    """The latest fire time of `cron` at or before `now` (seconds since the epoch, UTC)."""
    from cronsim import CronSim

    minute = datetime.fromtimestamp(now, UTC).replace(second=0, microsecond=0) + timedelta(minutes=1)
    return next(CronSim(cron, minute, reverse=True)).timestamp()


def missed_problem(missed: object) -> str | None:
    """Why `missed` is not a policy for missed fires, or None when it is one."""
    if missed in MISSED_POLICIES:
        return None
    return f"'missed' must be 'latest' (run the latest missed fire at start) or 'skip', got {missed!r}"


def define_schedule(
    *,
    cron: str,
    markdown: str | None = None,
    run: Callable[..., Any] | None = None,
    missed: MissedPolicy = "latest",
) -> Schedule:
    """Define a schedule in code (`agent/schedules/<name>.py`). Give exactly one of `markdown` or `run`.

    Args:
        cron: 5-field cron expression, minute granularity, evaluated in UTC.
        markdown: A prompt run in task mode (to completion, no human input, output dropped).
        run: A handler `run(ctx)` run on each fire; `ctx` is a [`ScheduleContext`].
        missed: `"latest"` (default) runs the latest fire missed while no server ran once at
            start; `"skip"` drops missed fires.
    """
    problems = Problems()
    cron_wrong, missed_wrong = cron_problem(cron), missed_problem(missed)
    problems.when(cron_wrong is not None, "cron", f"define_schedule(): {cron_wrong}")
    if (markdown is None) == (run is None):
        problems.add("markdown", "define_schedule(): give exactly one of 'markdown' or 'run'")
    else:
        blank = markdown is not None and (not isinstance(markdown, str) or not markdown.strip())
        problems.when(blank, "markdown", "define_schedule(): 'markdown' must be a non-empty prompt")
        problems.when(run is not None and not callable(run), "run", "define_schedule(): 'run' must be a function")
    problems.when(missed_wrong is not None, "missed", f"define_schedule(): {missed_wrong}")
    problems.raise_any()
    return Schedule(cron=cron, markdown=markdown, run=run, missed=missed)
