"""What the terminal UI shows of a session's stream: lines to print, the live line and the activity.

A [`Feed`][eve_cli.tui.feed.Feed] folds each event into a client
[`Conversation`][eve_runtime.client.Conversation] (which keeps the pending requests, tool calls
and usage) and returns the lines it adds to the transcript, as rich markup. The reply is streamed:
every complete line prints as soon as its newline arrives, and the text after the last newline is
`live` (the UI draws it just above the prompt until the line is complete). Reasoning and tool calls
are collapsed to one line each, with their results.

Token counts are the turn's: what its completed steps reported, plus an estimate of the step
streaming now (about four characters a token, shown with `~`) until that step reports its usage.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from rich.markup import escape

from eve_cli._session_view import one_line
from eve_cli.tui.answers import option_label
from eve_runtime.client import Usage

if TYPE_CHECKING:
    from eve_runtime.client import Conversation, Event, InputRequest

__all__ = ["Feed", "request_lines"]

_REPLY_MARK = "[green]●[/] "
_INDENT = "  "
_CHARS_PER_TOKEN = 4
"""How the status line estimates the tokens of a step still streaming (its usage comes when it ends)."""


def usage_between(before: Usage, after: Usage) -> Usage:
    """What was used from `before` to `after` (two running totals); the cost only when both know it."""
    cost = None if after.cost_usd is None else after.cost_usd - (before.cost_usd or 0.0)
    return Usage(
        input_tokens=max(0, after.input_tokens - before.input_tokens),
        output_tokens=max(0, after.output_tokens - before.output_tokens),
        cache_read_tokens=max(0, after.cache_read_tokens - before.cache_read_tokens),
        cache_write_tokens=max(0, after.cache_write_tokens - before.cache_write_tokens),
        cost_usd=cost,
    )


def usage_text(usage: Usage) -> str:
    """`282 in / 4 out tokens` (and `, $0.0012` when the cost is known)."""
    text = f"{usage.input_tokens:,} in / {usage.output_tokens:,} out tokens"
    return text + (f", ${usage.cost_usd:.4f}" if usage.cost_usd is not None else "")


def request_lines(request: InputRequest) -> list[str]:
    """A request for input as it is asked inline: the prompt, the call it is about, the choices."""
    prompt = request.prompt or ("Approve this call?" if request.kind == "tool-approval" else "The agent asks:")
    relayed = f" [dim](from task {escape(request.task_id)})[/]" if request.task_id else ""
    lines = [f"[yellow bold]?[/] [bold]{escape(prompt)}[/]{relayed}"]
    action = request.raw.get("action")
    if isinstance(action, dict) and action.get("toolName"):
        arguments = one_line(action.get("input") or {}, 160)
        lines.append(f"{_INDENT}[magenta]{escape(str(action['toolName']))}[/] [dim]{escape(arguments)}[/]")
    if request.options:
        choices = "  ".join(
            f"[bold]{index}[/]) {escape(option_label(request, option))}"
            for index, option in enumerate(request.options, start=1)
        )
        hint = "y or n, or a number" if request.kind == "tool-approval" else "a number or the option's name"
        if request.allow_freeform:
            hint += ", or any answer of your own"
        lines.append(f"{_INDENT}{choices}  [dim](type {hint})[/]")
    elif request.allow_freeform:
        lines.append(f"{_INDENT}[dim](type your answer)[/]")
    return lines


class Feed:
    """The transcript of one session as the terminal shows it, built event by event."""

    def __init__(self, conversation: Conversation, *, clock: Callable[[], float] = time.monotonic) -> None:
        self.conversation = conversation
        self.live = ""
        """The streamed reply text after its last newline (drawn above the prompt)."""
        self.activity: str | None = None
        """What the turn is doing now (`Thinking`, `Generating`, `Running get_weather`, ...); None when idle."""
        self.turn_started_at: float | None = None
        self.sending = False
        """A message was sent and its turn has not started yet."""
        self._clock = clock
        self._turn_base = Usage()
        self._streamed = 0
        """Characters streamed by the step running now (its usage is not reported yet)."""
        self._block_started = False
        self._narration = False
        self._echoed: list[str] = []
        self._handlers: dict[str, Callable[[dict[str, Any]], list[str]]] = {
            "turn.started": self._turn_started,
            "message.received": self._message_received,
            "reasoning.appended": self._reasoning_appended,
            "reasoning.completed": self._reasoning_completed,
            "message.appended": self._message_appended,
            "message.completed": self._message_completed,
            "action.input.appended": self._input_appended,
            "step.completed": self._step_completed,
            "actions.requested": self._actions_requested,
            "action.result": self._action_result,
            "input.requested": self._input_requested,
            "input.resolved": self._input_resolved,
            "task.started": self._task_started,
            "task.settled": self._task_settled,
            "turn.waiting": self._turn_waiting,
            "turn.completed": self._turn_completed,
            "turn.failed": self._turn_failed,
            "step.retrying": self._step_retrying,
            "turn.cancelled": self._turn_cancelled,
            "context.cleared": lambda _data: ["[dim]context cleared[/]"],
            "compaction.completed": lambda _data: ["[dim]older turns compacted into a summary[/]"],
            "session.completed": self._session_completed,
            "session.failed": self._session_failed,
        }

    @property
    def busy(self) -> bool:
        """Whether a turn is running (text typed now steers it)."""
        return self.sending or self.conversation.status in ("running", "waiting-on-tasks")

    @property
    def elapsed(self) -> float:
        """Seconds since the running turn started (0 when idle)."""
        return 0.0 if self.turn_started_at is None else self._clock() - self.turn_started_at

    def turn_usage(self) -> Usage:
        """What the running (or the newest) turn used so far, by its completed steps."""
        return usage_between(self._turn_base, self.conversation.usage)

    def turn_tokens(self) -> str:
        """`12 output tokens` for the status line: the turn's, moving while text streams."""
        estimate = math.ceil(self._streamed / _CHARS_PER_TOKEN)
        tokens = self.turn_usage().output_tokens + estimate
        return f"{'~' if estimate else ''}{tokens:,} output tokens"

    def sent(self, text: str) -> None:
        """The person sent `text` from the prompt (already on screen: its `message.received` is not printed)."""
        self._echoed.append(text)
        if not self.busy:
            self.sending, self.activity = True, "Sending"

    def unsent(self, text: str) -> None:
        """Sending `text` failed (the server refused it): forget it, and stop showing `Sending`."""
        if text in self._echoed:
            self._echoed.remove(text)
        if self.sending:
            self.sending = False
            if self.activity == "Sending":
                self.activity = None

    def push(self, event: Event) -> list[str]:
        """Fold one event in; return the lines it adds to the transcript (rich markup)."""
        before = self.conversation.event_count
        self.conversation.apply(event)
        if self.conversation.event_count == before:
            return []  # a duplicate (a reconnect replays from the cursor)
        kind = str(event.get("type"))
        if kind in ("turn.started", "session.waiting", "session.completed", "session.failed"):
            self.sending = False
        handler = self._handlers.get(kind)
        data = event.get("data")
        return handler(data if isinstance(data, dict) else {}) if handler is not None else []

    # -- text --------------------------------------------------------------------------------

    def _reply_line(self, text: str) -> str:
        style = "dim" if self._narration else ""
        body = f"[{style}]{escape(text)}[/]" if style else escape(text)
        prefix = _INDENT if self._block_started else _REPLY_MARK
        self._block_started = True
        return prefix + body

    def _end_block(self) -> list[str]:
        lines = [self._reply_line(self.live)] if self.live else []
        self.live, self._block_started, self._narration = "", False, False
        return lines

    def _step_completed(self, _data: dict[str, Any]) -> list[str]:
        self._streamed = 0  # the step's usage is in the conversation's total now
        return []

    def _message_appended(self, data: dict[str, Any]) -> list[str]:
        self.activity = "Generating"
        delta = str(data.get("messageDelta") or "")
        self._streamed += len(delta)
        self.live += delta
        *complete, self.live = self.live.split("\n")
        return [self._reply_line(line) for line in complete]

    def _message_completed(self, data: dict[str, Any]) -> list[str]:
        text = data.get("message")
        self._narration = data.get("finishReason") == "tool-calls"
        lines: list[str] = []
        if isinstance(text, str) and not self._block_started and not self.live:
            *complete, self.live = text.split("\n")  # it never streamed here (a read of recorded history)
            lines = [self._reply_line(line) for line in complete]
        return lines + self._end_block()

    def _message_received(self, data: dict[str, Any]) -> list[str]:
        if data.get("kind") == "task.result":
            return []
        text = data.get("message")
        text = text if isinstance(text, str) else ""
        if text in self._echoed:
            self._echoed.remove(text)
            return []
        lines = text.split("\n") or [""]
        return [f"[blue bold]›[/] {escape(lines[0])}", *(f"{_INDENT}{escape(line)}" for line in lines[1:])]

    def _reasoning_appended(self, data: dict[str, Any]) -> list[str]:
        self.activity = "Thinking"
        self._streamed += len(str(data.get("reasoningDelta") or ""))
        return []

    def _reasoning_completed(self, data: dict[str, Any]) -> list[str]:
        text = data.get("reasoning")
        if not isinstance(text, str) or not text.strip():
            return []
        return [f"[dim]▸ thought: {escape(one_line(text, 100))}[/]"]

    # -- calls and requests ------------------------------------------------------------------

    def _input_appended(self, data: dict[str, Any]) -> list[str]:
        self.activity = f"Preparing {data.get('toolName') or 'a call'}"
        self._streamed += len(str(data.get("inputTextDelta") or ""))
        return []

    def _actions_requested(self, data: dict[str, Any]) -> list[str]:
        lines = self._end_block()
        for action in data.get("actions") or []:
            if not isinstance(action, dict):
                continue
            name = str(action.get("toolName") or action.get("subagentName") or action.get("name") or "call")
            arguments = one_line(action.get("input") or {}, 100)
            kind = {"subagent-call": " [dim](subagent)[/]", "load-skill": " [dim](skill)[/]"}.get(
                str(action.get("kind")), ""
            )
            lines.append(f"[magenta]▸ {escape(name)}[/]{kind} [dim]{escape(arguments)}[/]")
            self.activity = f"Running {name}"
        return lines

    def _action_result(self, data: dict[str, Any]) -> list[str]:
        result = data.get("result") if isinstance(data.get("result"), dict) else {}
        assert isinstance(result, dict)
        status = data.get("status")
        error = data.get("error") if isinstance(data.get("error"), dict) else None
        if status in ("failed", "rejected") or error is not None:
            message = (error or {}).get("message") or result.get("output") or status
            if (error or {}).get("code") == "ACTION_ABANDONED":  # closed by recovery after a crash
                return [f"{_INDENT}[yellow]↳ abandoned: {escape(one_line(message, 120))}[/]"]
            line = f"{_INDENT}[red]↳ {escape(str(status or 'failed'))}: {escape(one_line(message, 120))}[/]"
            if result.get("errorName"):  # the tool raised: its traceback is in the dev log
                line = (
                    f"{_INDENT}[red]↳ {escape(str(status or 'failed'))}: {escape(str(result['errorName']))}: "
                    f"{escape(one_line(message, 120))}[/] [dim](/trace shows where)[/]"
                )
            return [line]
        output = result.get("output")
        if isinstance(output, dict) and output.get("status") == "working" and output.get("taskId"):
            return []  # a task's receipt: its task.settled line tells how it ended
        return [f"{_INDENT}[green]↳[/] [dim]{escape(one_line(output, 120))}[/]"]

    def _input_requested(self, data: dict[str, Any]) -> list[str]:
        lines = self._end_block()
        for request in self.conversation.pending.values():
            if request.raw in (data.get("requests") or []):
                lines.extend(request_lines(request))
        self.activity = "Waiting for your answer"
        return lines

    def _input_resolved(self, data: dict[str, Any]) -> list[str]:
        lines = []
        for resolution in data.get("resolutions") or []:
            if isinstance(resolution, dict):
                outcome = str(resolution.get("outcome") or "answered")
                style = "green" if outcome in ("approved", "answered") else "yellow"
                lines.append(f"{_INDENT}[{style}]{escape(outcome)}[/]")
        if not self.conversation.pending and self.busy:
            self.activity = "Running"
        return lines

    def _task_started(self, data: dict[str, Any]) -> list[str]:
        name = str(data.get("name") or data.get("kind") or "task")
        return [
            f"{_INDENT}[cyan]◆ {escape(name)}[/] [dim]working in the background ({escape(str(data.get('taskId')))})[/]"
        ]

    def _task_settled(self, data: dict[str, Any]) -> list[str]:
        task = self.conversation.tasks.get(str(data.get("taskId")))
        name = (task.name if task is not None else None) or "task"
        status = str(data.get("status") or "completed")
        style = "green" if status == "completed" else "yellow" if status == "cancelled" else "red"
        detail = data.get("output") if status == "completed" else data.get("error") or data.get("cancel")
        shown = f" [dim]{escape(one_line(detail, 120))}[/]" if detail is not None else ""
        return [f"{_INDENT}[{style}]◆ {escape(name)} {escape(status)}[/]{shown}"]

    # -- turns -------------------------------------------------------------------------------

    def _turn_started(self, _data: dict[str, Any]) -> list[str]:
        self.turn_started_at = self._clock()
        self._turn_base, self._streamed = self.conversation.usage, 0
        self.activity = "Thinking"
        return []

    def _turn_waiting(self, data: dict[str, Any]) -> list[str]:
        if data.get("on") == "input":
            self.activity = "Waiting for your answer"
            return []
        working = [task.name or task.task_id for task in self.conversation.tasks.values() if task.status == "working"]
        self.activity = "Waiting on " + (", ".join(working) or "tasks")
        return []

    def _turn_ended(self) -> list[str]:
        lines = self._end_block()
        self.activity = None
        return lines

    def _turn_completed(self, _data: dict[str, Any]) -> list[str]:
        elapsed = self.elapsed
        lines = self._turn_ended()
        self.turn_started_at, self._streamed = None, 0
        timing = f"{elapsed:.1f}s · " if elapsed else ""
        session = self.conversation.usage
        total = f"{session.input_tokens:,} in / {session.output_tokens:,} out"
        footer = f"{timing}this turn: {usage_text(self.turn_usage())} · {total} in this session"
        return [*lines, f"[dim]{_INDENT}{escape(footer)}[/]"]

    def _turn_failed(self, data: dict[str, Any]) -> list[str]:
        lines = self._turn_ended()
        self.turn_started_at = None
        message = f"{data.get('code', 'failed')}: {data.get('message', '')}"
        return [*lines, f"[red]✗ the turn failed: {escape(one_line(message, 300))}[/]"]

    def _step_retrying(self, data: dict[str, Any]) -> list[str]:
        # An extension event (eve has none): the failed attempt's reason, and when the next one starts.
        attempt, total = data.get("attempt", "?"), data.get("maxAttempts", "?")
        delay = float(data.get("delayMs") or 0) / 1000
        self.activity = f"Retrying {attempt}/{total}"
        reason = one_line(str(data.get("message", "")), 200)
        return [f"[yellow]↻ retrying {attempt}/{total} in {delay:.1f} s:[/] [dim]{escape(reason)}[/]"]

    def _turn_cancelled(self, _data: dict[str, Any]) -> list[str]:
        lines = self._turn_ended()
        self.turn_started_at = None
        return [*lines, "[yellow]■ cancelled[/]"]

    def _session_completed(self, _data: dict[str, Any]) -> list[str]:
        self.activity = None
        return ["[dim]This session has ended. Type a message to start a new one.[/]"]

    def _session_failed(self, data: dict[str, Any]) -> list[str]:
        self.activity = None
        message = f"{data.get('code', 'failed')}: {data.get('message', '')}"
        return [f"[red]✗ the session failed: {escape(one_line(message, 300))}[/] (type a message to start a new one)"]
