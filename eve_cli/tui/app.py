"""The terminal UI of `eve dev`: chat with the agent, watch its tools, answer its requests, steer it.

It talks to the server only through [`AsyncEveClient`][eve_runtime.client.AsyncEveClient], so it
works the same against the server `eve dev` started in this process and against one another
`eve dev` runs for the same app. One session is current: the first message creates it, later
messages continue it, a message typed while a turn runs steers that turn, and text typed while a
request is pending answers it (with a structured response). Slash commands run at once, even in
the middle of a turn; see [`eve_cli.tui.commands`][eve_cli.tui.commands].
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import logging
import os
from pathlib import Path
from typing import Any

from rich.markup import escape

from eve_cli._session_view import one_line
from eve_cli.tui.answers import answer_for, answer_hint
from eve_cli.tui.feed import Feed
from eve_cli.tui.screen import Screen
from eve_runtime.client import AsyncEveClient, ClientError, Conversation, ResponseError

__all__ = ["TerminalUI"]

logger = logging.getLogger("eve.tui")

_SPINNER = "⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏"
_BUILD_POLL = 0.5


def _ansi(style: str, text: str) -> str:
    codes = {"dim": "2", "cyan": "36", "yellow": "33", "bold": "1"}
    return f"\x1b[{codes[style]}m{text}\x1b[0m"


class TerminalUI:
    """One person's chat with the agent served at `client.base_url`.

    Args:
        client: The client of the server.
        app_root: The app on disk (for `/model`, which edits `agent/agent.py`).
        log_file: Where the server in this process writes its logs (shown by `/info`), if it does.
        resume: Attach to the newest unfinished session instead of starting a new one.
        attached_to: The pid of the `eve dev` serving `client.base_url` when this UI attached to
            it (a second `eve dev` for the app); None when the server runs in this process.
    """

    def __init__(
        self,
        client: AsyncEveClient,
        *,
        app_root: Path,
        log_file: Path | None = None,
        resume: bool = False,
        attached_to: int | None = None,
    ) -> None:
        self.client = client
        self.attached_to = attached_to
        self.app_root = app_root
        self.log_file = log_file
        self.resume = resume
        self.session_id: str | None = None
        self.dormant = False
        """The current session is dormant (of an earlier `eve dev`): nothing runs it, so no status line."""
        self.feed = Feed(Conversation())
        self.info: dict[str, Any] = {}
        self.running = True
        self._follower: asyncio.Task[None] | None = None
        self._tasks: set[asyncio.Task[Any]] = set()
        self._spinner = itertools.cycle(_SPINNER)
        self.screen = Screen(
            status=self._status, prompt=self._prompt, toolbar=self._toolbar, busy=self._busy, cancel=self._cancel_soon
        )

    # -- what the prompt shows ---------------------------------------------------------------

    def _busy(self) -> bool:
        return self.feed.busy or bool(self.feed.conversation.pending)

    def _status(self) -> list[str]:
        if self.dormant:
            return []
        lines = []
        if self.feed.live:
            lines.append("  " + self.feed.live)
        if self.feed.activity is not None:
            lines.append(
                _ansi("cyan", f"{next(self._spinner)} {self.feed.activity}")
                + _ansi("dim", f" · {self.feed.elapsed:.0f}s · {self.feed.turn_tokens()} · Ctrl-C cancels")
            )
        return lines

    def _prompt(self) -> str:
        return _ansi("yellow", "? ") if self.feed.conversation.pending else _ansi("bold", "› ")

    def _toolbar(self) -> str:
        model = self.model_label()
        session = self.session_id or "new session"
        return f" {model} · {session} · {self.client.base_url} · /help "

    def model_label(self) -> str:
        """The model of the serving generation, as `/info` reports it."""
        agent = self.info.get("agent") if isinstance(self.info.get("agent"), dict) else {}
        model = agent.get("model") if isinstance(agent, dict) else None
        if isinstance(model, dict) and isinstance(model.get("id"), str):
            return str(model["id"])
        return "dynamic model" if isinstance(model, dict) else "model unknown"

    def key_warning(self) -> str | None:
        """A line warning that the served model's provider key is not set here (None when it is, or none is needed)."""
        from eve_runtime.models.providers import missing_key

        agent = self.info.get("agent") if isinstance(self.info.get("agent"), dict) else {}
        model = agent.get("model") if isinstance(agent, dict) else None
        if not isinstance(model, dict) or not isinstance(model.get("id"), str):
            return None
        options = model.get("providerOptions")
        variable = missing_key(model["id"], options if isinstance(options, dict) else {}, os.environ)
        if variable is None:
            return None
        return (
            f"[yellow bold]warning:[/] [yellow]{escape(variable)} is not set, so every turn on {escape(model['id'])} "
            "fails.[/] [dim]Set it in the app's .env (eve dev reloads it on save), or use /model.[/]"
        )

    def say(self, *lines: str) -> None:
        """Print lines of rich markup above the prompt."""
        self.screen.print(list(lines))

    # -- the loop ----------------------------------------------------------------------------

    async def run(self) -> None:
        """Chat until the person quits."""
        from eve_cli.tui.commands import dispatch

        await self.refresh_info()
        name = (self.info.get("agent") or {}).get("name")
        serves = f"{escape(str(name))} on [bold]{escape(self.model_label())}[/] · " if name else ""
        self.say(
            f"[bold]eve dev[/] · {serves}{self.client.base_url}",
            "[dim]Type a message and press Enter. Enter during a turn steers it; Ctrl-C cancels it. /help lists the"
            " commands.[/]",
        )
        if self.attached_to is not None:
            self.say(
                f"[cyan]Attached to the eve dev already running for this app (pid {self.attached_to}).[/] "
                "[dim]Quitting here leaves it serving.[/]"
            )
        if (warning := self.key_warning()) is not None:
            self.say(warning)
        if self.resume:
            await self.resume_newest()
        watcher = self._spawn(self._watch_builds())
        try:
            while self.running:
                text = await self.screen.read()
                if text is None:
                    break
                if not text.strip():
                    continue
                try:
                    if not await dispatch(self, text):
                        await self.submit(text)
                except ClientError as exc:
                    self.say(f"[red]{escape(str(exc))}[/]")
                except Exception as exc:  # a command's own failure (a file it could not write): say it, go on
                    logger.exception("the terminal UI could not do %r", text.split(" ", 1)[0])
                    self.say(f"[red]That did not work: {escape(str(exc) or type(exc).__name__)}[/]")
        finally:
            watcher.cancel()
            await self.stop_following()
            for task in list(self._tasks):
                task.cancel()
        self.say(*self.goodbye())

    def goodbye(self) -> list[str]:
        """What quitting says: what happens to the server, and how to come back."""
        if self.attached_to is not None:
            return [f"[dim]Detached. The eve dev of pid {self.attached_to} keeps serving {self.client.base_url}.[/]"]
        unfinished = f" (session {escape(self.session_id)})" if self.session_id else ""
        return [
            "[dim]Stopped the server. Sessions are kept in .eve/: run[/] [bold]eve dev --resume[/] [dim]to pick up"
            f" the newest unfinished one{unfinished}, or[/] [bold]eve dev[/] [dim]for a fresh start.[/]"
        ]

    def _spawn(self, work: Any) -> asyncio.Task[Any]:
        task: asyncio.Task[Any] = asyncio.ensure_future(work)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)
        return task

    async def submit(self, text: str) -> None:
        """Send what the person typed: an answer to a pending request, a steer, or a new message."""
        pending = list(self.feed.conversation.pending.values())
        if pending and self.session_id is not None:
            response = answer_for(pending[0], text)
            if response is None:
                self.say(f"[yellow]{escape(answer_hint(pending[0]))}[/]")
                return
            try:
                await self.client.respond(self.session_id, [response])
            except ResponseError as exc:
                self.dormant = exc.code == "session_dormant"
                raise
            return
        if self.session_id is None or self.feed.conversation.status == "ended":
            session_id = await self.client.create(text)
            await self.follow(session_id, 0)
            self.feed.sent(text)
            return
        steering = self.feed.busy
        self.feed.sent(text)
        try:
            await self.client.send(self.session_id, text)
        except ClientError as exc:
            self.feed.unsent(text)  # refused (a 409): nothing is on its way, so no status line either
            self.dormant = isinstance(exc, ResponseError) and exc.code == "session_dormant"
            raise
        if steering:
            self.say("[dim]  (sent to the running turn)[/]")

    # -- the session -------------------------------------------------------------------------

    async def follow(self, session_id: str, start_index: int, *, dormant: bool = False) -> None:
        """Make `session_id` the current session and print its events from `start_index` on."""
        await self.stop_following()
        self.session_id, self.dormant = session_id, dormant
        self.feed = Feed(Conversation())
        self._follower = self._spawn(self._read(session_id, start_index))

    async def stop_following(self) -> None:
        """Stop reading the current session's stream."""
        follower, self._follower = self._follower, None
        if follower is not None:
            follower.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await follower

    async def _read(self, session_id: str, start_index: int) -> None:
        try:
            async for event in self.client.stream(session_id, start_index):
                self.screen.print(self.feed.push(event))
                self.screen.refresh()
        except ClientError as exc:
            self.say(f"[red]Lost the stream of {escape(session_id)}: {escape(str(exc))}[/]")
        self.feed.activity = None
        self.screen.refresh()

    async def resume_newest(self) -> None:
        """Attach to the newest unfinished session (after `eve dev --resume`), replaying what it said."""
        sessions = [
            session
            for session in await self.client.sessions()
            if session.get("status") == "active" and not str(session.get("agent", "")).startswith("node:")
        ]  # a subagent's or a task's own session (`node:...`) is reached through its parent
        if not sessions:
            self.say("[dim]No unfinished session to resume: type a message to start one.[/]")
            return
        session_id = str(sessions[0]["sessionId"])
        self.say(f"[dim]Resumed session {escape(session_id)}:[/]")
        await self.follow(session_id, 0)

    async def new_session(self) -> None:
        """Retire the current session (`reset`); the next message starts a new one."""
        old = self.session_id
        await self.stop_following()
        self.session_id, self.feed, self.dormant = None, Feed(Conversation()), False
        if old is not None:
            await self.client.reset(old, reason="new session from the terminal UI")
            self.say(f"[dim]Session {escape(old)} retired. The next message starts a new session.[/]")
        else:
            self.say("[dim]The next message starts a new session.[/]")

    def _cancel_soon(self) -> None:
        self._spawn(self.cancel_turn())

    async def cancel_turn(self) -> None:
        """Cancel the running turn of the current session, if there is one."""
        if self.session_id is None:
            self.say("[dim]No turn is running.[/]")
            return
        try:
            status = await self.client.cancel(self.session_id)
        except ClientError as exc:
            self.say(f"[red]Could not cancel: {escape(str(exc))}[/]")
            return
        if status != "accepted":
            self.say("[dim]No turn is running.[/]")

    # -- the build ---------------------------------------------------------------------------

    async def refresh_info(self) -> None:
        """Read `/eve/v1/info` again (the model and the agent may have changed with a reload)."""
        with contextlib.suppress(ClientError):
            self.info = await self.client.info()

    async def _watch_builds(self) -> None:
        """Tell the person when a save reloaded the agent, or broke it (and the old code keeps serving).

        An agent broken from the start (nothing serves yet) is told at once.
        """
        seen: int | None = None
        while True:
            build: dict[str, Any] | None = None
            try:
                build = await self.client.dev_build()
            except ResponseError as exc:
                if exc.status == 404:
                    return  # a server without the dev routes: nothing to watch
            except ClientError:
                pass  # between a broken start's phase and the fixed agent's: ask again
            if build is not None:
                rebuilds = int(build.get("rebuilds", 0))
                if (seen is not None and rebuilds != seen) or (seen is None and build.get("serving") is False):
                    await self.refresh_info()
                    self.say(*build_lines(build, self.app_root))
                seen = rebuilds
            await asyncio.sleep(_BUILD_POLL)


def build_lines(build: dict[str, Any], app_root: Path) -> list[str]:
    """What a rebuild reported by `GET /eve/v1/dev/build` looks like (paths relative to `app_root`)."""
    generation = build.get("generation")
    if build.get("status") != "failed":
        return [f"[dim]↻ reloaded: generation {generation} serves the next turn[/]"]
    if build.get("serving") is False:  # it never compiled in this eve dev
        lines = ["[red]✗ the agent has errors, so nothing serves yet: fix them and save (eve dev reloads on save)[/]"]
    else:
        lines = [f"[red]✗ the agent has errors: generation {generation} keeps serving until they are fixed[/]"]
    for entry in build.get("diagnostics") or []:
        if isinstance(entry, dict) and entry.get("severity", "error") == "error":
            where = str(entry.get("sourcePath") or "")
            if where.startswith(f"{app_root}/"):
                where = where[len(str(app_root)) + 1 :]
            line = entry.get("line")
            location = f"{where}:{line}" if line else str(where)
            lines.append(f"  [red]{escape(location)}[/] {escape(one_line(entry.get('message', ''), 300))}")
    return lines
