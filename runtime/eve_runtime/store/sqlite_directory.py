"""The local store's directory: the lock that keeps it to one process, and its free space."""

from __future__ import annotations

import errno
import fcntl
import os
from pathlib import Path

from eve_runtime.store.base import StoreError, StoreLocked

__all__ = ["LOCK_NAME", "drop_lock", "free_megabytes", "take_lock"]

LOCK_NAME = "LOCK"
_MB = 1024 * 1024


def take_lock(directory: Path) -> int:
    """Lock the store directory for this process; the lock file's descriptor."""
    path = directory / LOCK_NAME
    try:
        directory.mkdir(parents=True, exist_ok=True)
        fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
    except OSError as exc:
        raise StoreError(f"Cannot create the eve store's lock file {str(path)!r}: {exc}") from exc
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError as exc:
        holder = os.pread(fd, 64, 0).decode("ascii", "replace").strip() or "unknown"
        os.close(fd)
        if exc.errno not in (errno.EWOULDBLOCK, errno.EAGAIN, errno.EACCES):
            raise StoreError(f"Cannot lock the eve store in {str(directory)!r}: {exc}") from exc
        which = "this process" if holder == str(os.getpid()) else "another process"
        raise StoreLocked(
            f"The eve store in {str(directory)!r} is already open in {which} (pid {holder}): eve serves one "
            f"store from one process. Stop that process (pid {holder}), or talk to the eve server it runs, "
            "and try again."
        ) from None
    except BaseException:
        os.close(fd)
        raise
    try:
        os.ftruncate(fd, 0)
        os.pwrite(fd, f"{os.getpid()}\n".encode("ascii"), 0)
    except BaseException:
        os.close(fd)
        raise
    return fd


def free_megabytes(directory: Path) -> float:
    """Megabytes an unprivileged writer may still use on the file system holding `directory`."""
    stats = os.statvfs(directory)
    return stats.f_bavail * stats.f_frsize / _MB


def drop_lock(fd: int) -> None:
    """Unlock the store directory and close the lock file (emptied first)."""
    try:
        os.ftruncate(fd, 0)
        fcntl.flock(fd, fcntl.LOCK_UN)
    finally:
        os.close(fd)
