"""Two real `eve start --world postgres` processes on one database: a schedule's fire time runs once.

Both processes run the schedule timer of the same app, with two schedules: a prompt (`tick`,
whose session is also created once per fire time) and a run handler (`tock`, which sends to a
channel address of its own process, so only the claim keeps it from running twice). Their clock is shifted
(`EVE_TEST_CLOCK_OFFSET_SECONDS`) so that a whole minute, the fire time, comes a few seconds after
they start, instead of waiting for one. The schedule is recorded as having fired the minute
before, so a process that happened to start after the fire time still runs it (as the latest
missed fire): whichever way the processes and the clock interleave, the fire time must run exactly
once, in one of the two, and never in both.
"""

from __future__ import annotations

import asyncio
import math
import time
from pathlib import Path

import psycopg
import pytest

from eve_runtime.store import PostgresStore
from eve_runtime.store.postgres_schema import decode
from tests import pg
from tests.crash.harness import Client, EveProcess, read_ledger, scaffold

pytestmark = [pytest.mark.scenario, pytest.mark.postgres]

TICK = '---\ncron: "* * * * *"\n---\n/call record {"label": "tick"}\n'
TOCK = """\
import os

from eve_runtime import define_schedule


async def tock(ctx):
    # An address of its own per process: a fire run twice would start two sessions, two records.
    await ctx.to("webhook", f"tock-{os.getpid()}").send('/call record {"label": "tock"}', auth=ctx.app_auth)


schedule = define_schedule(cron="* * * * *", run=tock)
"""
LEAD = 12.0
"""Seconds from the test's start to the fire time, on the processes' shifted clock."""


async def _fired_before(schema: str, at: float) -> None:
    store = PostgresStore(pg.database_url(), schema=schema)  # creates the schema's tables
    await store.open()
    try:
        for name in ("tick", "tock"):
            assert (await store.claim_schedule_fire(name, at)).claimed
    finally:
        await store.close()


def _schedule_sessions(schema: str) -> list[tuple[str, str]]:
    with psycopg.connect(pg.database_url(), autocommit=True) as conn:
        rows = conn.execute(
            f'SELECT id, operation_id FROM "{schema}".sessions WHERE operation_id IS NOT NULL'
        ).fetchall()
    return sorted((str(row[0]), decode(row[1])) for row in rows if decode(row[1]).startswith("schedule:tick:"))


def test_two_processes_run_a_fire_time_exactly_once(tmp_path: Path) -> None:
    with pg.fresh_schema() as schema:
        app = scaffold(tmp_path)
        (app / "agent" / "schedules" / "tick.md").write_text(TICK)
        (app / "agent" / "schedules" / "tock.py").write_text(TOCK)
        ledger = tmp_path / "ledger.ndjson"
        started = time.time()
        fire_at = math.ceil(started / 60) * 60 + 60.0
        offset = fire_at - (started + LEAD)  # the processes read fire_at LEAD seconds from now
        asyncio.run(_fired_before(schema, fire_at - 60))
        args = ["--world", "postgres", "--database-url", pg.schema_url(schema)]
        env = {"EVE_LEASE_SECONDS": "1", "EVE_TEST_CLOCK_OFFSET_SECONDS": repr(offset)}
        a = EveProcess(app, ledger, args=args, env=env)
        b = EveProcess(app, ledger, args=args, env=env)
        try:
            a.start()
            b.start()
            deadline = time.monotonic() + LEAD + 60
            while {line["label"] for line in read_ledger(ledger)} != {"tick", "tock"}:
                assert time.monotonic() < deadline, f"the fire time never ran: {read_ledger(ledger)}"
                time.sleep(0.2)
            time.sleep(max(0.0, started + LEAD + 4 - time.time()))  # both timers are past the fire time now
            ticks = [line for line in read_ledger(ledger) if line["label"] == "tick"]
            tocks = [line for line in read_ledger(ledger) if line["label"] == "tock"]
            assert len(ticks) == 1 and len(tocks) == 1, read_ledger(ledger)
            pids = {a.process.pid if a.process else -1, b.process.pid if b.process else -1}
            assert ticks[0]["pid"] in pids and tocks[0]["pid"] in pids
            stamp = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(fire_at))
            sessions = _schedule_sessions(schema)
            assert [operation for _session, operation in sessions] == [f"schedule:tick:{stamp}"]
            assert ticks[0]["session"] == sessions[0][0]
            on_a = Client(a)
            types: list[str] = []
            deadline = time.monotonic() + 30
            while "session.completed" not in types:  # a schedule's task-mode session ends after its turn
                assert time.monotonic() < deadline, types
                time.sleep(0.2)
                types = [e["type"] for e in on_a.events(sessions[0][0])]
            assert types.count("turn.completed") == 1 and types[-1] == "session.completed", types
        finally:
            a.kill()
            b.kill()
