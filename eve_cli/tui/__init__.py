"""The terminal UI of `eve dev` (rich and prompt_toolkit), a client of the dev server like any other."""

from __future__ import annotations

import asyncio
from pathlib import Path

__all__ = ["chat"]


async def chat(
    url: str,
    *,
    app_root: Path,
    log_file: Path | None = None,
    resume: bool = False,
    attached_to: int | None = None,
    trace: bool = False,
) -> None:
    """Run the terminal UI against the server at `url` until the person quits.

    `attached_to` is the pid of the `eve dev` whose server this UI attached to (a second `eve dev`);
    None when the server runs in this process. With `trace` (`eve dev --trace`, the server here),
    each turn's span tree is printed above the prompt too.
    """
    from eve_cli.tui.app import TerminalUI
    from eve_runtime.client import AsyncEveClient

    async with AsyncEveClient(url) as client:
        ui = TerminalUI(client, app_root=app_root, log_file=log_file, resume=resume, attached_to=attached_to)
        if not trace:
            await ui.run()
            return
        from eve_cli.tui.span_trees import TreePrinter

        with TreePrinter(ui.say, asyncio.get_running_loop()):
            await ui.run()
