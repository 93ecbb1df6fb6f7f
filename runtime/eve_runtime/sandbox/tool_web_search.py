"""The framework's `web_search` tool, behind a search provider the app chooses.

eve's `web_search` is provider-managed (the model provider's own search). Here the app names a
provider in `agent/tools/web_search.py`; until it does, `web_search` is not offered and
`eve info` says why:

```python
# agent/tools/web_search.py
from eve_runtime.framework_tools import web_search_tool

async def search(query: str, max_results: int) -> list[dict]:
    ...  # call your search API; return [{"title", "url", "snippet"}, ...]

web_search = web_search_tool(search)
```

A provider is an async function `(query, max_results) -> results`, or an object with such a
`search(query, *, max_results)` method. The tool's input is `{"query", "limit"?}` (5 results by
default, at most 20); its result `{"query", "results": [{"title", "url", "snippet"}]}`.
"""

from __future__ import annotations

import inspect
from collections.abc import Awaitable, Callable, Coroutine, Mapping, Sequence
from typing import Annotated, Any, Protocol, runtime_checkable

from pydantic import Field

from eve_runtime.authoring.tools import tool
from eve_runtime.errors import DefinitionError

__all__ = ["NO_PROVIDER", "WEB_SEARCH_INPUT_SCHEMA", "WebSearchProvider", "web_search_tool"]

NO_PROVIDER = (
    "no search provider is set: create agent/tools/web_search.py with "
    "`web_search = web_search_tool(provider)` (from eve_runtime.framework_tools)"
)
WEB_SEARCH_DESCRIPTION = (
    "Search the web. Returns the most relevant pages for the query, each with its title, URL and a short snippet; "
    "use web_fetch to read a page."
)
WEB_SEARCH_INPUT_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "query": {"type": "string", "description": "What to search for."},
        "limit": {
            "type": "integer",
            "minimum": 1,
            "maximum": 20,
            "description": "Maximum number of results. Defaults to 5.",
        },
    },
    "required": ["query"],
    "additionalProperties": False,
}


@runtime_checkable
class WebSearchProvider(Protocol):
    """A search backend: `await provider.search(query, max_results=5)` -> `[{"title", "url", "snippet"}]`."""

    async def search(self, query: str, *, max_results: int) -> Sequence[Mapping[str, Any]]: ...


SearchFunction = Callable[[str, int], Awaitable[Sequence[Mapping[str, Any]]]]


def _result(item: Mapping[str, Any]) -> dict[str, str]:
    if not isinstance(item, Mapping) or not isinstance(item.get("url"), str):
        raise TypeError(f"a search provider returned {item!r}; each result needs at least a 'url' string")
    return {"title": str(item.get("title") or ""), "url": item["url"], "snippet": str(item.get("snippet") or "")}


def web_search_tool(provider: WebSearchProvider | SearchFunction) -> Callable[..., Coroutine[Any, Any, dict[str, Any]]]:
    """The `web_search` tool, searching with `provider` (see the module docstring)."""
    if isinstance(provider, WebSearchProvider):
        method = provider.search

        async def call(query: str, limit: int) -> Sequence[Mapping[str, Any]]:
            return await method(query, max_results=limit)

    elif callable(provider) and inspect.iscoroutinefunction(provider):
        function = provider

        async def call(query: str, limit: int) -> Sequence[Mapping[str, Any]]:
            return await function(query, limit)

    else:
        raise DefinitionError(
            "web_search_tool(): the provider must be an async function (query, max_results) or an object "
            "with an async search(query, *, max_results) method",
            field="provider",
        )

    @tool(description=WEB_SEARCH_DESCRIPTION)
    async def web_search(
        query: Annotated[str, Field(min_length=1, description="What to search for.")],
        limit: Annotated[int | None, Field(ge=1, le=20, description="Maximum number of results.")] = None,
    ) -> dict[str, Any]:
        """Search the web."""
        count = limit or 5
        found = await call(query, count)
        return {"query": query, "results": [_result(item) for item in list(found)[:count]]}

    return web_search
