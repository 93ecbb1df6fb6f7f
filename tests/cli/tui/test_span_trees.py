"""`eve dev --trace` beside the terminal UI: the runtime's turn trees reach the UI's loop as dim notes."""

from __future__ import annotations

import asyncio
import logging
import threading

import pytest

from eve_cli.tui.span_trees import TREES, TreePrinter

pytestmark = pytest.mark.anyio


async def test_a_tree_logged_on_another_thread_is_printed_on_the_uis_loop() -> None:
    said: list[tuple[str, ...]] = []
    printed = asyncio.Event()
    loop_thread: list[int] = []

    def say(*lines: str) -> None:
        said.append(lines)
        loop_thread.append(threading.get_ident())
        printed.set()

    tree = "trace abc · weather-agent turn_0 · completed\n└── execute_tool fetch  1.0 ms · error: [red]not markup[/red]"
    with TreePrinter(say, asyncio.get_running_loop()):
        writer = threading.Thread(target=lambda: logging.getLogger(TREES).info(tree))  # as the telemetry thread does
        writer.start()
        writer.join()
        await asyncio.wait_for(printed.wait(), 5)
    assert said == [
        (
            "[dim]trace abc · weather-agent turn_0 · completed[/]",
            "[dim]└── execute_tool fetch  1.0 ms · error: \\[red]not markup\\[/red][/]",
        )
    ]
    assert loop_thread == [threading.get_ident()]
    assert not any(isinstance(h, TreePrinter) for h in logging.getLogger(TREES).handlers)  # removed on exit
