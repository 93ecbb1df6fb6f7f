"""The provider names litellm routes (`openai` in `openai/gpt-4o-mini`), read from its files without importing it.

Importing litellm takes seconds, too slow for `eve info` or a reload, so the names are read from
the source of its `LlmProviders` enum and its JSON-configured providers, once per process.
`tests/models/test_provider_names.py` checks them against `litellm.provider_list`.
"""

from __future__ import annotations

import importlib.util
import json
import re
from functools import cache
from pathlib import Path

__all__ = ["litellm_providers"]

_ENUM = re.compile(r"^class LlmProviders\(str, Enum\):\n(?P<body>(?:[ \t]+.*\n|\n)+)", re.MULTILINE)
_MEMBER = re.compile(r"^[ \t]+[A-Z][A-Z0-9_]*\s*=\s*[\"']([^\"']+)[\"']", re.MULTILINE)


@cache
def litellm_providers() -> frozenset[str] | None:
    """Every provider prefix litellm accepts, or None when litellm is missing or its layout is not the expected one."""
    spec = importlib.util.find_spec("litellm")  # a top-level name: found, not imported
    if spec is None or not spec.submodule_search_locations:
        return None
    package = Path(next(iter(spec.submodule_search_locations)))
    try:
        source = (package / "types" / "utils.py").read_text(encoding="utf-8")
    except OSError:
        return None
    enum = _ENUM.search(source)
    if enum is None:
        return None
    names = set(_MEMBER.findall(enum["body"]))
    try:
        configured = json.loads((package / "llms" / "openai_like" / "providers.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        configured = {}
    if isinstance(configured, dict):
        names.update(str(name) for name in configured)
    return frozenset(names) if names else None
