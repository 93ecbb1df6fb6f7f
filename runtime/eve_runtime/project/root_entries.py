"""What else sits in an agent folder: unsupported slots, unknown folders, and near-misses of eve's names.

A file or folder eve does not know is ignored, but one whose name is close to a name eve reads
(`instruction.md`, `tool/`) is almost always a typo: the diagnostic says which name was meant.
"""

from __future__ import annotations

from eve_runtime import diagnostics as dg
from eve_runtime.diagnostics import Diagnostic, closest
from eve_runtime.project.grammar import Entry

__all__ = [
    "AGENT_FILES",
    "SLOT_DIRECTORIES",
    "UNSUPPORTED_SLOTS",
    "check_root_entries",
    "misnamed_files",
    "slot_directories",
]

SLOT_DIRECTORIES = frozenset(
    {"tools", "skills", "hooks", "schedules", "subagents", "lib", "instructions", "sandbox", "connections"}
)
UNSUPPORTED_SLOTS = {
    "memory": "memory slots",
    "instrumentation": "instrumentation",
    "extensions": "extensions",
}
"""eve slots this version does not run yet: reported once as a warning, never silently ignored."""
AGENT_FILES = ("agent.py", "instructions.md", "instructions.py", "sandbox.py")
"""The files eve reads at the top of an agent folder."""

_CLOSE = 0.75
"""How alike two names must be to call one a typo of the other (`utils` is not `tools`: 0.6)."""


def slot_directories(*, is_root: bool) -> frozenset[str]:
    """The folders eve reads in an agent folder (channels only at the root)."""
    return SLOT_DIRECTORIES | {"channels"} if is_root else SLOT_DIRECTORIES


def misnamed_files(entries: list[Entry]) -> dict[str, str]:
    """The files at an agent root whose names look like a misspelt eve file, each with the name meant.

    Editor and build leftovers (`agent.py~`, `agent.py.bak`, dotfiles) are not typos.
    """
    # only instructions.md is matched in any case, as in eve; `Agent.py` is not `agent.py`
    present = {"instructions.md" if e.name.lower() == "instructions.md" else e.name for e in entries}
    found: dict[str, str] = {}
    for entry in entries:
        name = entry.name
        if (
            entry.is_dir
            or name.startswith(".")
            or name in present & set(AGENT_FILES)
            or name.lower() == "instructions.md"
        ):
            continue
        if name.lower().startswith("system."):
            continue
        if any(len(name) > len(known) and name.lower().startswith(known) for known in AGENT_FILES):
            continue
        meant = closest(name, [known for known in AGENT_FILES if known not in present], cutoff=_CLOSE)
        if meant is not None:
            found[name] = meant
    return found


def check_root_entries(
    entries: list[Entry],
    misnamed: dict[str, str],
    *,
    is_root: bool,
    ignored: frozenset[str],
    node_id: str,
    diagnostics: list[Diagnostic],
) -> None:
    """Warn about the folders and files of an agent root that eve will not read."""
    slots = slot_directories(is_root=is_root)
    for entry in entries:
        if not entry.is_dir or entry.name in ignored or entry.name in slots or entry.name == "schedules":
            continue
        if entry.name in UNSUPPORTED_SLOTS:
            diagnostics.append(_unsupported(entry, UNSUPPORTED_SLOTS[entry.name], node_id))
            continue
        where = " in a subagent (channels belong to the root agent)" if entry.name == "channels" else ""
        meant = closest(entry.name, sorted(slots | {"schedules"}), cutoff=_CLOSE)
        hint = f" Did you mean {meant + '/'!r}?" if meant is not None and not where else ""
        diagnostics.append(
            dg.warning(
                "discover/unsupported-directory",
                f"Ignoring unsupported directory {str(entry.path)!r}{where}.{hint} Agent folders hold tools/, "
                "skills/, hooks/, schedules/, subagents/, instructions/ and lib/; put helper code in lib/.",
                entry.path,
                node_id=node_id,
            )
        )
    by_name = {entry.name: entry for entry in entries}
    for slot in sorted(UNSUPPORTED_SLOTS):
        file = by_name.get(f"{slot}.py")
        if file is not None and not file.is_dir:
            diagnostics.append(_unsupported(file, UNSUPPORTED_SLOTS[slot], node_id))
    for name, meant in misnamed.items():
        entry = by_name[name]
        diagnostics.append(
            dg.warning(
                "discover/file-name-unknown",
                f"Ignoring {name!r}: eve reads no file of that name. Did you mean {meant!r}? Rename it.",
                entry.path,
                node_id=node_id,
            )
        )


def _unsupported(entry: Entry, what: str, node_id: str) -> Diagnostic:
    label = f"{entry.name}/" if entry.is_dir else entry.name
    return dg.warning(
        "discover/slot-unsupported",
        f"Ignoring {label}: {what} are not supported by this version of eve for Python yet.",
        entry.path,
        node_id=node_id,
    )
