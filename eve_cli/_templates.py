"""Finding and copying the app templates that `eve init` scaffolds from."""

from __future__ import annotations

import shutil
from pathlib import Path

__all__ = ["TemplateError", "list_templates", "render_template", "templates_root"]

PLACEHOLDER_SUFFIXES = {".py", ".md", ".toml", ".txt", ""}
RENAMES = {"gitignore": ".gitignore"}
"""Dotfiles are stored without their dot so that packaging never drops or applies them."""


class TemplateError(Exception):
    """The requested template does not exist."""


def templates_root() -> Path:
    """The folder holding the templates.

    In a wheel they are packaged as `eve_cli/templates`; in an editable install or a checkout
    they are the repository's top-level `templates/` (hatch copies force-included files next to
    the installed metadata, not into the checkout, so both places must be tried).
    """
    packaged = Path(__file__).resolve().parent / "templates"
    if packaged.is_dir():
        return packaged
    return Path(__file__).resolve().parents[1] / "templates"


def list_templates() -> list[str]:
    """The names of the available templates."""
    root = templates_root()
    return sorted(p.name for p in root.iterdir() if p.is_dir() and not p.name.startswith((".", "_")))


def render_template(name: str, target: Path, values: dict[str, str], *, only: str | None = None) -> list[Path]:
    """Copy template `name` into `target`, replacing `{{key}}` placeholders. Returns the files written.

    With `only`, just that top-level entry of the template is copied (`agent` for an existing
    project). The caller makes sure nothing is overwritten.
    """
    source = templates_root() / name
    if not source.is_dir():
        available = ", ".join(list_templates())
        raise TemplateError(f"There is no template {name!r}. Available templates: {available}.")
    written: list[Path] = []
    for path in sorted(source.rglob("*")):
        if path.is_dir() or "__pycache__" in path.parts:
            continue
        relative = path.relative_to(source)
        if only is not None and relative.parts[0] != only:
            continue
        destination = target / relative.parent / RENAMES.get(relative.name, relative.name)
        destination.parent.mkdir(parents=True, exist_ok=True)
        if path.suffix in PLACEHOLDER_SUFFIXES:
            text = path.read_text(encoding="utf-8")
            for key, value in values.items():
                text = text.replace("{{" + key + "}}", value)
            destination.write_text(text, encoding="utf-8")
        else:
            shutil.copyfile(path, destination)
        written.append(destination)
    return written
