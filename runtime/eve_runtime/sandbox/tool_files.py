"""The framework's `read_file` and `write_file` tools, with eve's inputs, results and read-before-write rule.

`read_file {"filePath", "offset"?, "limit"?}` returns `{"content", "path", "totalLines",
"truncated", "nextOffset"?}`: lines numbered `N: text`, 2000 from `offset` (1-based) by default,
each cut at 2000 characters, 50 KiB in all; `nextOffset` says where to read on. It records a
digest of the whole text it read.

`write_file {"filePath", "content"}` returns `{"existed", "path"}`. A new file is written at
once; an existing one only after `read_file` read it, and only if it has not changed since
(the digest must match): otherwise the call fails and says to read the file again.

Paths are absolute (`/workspace/...`, `$HOME/...`); relative ones resolve under `/workspace`.
"""

from __future__ import annotations

import hashlib
from typing import Annotated, Any

from pydantic import Field

from eve_runtime.authoring.context import ToolContext
from eve_runtime.authoring.tools import tool
from eve_runtime.sandbox.truncate import MAX_OUTPUT_BYTES, cap_line

__all__ = [
    "READ_FILE_DESCRIPTION",
    "READ_FILE_INPUT_SCHEMA",
    "WRITE_FILE_DESCRIPTION",
    "WRITE_FILE_INPUT_SCHEMA",
    "read_file",
    "stamp_of",
    "write_file",
]

DEFAULT_LIMIT = 2000
MAX_FILE_BYTES = 64 * 1024 * 1024
"""The largest file `read_file` reads (and `write_file` replaces): beyond it, bash reads parts of it."""

READ_FILE_DESCRIPTION = "\n".join(
    [
        "Read a file from the sandbox. If the path does not exist, an error is returned.",
        "",
        "Usage:",
        "- The filePath parameter should be an absolute path (under /workspace) or begin with $HOME/.",
        "- By default, this tool returns up to 2000 lines from the start of the file.",
        "- The offset parameter is the line number to start from (1-indexed).",
        "- To read later sections, call this tool again with a larger offset.",
        "- Contents are returned with each line prefixed by its line number as `<line>: <content>`.",
        "- Any line longer than 2000 characters is truncated.",
        "- Call this tool in parallel when you know there are multiple files you want to read.",
    ]
)
WRITE_FILE_DESCRIPTION = "\n".join(
    [
        "Writes a file in the sandbox.",
        "",
        "Usage:",
        "- This tool will overwrite the existing file if there is one at the provided path.",
        "- If this is an existing file, you MUST use the read_file tool first to read the file's contents. "
        "This tool will fail if you did not read the file first.",
        "- ALWAYS prefer editing existing files. NEVER write new files unless explicitly required.",
    ]
)
READ_FILE_INPUT_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "filePath": {
            "type": "string",
            "description": "The absolute path to the file to read. A leading $HOME is supported.",
        },
        "limit": {
            "type": "integer",
            "minimum": 1,
            "description": "Maximum number of lines to return. Defaults to 2000.",
        },
        "offset": {"type": "integer", "minimum": 1, "description": "1-based line number to start from. Defaults to 1."},
    },
    "required": ["filePath"],
    "additionalProperties": False,
}
WRITE_FILE_INPUT_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "content": {"type": "string", "description": "Complete replacement file contents."},
        "filePath": {
            "type": "string",
            "description": "The absolute path to the file to write. A leading $HOME is supported.",
        },
    },
    "required": ["content", "filePath"],
    "additionalProperties": False,
}


def stamp_of(content: str) -> str:
    """The digest `read_file` records and `write_file` compares."""
    encoded = content.encode("utf-8")
    return f"sha256:{hashlib.sha256(encoded).hexdigest()}:{len(encoded)}"


def _numbered(lines: list[str], offset: int) -> tuple[list[str], bool]:
    out: list[str] = []
    size = 0
    for index, raw in enumerate(lines):
        numbered = f"{offset + index}: {cap_line(raw)}"
        cost = len(numbered.encode("utf-8")) + 1
        if size + cost > MAX_OUTPUT_BYTES and out:
            return out, True
        out.append(numbered)
        size += cost
    return out, False


@tool(description=READ_FILE_DESCRIPTION)
async def read_file(
    filePath: Annotated[str, Field(description="The absolute path to the file to read. A leading $HOME is supported.")],
    ctx: ToolContext,
    limit: Annotated[
        int | None, Field(ge=1, description="Maximum number of lines to return. Defaults to 2000.")
    ] = None,
    offset: Annotated[int | None, Field(ge=1, description="1-based line number to start from. Defaults to 1.")] = None,
) -> dict[str, Any]:
    """Read a text file from the sandbox, with line numbers."""
    sandbox = await ctx.get_sandbox()
    path = sandbox.resolve_path(filePath)
    raw = await sandbox.read_file(path, limit=MAX_FILE_BYTES)
    if raw is None:
        raise FileNotFoundError(f"File not found: {filePath}. Verify the path exists and is accessible in the sandbox.")
    if b"\0" in raw:
        raise ValueError(
            f"File {filePath!r} contains NUL bytes and appears to be a binary file. read_file only supports text files."
        )
    text = raw.decode("utf-8", errors="replace")
    start = offset or 1
    lines = text.split("\n")
    total = len(lines) - 1 if lines[-1] == "" else len(lines)
    if total == 0 and start > 1:
        raise ValueError(
            f"offset {start} is past the end of the file (0 lines). Use the default offset to read an empty file."
        )
    if total and start > total:
        raise ValueError(f"offset {start} is past the end of the file ({total} lines).")
    await sandbox.set_read_stamp(path, stamp_of(text))
    if total == 0:
        return {"content": "", "path": path, "totalLines": 0, "truncated": False}
    selected = lines[start - 1 : min(start - 1 + (limit or DEFAULT_LIMIT), total)]
    out, cut_by_size = _numbered(selected, start)
    last = start + len(out) - 1
    result: dict[str, Any] = {"content": "\n".join(out), "path": path, "totalLines": total}
    if last < total or cut_by_size:
        result["nextOffset"] = last + 1
        result["truncated"] = True
    else:
        result["truncated"] = False
    return result


@tool(description=WRITE_FILE_DESCRIPTION)
async def write_file(
    content: Annotated[str, Field(description="Complete replacement file contents.")],
    filePath: Annotated[
        str, Field(description="The absolute path to the file to write. A leading $HOME is supported.")
    ],
    ctx: ToolContext,
) -> dict[str, Any]:
    """Write a whole text file in the sandbox (read an existing one first)."""
    sandbox = await ctx.get_sandbox()
    path = sandbox.resolve_path(filePath)
    current = await sandbox.read_text_file(path, limit=MAX_FILE_BYTES)
    if current is not None:
        recorded = await sandbox.read_stamp(path)
        if recorded is None:
            raise PermissionError(f"You must read file {filePath} before overwriting it. Use the read_file tool first.")
        if recorded != stamp_of(current):
            raise PermissionError(
                f"File {filePath} has been modified since it was last read. "
                "Please read the file again before modifying it."
            )
    await sandbox.write_text_file(path, content)
    await sandbox.set_read_stamp(path, stamp_of(content))
    return {"existed": current is not None, "path": path}
