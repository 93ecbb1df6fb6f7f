"""The terminal UI's slash commands (`/help` lists them): sessions, schedules, the model, the build, leaving.

Only these words are commands. Any other text that starts with `/` is a message, so the offline
`test` model's directives (`/reply`, `/call`, `/delay`, ...) reach the agent as typed.
"""

from __future__ import annotations

import os
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING

from rich.markup import escape

from eve_cli._session_view import STATUS_STYLE, session_preview, session_state

if TYPE_CHECKING:
    from eve_cli.tui.app import TerminalUI

__all__ = ["COMMANDS", "dispatch"]

Command = Callable[["TerminalUI", str], Awaitable[None]]


async def _help(ui: TerminalUI, _argument: str) -> None:
    ui.say(
        "[bold]Commands[/]",
        *(f"  [bold]{name:<10}[/] {escape(text)}" for name, (_run, text) in COMMANDS.items()),
        "[bold]Keys[/]",
        "  Enter      send (during a turn: steer it; while the agent asks: answer)",
        "  Alt-Enter  a new line in the message (or Esc, then Enter)",
        "  Ctrl-C     cancel the running turn; twice when idle to quit (Ctrl-D quits too)",
    )


async def _quit(ui: TerminalUI, _argument: str) -> None:
    ui.running = False


async def _new(ui: TerminalUI, _argument: str) -> None:
    await ui.new_session()


async def _clear(ui: TerminalUI, _argument: str) -> None:
    if ui.session_id is None or await ui.client.clear(ui.session_id) != "accepted":
        ui.say("[dim]No session to clear.[/]")


async def _compact(ui: TerminalUI, _argument: str) -> None:
    if ui.session_id is None or await ui.client.compact(ui.session_id) != "accepted":
        ui.say("[dim]No session to compact.[/]")
    else:
        ui.say("[dim]Compacting (after the running turn, if there is one)…[/]")


async def _cancel(ui: TerminalUI, _argument: str) -> None:
    await ui.cancel_turn()


async def _info(ui: TerminalUI, _argument: str) -> None:
    await ui.refresh_info()
    info = ui.info
    agent = info.get("agent") if isinstance(info.get("agent"), dict) else {}
    assert isinstance(agent, dict)
    tools = [tool.get("name") for tool in (info.get("tools") or {}).get("static", []) if isinstance(tool, dict)]
    subagents = [s.get("name") for s in (info.get("subagents") or {}).get("local", []) if isinstance(s, dict)]
    diagnostics = info.get("diagnostics") if isinstance(info.get("diagnostics"), dict) else {}
    assert isinstance(diagnostics, dict)
    lines = [
        f"[bold]{escape(str(agent.get('name', 'agent')))}[/] in {escape(str(agent.get('appRoot', ui.app_root)))}",
        f"  model      {escape(ui.model_label())}",
        f"  tools      {escape(', '.join(str(t) for t in tools) or 'none')}",
        f"  subagents  {escape(', '.join(str(s) for s in subagents) or 'none')}",
        f"  problems   {diagnostics.get('discoveryErrors', 0)} errors, "
        f"{diagnostics.get('discoveryWarnings', 0)} warnings",
        f"  server     {escape(ui.client.base_url)}",
        f"  session    {escape(ui.session_id or 'none yet')}",
    ]
    if ui.log_file is not None:
        lines.append(f"  logs       {escape(str(ui.log_file))}")
    ui.say(*lines)


async def _sessions(ui: TerminalUI, argument: str) -> None:
    sessions = await ui.client.sessions()
    if argument:
        match = [s for s in sessions if str(s.get("sessionId", "")).startswith(argument)]
        if len(match) != 1:
            ui.say(f"[yellow]No single session starts with {escape(argument)!r}: /sessions lists them.[/]")
            return
        session_id = str(match[0]["sessionId"])
        dormant = session_state(match[0]) == "dormant"
        note = " (dormant: it belongs to an earlier eve dev; `eve dev --resume` runs it again)" if dormant else ""
        ui.say(f"[dim]Switched to {escape(session_id)}{escape(note)}:[/]")
        await ui.follow(session_id, 0, dormant=dormant)
        return
    if not sessions:
        ui.say("[dim]No sessions yet: type a message to start one.[/]")
        return
    lines = []
    for session in sessions[:20]:
        session_id, state = str(session.get("sessionId", "")), session_state(session)
        mark = "[bold]*[/]" if session_id == ui.session_id else " "
        created = str(session.get("createdAt", ""))[:19].replace("T", " ")
        style = STATUS_STYLE.get(state, "white")
        lines.append(
            f"{mark} {escape(session_id)}  [{style}]{escape(state):<17}[/]  {escape(created)}  "
            f"[dim]{escape(session_preview(session, 40))}[/]"
        )
    lines.append("[dim]/sessions ID switches to a session (a prefix of its id is enough).[/]")
    if any(session_state(session) == "dormant" for session in sessions):
        lines.append("[dim]Dormant sessions belong to an earlier eve dev: `eve dev --resume` runs them again.[/]")
    ui.say(*lines)


async def _schedule(ui: TerminalUI, argument: str) -> None:
    if not argument:
        await ui.refresh_info()
        names = [str(s.get("name")) for s in ui.info.get("schedules") or [] if isinstance(s, dict)]
        ui.say(
            f"Schedules: {escape(', '.join(names) or 'none (add one in agent/schedules/)')}",
            "[dim]/schedule NAME fires one now and shows its session (eve dev never fires them on their own).[/]",
        )
        return
    session_ids = await ui.client.fire_schedule(argument)  # an unknown name: the server's message is said
    if not session_ids:
        ui.say(f"[dim]Fired {escape(argument)}: it reached no session.[/]")
        return
    ui.say(f"[dim]Fired {escape(argument)}: following {escape(session_ids[0])} (/sessions lists them).[/]")
    await ui.follow(session_ids[0], 0)


async def _model(ui: TerminalUI, argument: str) -> None:
    from eve_cli.agent_model import ModelChangeError, set_model
    from eve_cli.user_config import key_variable, save_provider_key

    if not argument:
        ui.say(
            f"The agent runs on [bold]{escape(ui.model_label())}[/].",
            "[dim]/model provider/model-id switches it (for example /model openai/gpt-5.4-mini); /model test goes "
            "back to the offline test model.[/]",
        )
        return
    try:
        written = set_model(ui.app_root / "agent", argument)
    except ModelChangeError as exc:
        ui.say(f"[red]{escape(str(exc))}[/]")
        return
    ui.say(f"Model set to [bold]{escape(argument)}[/] in {escape(str(written))}: the next turn uses it.")
    provider = argument.split("/", 1)[0]
    if provider == "test" or os.environ.get(key_variable(provider)):
        return
    variable = key_variable(provider)
    ui.say(f"[yellow]{variable} is not set.[/] Paste the key to save it for eve (or press Enter to skip):")
    key = (await ui.screen.read_secret()) or ""
    if not key.strip():
        ui.say(f"[dim]No key saved: set {variable} in the app's .env or your environment.[/]")
        return
    path = save_provider_key(provider, key.strip())
    os.environ[variable] = key.strip()
    ui.say(f"Saved the {escape(provider)} key in {escape(str(path))} (readable by you only).")


async def _trace(ui: TerminalUI, argument: str) -> None:
    from eve_cli.tui.traces import tool_traces, trace_lines

    if ui.log_file is None:
        ui.say("[dim]This eve dev logs to its own terminal (--no-ui): the traceback is printed there.[/]")
        return
    try:
        traces = tool_traces(ui.log_file.read_text(encoding="utf-8", errors="replace"))
    except OSError as exc:
        ui.say(f"[red]Cannot read the log {escape(str(ui.log_file))}: {escape(exc.strerror or str(exc))}[/]")
        return
    if argument:
        traces = [t for t in traces if t.tool == argument or t.call_id.startswith(argument)]
    else:
        here = set(ui.feed.conversation.tool_calls)
        traces = [t for t in traces if t.call_id in here] or traces  # this session's first, else any
    if not traces:
        about = f" matching {argument!r}" if argument else ""
        ui.say(f"[dim]No tool call{escape(about)} has raised in this eve dev (its log: {escape(str(ui.log_file))}).[/]")
        return
    ui.say(*trace_lines(traces[-1], ui.app_root), f"[dim]From {escape(str(ui.log_file))}.[/]")


COMMANDS: dict[str, tuple[Command, str]] = {
    "/new": (_new, "retire this session; the next message starts a new one"),
    "/clear": (_clear, "empty this session's history (instructions, tools and state stay)"),
    "/compact": (_compact, "summarize the older turns of this session"),
    "/info": (_info, "the agent being served: model, tools, subagents, problems"),
    "/model": (_model, "show the model, or switch it: /model provider/model-id (saves the provider's key)"),
    "/sessions": (_sessions, "list the sessions; /sessions ID switches to one"),
    "/schedule": (_schedule, "list the schedules; /schedule NAME fires one now and follows its session"),
    "/cancel": (_cancel, "cancel the running turn"),
    "/trace": (_trace, "the traceback of the newest tool that raised (file:line); /trace TOOL or CALL_ID for another"),
    "/help": (_help, "this help"),
    "/quit": (_quit, "leave (the server of this eve dev stops with it; `eve dev --resume` comes back)"),
}
_ALIASES = {"/exit": "/quit", "/reset": "/new"}


async def dispatch(ui: TerminalUI, text: str) -> bool:
    """Run `text` as a command if it is one; return whether it was."""
    word, _space, argument = text.strip().partition(" ")
    name = _ALIASES.get(word, word)
    if name not in COMMANDS:
        return False
    await COMMANDS[name][0](ui, argument.strip())
    return True
