"""The human views of sessions: `eve sessions list`, `eve sessions show` and `eve send`."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from rich.console import Console
from rich.markup import escape
from rich.table import Table

if TYPE_CHECKING:
    from eve_runtime.client import Conversation, InputRequest, ToolCall, Usage

__all__ = [
    "one_line",
    "render_conversation",
    "render_pending",
    "render_session_list",
    "session_preview",
    "session_state",
    "usage_line",
]

STATUS_STYLE = {
    "active": "green",
    "completed": "dim",
    "reset": "dim",
    "failed": "red",
    "idle": "green",
    "running": "cyan",
    "waiting-on-input": "yellow",
    "waiting-on-tasks": "cyan",
    "ended": "dim",
    "waiting for input": "yellow",
    "dormant": "magenta",
    "stranded": "red",
}
BLOCK_NOTE = {"streaming": " [cyan](streaming)[/]", "interrupted": " [yellow](interrupted)[/]"}
CALL_STYLE = {"completed": "green", "failed": "red", "rejected": "yellow", "abandoned": "yellow"}
_LIMIT = 300


def one_line(value: Any, limit: int = _LIMIT) -> str:
    """A value as one line (JSON for data, strings as they are, whitespace folded), cut at `limit` characters."""
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, separators=(",", ":"))
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def session_state(session: dict[str, Any]) -> str:
    """What a listed session does now, in words (`waiting for input`, `dormant`, ...).

    Its `state` from `GET /eve/v1/dev/sessions`; its stored `status` from a server without states.
    """
    state = str(session.get("state") or session.get("status") or "")
    return state.replace("-", " ")


def session_preview(session: dict[str, Any], limit: int = 48) -> str:
    """The first message of a listed session, quoted on one line (empty when it has none)."""
    preview = session.get("preview")
    return f"“{one_line(preview, limit)}”" if isinstance(preview, str) and preview else ""


def render_session_list(sessions: Sequence[dict[str, Any]], console: Console) -> None:
    """One line per session: id, state, creation time (UTC, to the second), agent, first message."""
    if not sessions:
        console.print('No sessions yet. Start one with `eve send "hello"`.')
        return
    console.print(f"[bold]{'session':<31}  {'state':<17}  {'created (UTC)':<19}  {'agent':<14}  first message[/]")
    for session in sessions:
        state = session_state(session)
        created = str(session.get("createdAt", ""))[:19].replace("T", " ")
        console.print(
            f"{escape(str(session.get('sessionId', ''))):<31}  "
            f"[{STATUS_STYLE.get(state, 'white')}]{escape(state):<17}[/]  "
            f"{escape(created):<19}  {escape(str(session.get('agent', ''))):<14}  "
            f"[dim]{escape(session_preview(session))}[/]"
        )


def usage_line(usage: Usage) -> str:
    """`N input tokens, M output tokens` (plus cache reads and the cost when there are any)."""
    parts = [f"{usage.input_tokens:,} input tokens", f"{usage.output_tokens:,} output tokens"]
    if usage.cache_read_tokens:
        parts.append(f"{usage.cache_read_tokens:,} cache reads")
    if usage.cost_usd is not None:
        parts.append(f"${usage.cost_usd:.4f}")
    return ", ".join(parts)


def _call_text(call: ToolCall) -> str:
    arguments = call.input if call.input is not None else call.input_text
    text = f"[bold]{escape(call.name)}[/] {escape(one_line(arguments))}"
    if call.approval is not None:
        text += f" [yellow](approval: {escape(call.approval)})[/]"
    if call.state in CALL_STYLE:
        result = call.error.get("message") if call.error else call.output
        text += f"\n[{CALL_STYLE[call.state]}]{call.state}[/] {escape(one_line(result))}"
    elif call.state == "output-partial":
        text += f"\n[cyan]running[/] {escape(one_line(call.partial))}"
    elif call.task_id is None:
        text += "\n[dim]no result yet[/]"
    if call.task_id is not None:
        text += f" [dim](task {escape(call.task_id)})[/]"
    return text


def render_pending(requests: Sequence[InputRequest], console: Console) -> None:
    """One line per open request: id, kind, prompt and options."""
    for request in requests:
        options = " " + escape(f"[{' | '.join(request.option_ids)}]") if request.options else ""
        freeform = " (or any text)" if request.allow_freeform else ""
        prompt = f" {escape(request.prompt)}" if request.prompt else ""
        relayed = f" [dim](from task {escape(request.task_id)})[/]" if request.task_id else ""
        console.print(
            f"  [bold]{escape(request.request_id)}[/] {escape(request.kind)}{prompt}{options}{freeform}{relayed}"
        )


def render_conversation(session_id: str, conversation: Conversation, console: Console) -> None:
    """The conversation: messages, reasoning, tool calls with their results, then requests, tasks and usage."""
    from eve_runtime.client import Message, Reasoning

    status = conversation.status
    console.print(
        f"[bold]{escape(session_id)}[/]  [{STATUS_STYLE.get(status, 'white')}]{status}[/]  "
        f"{conversation.turns} turn(s), {conversation.event_count} events"
    )
    timeline = Table.grid(padding=(0, 2))
    timeline.add_column(style="bold", no_wrap=True)
    timeline.add_column(overflow="fold")
    for item in conversation.items:
        if isinstance(item, Message):
            if item.role == "user":
                timeline.add_row("[blue]you[/]", escape(item.text))
                continue
            note = BLOCK_NOTE.get(item.state, "")
            style = "dim" if item.narration else "white"
            timeline.add_row("[green]agent[/]", f"[{style}]{escape(item.text)}[/]{note}")
        elif isinstance(item, Reasoning):
            timeline.add_row("[dim]thinking[/]", f"[dim italic]{escape(one_line(item.text))}[/]")
        else:
            timeline.add_row("[magenta]tool[/]", _call_text(item))
    console.print(timeline)
    if conversation.error is not None:
        console.print(f"[red]failed:[/] {escape(conversation.error.code)}: {escape(conversation.error.message)}")
    if conversation.pending:
        console.print("[yellow]Waiting for an answer:[/]")
        render_pending(list(conversation.pending.values()), console)
    if conversation.tasks:
        console.print("Tasks:")
        for task in conversation.tasks.values():
            child = f" child session {escape(task.child_session_id)}" if task.child_session_id else ""
            console.print(f"  {escape(task.task_id)} {escape(task.name or '')} [bold]{task.status}[/]{child}")
    console.print(f"Usage: {usage_line(conversation.usage)}")
