"""The terminal UI of `eve dev` (rich and prompt_toolkit), a client of the dev server like any other."""

from __future__ import annotations

from pathlib import Path

__all__ = ["chat"]


async def chat(url: str, *, app_root: Path, log_file: Path | None = None, resume: bool = False) -> None:
    """Run the terminal UI against the server at `url` until the person quits."""
    from eve_cli.tui.app import TerminalUI
    from eve_runtime.client import AsyncEveClient

    async with AsyncEveClient(url) as client:
        await TerminalUI(client, app_root=app_root, log_file=log_file, resume=resume).run()
