"""Skills: procedures the model loads on demand (`agent/skills/`).

A skill is advertised to the model by its description; the framework tool `load_skill` adds its
body to the turn when the model asks. Three forms: `skills/<name>.md` (frontmatter optional),
`skills/<name>/SKILL.md` packages (with `references/`, `assets/`, `scripts/`), and
`skills/<name>.py` holding `define_skill(...)` (or a `define_dynamic` resolver returning skills).
A running tool reads a package file with `ctx.get_skill(name).file(path).text()`.
"""

from __future__ import annotations

import builtins
from collections.abc import Mapping
from dataclasses import dataclass, field

from eve_runtime.errors import DefinitionError

__all__ = ["Skill", "SkillFile", "SkillHandle", "define_skill", "describe_markdown", "skill_path_problem"]


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
        if not isinstance(path, str) or not isinstance(content, str) or skill_path_problem(path) is not None:
            raise DefinitionError(
                f"define_skill(): 'files' entry {path!r} must map a relative path inside the skill to its text",
                field="files",
            )
        if path.lower() == "skill.md":
            raise DefinitionError(
                "define_skill(): 'files' cannot hold SKILL.md: eve writes it from 'description' and 'markdown'",
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


def skill_path_problem(path: str) -> str | None:
    """Why `path` is not a file path inside a skill package (None when it is one)."""
    segments = path.split("/")
    if not path or path.startswith("/") or "\\" in path or any(s in ("", ".", "..") for s in segments):
        return f"{path!r} is not a relative path inside the skill (like 'references/api.md')"
    return None


@dataclass(frozen=True)
class SkillFile:
    """One file of a skill package, read from the compiled skill."""

    skill: str
    path: str
    content: builtins.bytes | None = field(default=None, repr=False)

    def bytes(self) -> builtins.bytes:
        """The file's bytes.

        Raises:
            FileNotFoundError: The skill has no such file.
        """
        if self.content is None:
            raise FileNotFoundError(f"The skill {self.skill!r} has no file {self.path!r}.")
        return self.content

    def text(self, encoding: str = "utf-8") -> str:
        """The file's text.

        Raises:
            FileNotFoundError: The skill has no such file.
            UnicodeDecodeError: The file is not text in `encoding`.
        """
        return self.bytes().decode(encoding)


@dataclass(frozen=True)
class SkillHandle:
    """A skill of the running agent, as `ctx.get_skill(name)` returns it."""

    name: str
    files: Mapping[str, builtins.bytes] = field(default_factory=dict, repr=False)
    """Every file of the package by relative path, `SKILL.md` included."""

    @property
    def paths(self) -> list[str]:
        """The package's file paths, sorted."""
        return sorted(self.files)

    def file(self, path: str) -> SkillFile:
        """A file of the package by its path relative to the skill folder (`references/api.md`).

        Raises:
            ValueError: The path leaves the skill folder or is not relative.
        """
        problem = skill_path_problem(path) if isinstance(path, str) else "the path must be a string"
        if problem is not None:
            raise ValueError(f"ctx.get_skill({self.name!r}).file(): {problem}")
        return SkillFile(self.name, path, self.files.get(path))
