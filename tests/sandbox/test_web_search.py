"""`web_search` runs the provider the app names in `agent/tools/web_search.py`."""

from __future__ import annotations

from pathlib import Path

import pytest

from eve_runtime.errors import DefinitionError
from eve_runtime.framework_tools import web_search_tool
from tests.harness import make_harness, of_type

pytestmark = pytest.mark.anyio

PROVIDER = """
from eve_runtime.framework_tools import web_search_tool


class Index:
    async def search(self, query: str, *, max_results: int) -> list[dict]:
        return [{"title": f"{query} {i}", "url": f"https://example.com/{i}", "extra": 1} for i in range(10)]


web_search = web_search_tool(Index())
"""


async def test_the_provider_answers_and_the_results_are_shaped(tmp_path: Path) -> None:
    h = await make_harness(tmp_path, {"agent/tools/web_search.py": PROVIDER})
    try:
        sid = await h.create('/call web_search {"query": "eve", "limit": 2}')
        events = await h.turns(sid, 1)
    finally:
        await h.stop()
    (result,) = of_type(events, "action.result")
    assert result["data"]["result"]["output"] == {
        "query": "eve",
        "results": [
            {"title": "eve 0", "url": "https://example.com/0", "snippet": ""},
            {"title": "eve 1", "url": "https://example.com/1", "snippet": ""},
        ],
    }


def test_a_provider_must_be_async() -> None:
    with pytest.raises(DefinitionError, match="async"):
        web_search_tool(lambda query, limit: [])  # type: ignore[arg-type,return-value]
