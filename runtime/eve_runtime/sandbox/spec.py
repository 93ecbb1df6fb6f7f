"""What a new workspace of one agent is made from: its definition, its seed, its skills, and their revision.

The compiler builds a `SandboxSpec` per agent. A new workspace gets the seed
(`agent/sandbox/workspace/**`) copied into `/workspace`, each skill's files under
`$HOME/.agents/skills/<skill>/`, then the bootstrap commands. The revision is a digest of all of
that (the environment's values included, never shown): `eve info` reports it, and each
workspace records the revision it was made from; a later change makes new workspaces from the
new revision and leaves existing ones as they are.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path

from eve_runtime.authoring.sandbox import SandboxConfig

__all__ = ["SKILLS_FOLDER", "SandboxSpec", "SkillFiles", "seed_files"]

SKILLS_FOLDER = ".agents/skills"
"""Under `$HOME`: where each skill's files go (`$HOME/.agents/skills/<skill>/SKILL.md`)."""


@dataclass(frozen=True)
class SkillFiles:
    """One skill's files by relative path (`SKILL.md` included), as the compiler read or generated them."""

    name: str
    files: Mapping[str, bytes]


def seed_files(seed_dir: Path | None) -> Iterator[tuple[str, Path]]:
    """The seed's files, by path relative to the seed folder, sorted (caches and `.git` left out)."""
    if seed_dir is None or not seed_dir.is_dir():
        return
    for path in sorted(seed_dir.rglob("*")):
        relative = path.relative_to(seed_dir)
        if any(part in ("__pycache__", ".git") for part in relative.parts):
            continue
        if path.is_file() and not path.is_symlink():
            yield relative.as_posix(), path


@dataclass(frozen=True)
class SandboxSpec:
    """One agent's sandbox: its definition, seed folder and skills."""

    config: SandboxConfig = field(default_factory=SandboxConfig)
    seed_dir: Path | None = None
    skills: tuple[SkillFiles, ...] = ()

    @cached_property
    def revision(self) -> str:
        """A digest of everything a new workspace is made from (`sha256:...`)."""
        digest = hashlib.sha256()
        config = self.config
        described = {
            "backend": config.backend_kind,
            "bootstrap": list(config.bootstrap),
            "environment": {k: hashlib.sha256(v.encode()).hexdigest() for k, v in sorted(config.environment.items())},
            "network": [config.network.mode, list(config.network.allow)],
            "timeoutSeconds": config.timeout_seconds,
            "maxOutputBytes": config.max_output_bytes,
        }
        digest.update(json.dumps(described, sort_keys=True).encode())
        for relative, path in seed_files(self.seed_dir):
            digest.update(f"\0seed\0{relative}\0".encode())
            digest.update(path.read_bytes())
        for skill in self.skills:
            for relative, content in sorted(skill.files.items()):
                digest.update(f"\0skill\0{skill.name}/{relative}\0".encode())
                digest.update(content)
        return f"sha256:{digest.hexdigest()}"

    @property
    def seed_count(self) -> int:
        """How many files the seed holds."""
        return sum(1 for _ in seed_files(self.seed_dir))
