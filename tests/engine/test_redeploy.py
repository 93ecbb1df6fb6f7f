"""Deployment handoff across processes: the app's code changed between two runs (a redeploy).

The old build is not loadable after a restart, so a busy session resumes its unfinished work on
the new build and that resume is its handoff point; an idle one moves on its next delivery.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

import pytest

from eve_runtime.project.compiler import compile_app
from tests.engine.test_handoff import build, outputs, parked
from tests.harness import Harness, fast_options, of_type, open_store, types
from tests.helpers import write_app, write_files

pytestmark = pytest.mark.anyio


class Deployments:
    """One app on one local store, restarted with whatever code is on disk."""

    def __init__(self, h: Harness, app: Path) -> None:
        self.h, self.app = h, app

    @property
    def current(self) -> str:
        return self.h.app.manifest.content_hash

    async def redeploy(self, files: Mapping[str, str], *, crash: bool = False) -> str:
        """Stop (or crash) the process, change the code, start again; returns the new build's id."""
        if crash:
            await self.h.crash()
        else:
            await self.h.stop()
        write_files(self.app, files)
        self.h.app = compile_app(self.app, write=False)
        await self.h.start()
        return self.current

    async def deployment(self, sid: str) -> str | None:
        record = await self.h.store.get_session(sid)
        assert record is not None
        return record.deployment


async def deployed(tmp_path: Path, files: Mapping[str, str]) -> Deployments:
    app = write_app(tmp_path, files)
    store = await open_store(tmp_path)
    h = Harness(app=compile_app(app, write=False), store=store, options=fast_options())
    await h.start()
    return Deployments(h, app)


async def test_an_idle_session_moves_on_its_first_delivery_after_a_redeploy(tmp_path: Path) -> None:
    d = await deployed(tmp_path, build("1"))
    first = d.current
    sid = await d.h.create("/call version {}")
    await d.h.turns(sid, 1)
    second = await d.redeploy(build("2"))
    assert second != first
    assert await d.deployment(sid) == first  # the restart alone moves nothing
    await d.h.send(sid, "/call version {}")
    events = await d.h.turns(sid, 2)
    assert await d.deployment(sid) == second
    await d.h.stop()
    await d.h.store.close()
    assert outputs(events) == ["1", "2"]
    assert types(events).count("session.started") == 1  # same session, same stream


async def test_a_restart_on_the_same_code_keeps_the_build_and_the_deadline(tmp_path: Path) -> None:
    d = await deployed(tmp_path, build("1"))
    sid = await d.h.create("hi")
    await d.h.turns(sid, 1)
    before = await d.h.store.get_session(sid)
    await d.redeploy({})
    await d.h.send(sid, "again")
    await d.h.turns(sid, 2)
    after = await d.h.store.get_session(sid)
    await d.h.stop()
    await d.h.store.close()
    assert before is not None and after is not None
    assert (after.deployment, after.deadline) == (before.deployment, before.deadline)


async def test_a_parked_approval_is_answered_on_the_new_build_after_a_redeploy(tmp_path: Path) -> None:
    d = await deployed(tmp_path, build("1"))
    first = d.current
    sid = await d.h.create("/call dangerous {}")
    events = await d.h.wait_for(sid, parked)
    request_id = of_type(events, "input.requested")[-1]["data"]["requests"][0]["requestId"]
    second = await d.redeploy(build("2"))
    assert await d.deployment(sid) == first  # parked: nothing runs until the answer
    await d.h.rt.deliver(sid, "responses", {"inputResponses": [{"requestId": request_id, "optionId": "approve"}]})
    events = await d.h.turns(sid, 1)
    assert await d.deployment(sid) == second
    await d.h.stop()
    await d.h.store.close()
    # build 1 is gone: the answer resumes the turn on build 2, and that resume is the handoff
    assert outputs(events) == ["2"]


async def test_a_turn_interrupted_by_the_redeploy_resumes_on_the_new_build(tmp_path: Path) -> None:
    d = await deployed(tmp_path, build("1", gate=tmp_path / "never"))
    sid = await d.h.create("/call version {}")
    await d.h.wait_for(sid, lambda ev: "actions.requested" in types(ev))
    second = await d.redeploy(build("2"), crash=True)
    await d.h.turns(sid, 1)
    assert await d.deployment(sid) == second  # build 1 is gone: resuming its turn was the handoff
    await d.h.send(sid, "/call version {}")
    events = await d.h.turns(sid, 2)
    assert await d.deployment(sid) == second
    await d.h.stop()
    await d.h.store.close()
    assert outputs(events)[-1] == "2"
    assert types(events).count("message.received") == 2
