"""Files of one sandbox tree opened through directory descriptors, so no link swapped in can lead out.

The file tools run in the server's process on the workspace's folders while the sandbox's own
commands may change those folders at the same moment. Checking a path and then opening it
would leave a gap in which a folder is replaced by a symbolic link to `/etc` (or anywhere). So
a path is walked one component at a time from a descriptor of the tree's root, each one opened
with `O_NOFOLLOW` relative to the folder before it: the kernel never follows a link. A link met
on the way is read and resolved here, inside the tree (a relative target from where it is, an
absolute one only when it names the same tree as the sandbox's commands see it), and refused
when it leads anywhere else. `..` pops the folders walked so far, never past the root.

Only regular files are read or replaced: a named pipe, socket or device is refused at once
(opened without blocking, then checked), since reading a pipe nobody writes would wait for ever.
"""

from __future__ import annotations

import contextlib
import errno
import os
import secrets
import stat
from collections.abc import Iterator, Sequence
from pathlib import Path

from eve_runtime.authoring.sandbox_session import SandboxError, SandboxPathError

__all__ = ["FileTooLargeError", "NotRegularFileError", "TreeFiles", "kind_of", "read_regular", "walk_folder"]

_DIR = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC
_READ = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC
_MAX_LINKS = 40
_CHUNK = 1024 * 1024
_MAX_DEPTH = 64


class NotRegularFileError(SandboxError, OSError):
    """A path names a named pipe, a socket or a device, which the file tools do not open."""


class FileTooLargeError(SandboxError, OSError):
    """A file is larger than the caller reads at once."""


def kind_of(mode: int) -> str:
    """What a file that is not regular is, in words."""
    if stat.S_ISFIFO(mode):
        return "a named pipe (FIFO)"
    if stat.S_ISSOCK(mode):
        return "a socket"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device"
    return "not a regular file"


class _Walk:
    """The open folders from the root to where the walk is (closed together)."""

    def __init__(self, root_fd: int) -> None:
        self.fds = [root_fd]

    @property
    def here(self) -> int:
        return self.fds[-1]

    def close(self) -> None:
        for fd in self.fds:
            os.close(fd)
        self.fds = []


class TreeFiles:
    """One of a sandbox's trees (the workspace or the home folder) on this machine."""

    def __init__(self, root: Path, aliases: Sequence[str]) -> None:
        self.root = root
        self.aliases = tuple(sorted({a.rstrip("/") for a in (*aliases, str(root)) if a.rstrip("/")}, key=len))
        """Absolute paths that name the root in a link's target (`/workspace`, the folder itself)."""

    # -- walking ---------------------------------------------------------------------------

    def _rebase(self, target: str, display: str) -> list[str]:
        for alias in reversed(self.aliases):
            if target == alias or target.startswith(alias + "/"):
                return target[len(alias) :].split("/")
        raise SandboxPathError(f"{display!r} leads outside the sandbox (through a symbolic link)")

    def _walk(self, relative: str, display: str, *, create: bool) -> tuple[_Walk, str]:
        """The folder holding the path's last component (links before it resolved), and that name."""
        walk = _Walk(os.open(self.root, _DIR))
        try:
            pending = [p for p in relative.split("/") if p not in ("", ".")]
            links = 0
            while True:
                if not pending:  # the tree's root, or a link's target ending on `..`
                    raise IsADirectoryError(errno.EISDIR, f"{display} is a folder, not a file")
                name = pending.pop(0)
                if name == "..":
                    if len(walk.fds) == 1:
                        raise SandboxPathError(f"{display!r} leads outside the sandbox (through a symbolic link)")
                    os.close(walk.fds.pop())
                    continue
                if name in ("", "."):
                    continue
                target = _link_target(walk.here, name)
                if target is not None:
                    links += 1
                    if links > _MAX_LINKS:
                        raise SandboxPathError(f"{display!r}: too many levels of symbolic links")
                    if target.startswith("/"):
                        parts = self._rebase(target, display)
                        for fd in walk.fds[1:]:
                            os.close(fd)
                        del walk.fds[1:]
                    else:
                        parts = target.split("/")
                    pending = [p for p in parts if p not in ("", ".")] + pending
                    continue
                if not pending:
                    return walk, name
                walk.fds.append(self._enter(walk.here, name, display, create=create))
        except BaseException:
            walk.close()
            raise

    @staticmethod
    def _enter(parent: int, name: str, display: str, *, create: bool) -> int:
        try:
            return os.open(name, _DIR, dir_fd=parent)
        except FileNotFoundError:
            if not create:
                raise FileNotFoundError(errno.ENOENT, f"{display} does not exist") from None
        except (NotADirectoryError, OSError) as exc:
            if exc.errno in (errno.ENOTDIR, errno.ELOOP):
                if _link_target(parent, name) is not None:
                    raise SandboxPathError(f"{display!r} changed while it was opened: try again") from None
                raise NotADirectoryError(errno.ENOTDIR, f"a part of {display} is not a folder") from None
            raise
        with contextlib.suppress(FileExistsError):
            os.mkdir(name, 0o777, dir_fd=parent)
        return os.open(name, _DIR, dir_fd=parent)

    def check(self, relative: str, display: str) -> None:
        """Raise `SandboxPathError` when the path's links lead out of the tree (a missing path is fine)."""
        try:
            walk, _ = self._walk(relative, display, create=False)
        except (FileNotFoundError, NotADirectoryError, IsADirectoryError):
            return
        walk.close()

    # -- folders -----------------------------------------------------------------------------

    def open_folder(self, relative: str, display: str) -> int:
        """A descriptor of a folder of the tree (the caller closes it)."""
        if not [p for p in relative.split("/") if p not in ("", ".")]:
            return os.open(self.root, _DIR)
        walk, name = self._walk(relative, display, create=False)
        try:
            return os.open(name, _DIR, dir_fd=walk.here)
        except FileNotFoundError:
            raise FileNotFoundError(errno.ENOENT, f"{display} does not exist") from None
        except OSError as exc:
            if exc.errno in (errno.ENOTDIR, errno.ELOOP):
                raise NotADirectoryError(errno.ENOTDIR, f"{display} is not a folder") from None
            raise
        finally:
            walk.close()

    def is_folder(self, relative: str, display: str) -> bool:
        """Whether the path is a folder of the tree (links inside it resolved)."""
        try:
            os.close(self.open_folder(relative, display))
        except (FileNotFoundError, NotADirectoryError, IsADirectoryError):
            return False
        return True

    # -- reading -----------------------------------------------------------------------------

    def read(self, relative: str, display: str, *, limit: int | None = None) -> bytes | None:
        """A regular file's bytes; None when there is no such file.

        Raises:
            IsADirectoryError: The path is a folder.
            NotRegularFileError: The path is a named pipe, socket or device.
            FileTooLargeError: The file has more than `limit` bytes.
            SandboxPathError: A link leads out of the tree.
        """
        try:
            walk, name = self._walk(relative, display, create=False)
        except (FileNotFoundError, NotADirectoryError):
            return None
        try:
            try:
                fd = os.open(name, _READ, dir_fd=walk.here)
            except FileNotFoundError:
                return None
            except OSError as exc:
                if exc.errno == errno.ELOOP:
                    raise SandboxPathError(f"{display!r} changed while it was opened: try again") from None
                if exc.errno == errno.ENXIO:
                    raise NotRegularFileError(errno.ENXIO, f"{display} is a socket, not a regular file") from None
                raise
        finally:
            walk.close()
        with os.fdopen(fd, "rb", buffering=0, closefd=True) as handle:
            return read_regular(handle.fileno(), display, limit)

    def read_in(self, folder_fd: int, name: str, display: str, limit: int | None) -> bytes | None:
        """A regular file `name` right inside an open folder; None for a link, a special file or one past `limit`."""
        try:
            fd = os.open(name, _READ, dir_fd=folder_fd)
        except OSError:
            return None
        try:
            return read_regular(fd, display, limit)
        except (NotRegularFileError, FileTooLargeError, IsADirectoryError, OSError):
            return None
        finally:
            os.close(fd)

    # -- writing -----------------------------------------------------------------------------

    def write(self, relative: str, display: str, data: bytes) -> None:
        """Replace a regular file (or create it, with its folders) in one step; its mode is kept."""
        walk, name = self._walk(relative, display, create=True)
        try:
            folder = walk.here
            mode = 0o666  # less the umask, as any new file
            try:
                current = os.stat(name, dir_fd=folder, follow_symlinks=False)
            except FileNotFoundError:
                current = None
            if current is not None:
                if stat.S_ISDIR(current.st_mode):
                    raise IsADirectoryError(errno.EISDIR, f"{display} is a folder")
                if stat.S_ISLNK(current.st_mode):
                    raise SandboxPathError(f"{display!r} changed while it was opened: try again")
                if not stat.S_ISREG(current.st_mode):
                    raise NotRegularFileError(errno.EINVAL, f"{display} is {kind_of(current.st_mode)}, not a file")
            temporary = f".{name[:200]}.{secrets.token_hex(4)}.eve-tmp"
            fd = os.open(
                temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, mode, dir_fd=folder
            )
            try:
                with os.fdopen(fd, "wb", closefd=True) as handle:
                    if current is not None:
                        os.fchmod(handle.fileno(), stat.S_IMODE(current.st_mode))
                    handle.write(data)
                os.replace(temporary, name, src_dir_fd=folder, dst_dir_fd=folder)
            except BaseException:
                with contextlib.suppress(OSError):
                    os.unlink(temporary, dir_fd=folder)
                raise
        finally:
            walk.close()


def read_regular(fd: int, display: str, limit: int | None) -> bytes:
    """The bytes of an open file that must be regular (and at most `limit` bytes)."""
    info = os.fstat(fd)
    if stat.S_ISDIR(info.st_mode):
        raise IsADirectoryError(errno.EISDIR, f"{display!r} is a folder, not a file")
    if not stat.S_ISREG(info.st_mode):
        raise NotRegularFileError(errno.EINVAL, f"{display} is {kind_of(info.st_mode)}, not a regular file")
    if limit is not None and info.st_size > limit:
        raise FileTooLargeError(errno.EFBIG, _too_large(display, info.st_size, limit))
    chunks: list[bytes] = []
    size = 0
    while chunk := os.read(fd, _CHUNK):
        chunks.append(chunk)
        size += len(chunk)
        if limit is not None and size > limit:  # it grew since fstat
            raise FileTooLargeError(errno.EFBIG, _too_large(display, size, limit))
    return b"".join(chunks)


def _too_large(display: str, size: int, limit: int) -> str:
    return (
        f"{display} has {size} bytes, more than the {limit} this reads at once: "
        "read parts of it with bash (head, tail, sed -n '100,200p')"
    )


def _link_target(folder: int, name: str) -> str | None:
    """Where `name` in `folder` points when it is a symbolic link; None when it is anything else or nothing."""
    try:
        return os.readlink(name, dir_fd=folder)
    except OSError:
        return None


def walk_folder(folder_fd: int, skipped: frozenset[str]) -> Iterator[tuple[str, int, str]]:
    """Each entry under an open folder that is neither a folder nor a link, as (relative path, folder fd, name).

    Sorted, a folder's own entries before its subfolders'. Each subfolder is opened from its parent
    with `O_NOFOLLOW | O_DIRECTORY` (without blocking), so a folder swapped for a link or a pipe
    is skipped; the descriptor is valid until the next item. Deeper than 64 folders is not searched.
    """
    yield from _walk(folder_fd, "", skipped, 0)


def _walk(fd: int, prefix: str, skipped: frozenset[str], depth: int) -> Iterator[tuple[str, int, str]]:
    folders: list[str] = []
    files: list[str] = []
    try:
        with os.scandir(fd) as entries:
            for entry in entries:
                try:
                    if entry.is_symlink():
                        continue  # as ripgrep: links are not followed
                    (folders if entry.is_dir(follow_symlinks=False) else files).append(entry.name)
                except OSError:
                    continue
    except OSError:
        return
    for name in sorted(files):
        yield prefix + name, fd, name
    if depth >= _MAX_DEPTH:
        return
    for name in sorted(folders):
        if name in skipped:
            continue
        try:
            child = os.open(name, _DIR, dir_fd=fd)
        except OSError:
            continue
        try:
            yield from _walk(child, f"{prefix}{name}/", skipped, depth + 1)
        finally:
            os.close(child)
