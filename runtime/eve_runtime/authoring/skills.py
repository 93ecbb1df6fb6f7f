"""Skills: procedures the model loads on demand (`agent/skills/`).

A skill is advertised to the model by its description; the framework tool `load_skill` adds its
body to the turn when the model asks. Three forms: `skills/<name>.md` (frontmatter optional),
`skills/<name>/SKILL.md` packages (with `references/`, `assets/`, `scripts/`), and
`skills/<name>.py` holding `define_skill(...)`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from eve_runtime.errors import DefinitionError

__all__ = ["Skill", "define_skill", "describe_markdown"]


@dataclass(frozen=True)
class Skill:
    """A skill's definition."""

    description: str
    markdown: str
    files: Mapping[str, str] = field(default_factory=dict)
    """Package files by path relative to the skill folder (`references/api.md`)."""
    license: str | None = None
    metadata: Mapping[str, str] = field(default_factory=dict)


def define_skill(
    *,
    description: str,
    markdown: str,
    files: Mapping[str, str] | None = None,
    license: str | None = None,
    metadata: Mapping[str, str] | None = None,
) -> Skill:
    """Define a skill in code (`agent/skills/<name>.py`).

    Args:
        description: What the skill is for; the model sees it before loading the skill.
        markdown: The skill's instructions, added to the turn when it is loaded.
        files: Extra files of the skill package, by relative path.
        license: The skill's license, if any.
        metadata: String key/values reported in info.
    """
    if not isinstance(description, str) or not description.strip():
        raise DefinitionError("define_skill(): 'description' must be a non-empty string", field="description")
    if not isinstance(markdown, str):
        raise DefinitionError("define_skill(): 'markdown' must be a string", field="markdown")
    for path, content in (files or {}).items():
        if not isinstance(path, str) or not isinstance(content, str) or path.startswith("/") or ".." in path.split("/"):
            raise DefinitionError(
                f"define_skill(): 'files' entry {path!r} must map a relative path inside the skill to its text",
                field="files",
            )
    for key, value in (metadata or {}).items():
        if not isinstance(key, str) or not isinstance(value, str):
            raise DefinitionError("define_skill(): 'metadata' must map strings to strings", field="metadata")
    return Skill(
        description=description.strip(),
        markdown=markdown,
        files=dict(files or {}),
        license=license,
        metadata=dict(metadata or {}),
    )


def describe_markdown(name: str, body: str) -> str:
    """The description eve advertises for a markdown skill without a `description`.

    The first non-empty line that is not a code fence (three backticks), without leading `#`, `>`,
    `*`, `-` or spaces; `Instructions for the <name> skill.` when there is no such line or
    nothing is left of it (as in eve, a later line is not tried).
    """
    fallback = f"Instructions for the {name} skill."
    for raw in body.splitlines():
        line = raw.strip()
        if line and not line.startswith("```"):
            return line.lstrip("#>*- \t").strip() or fallback
    return fallback
