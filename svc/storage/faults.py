"""Fault injection for the storage writes: inert unless ``SVC_FAULT_INJECTION`` is set.

Tests (``tests/reliability/``) set ``SVC_FAULT_INJECTION`` to the path of a control file
before starting a server; nothing else should. Each line of the file names a write site,
a fault and optionally how many calls fail before the site works again::

    wal.write enospc        # every WAL write fails with ENOSPC while the line is there
    wal.sync eio 1          # the next fdatasync of the WAL fails once with EIO
    lake.write short        # Parquet writes stop half way, then fail with ENOSPC
    disk.usage 0.97         # the data directory's filesystem reports 97% used
    compactor.swap kill 1   # the process SIGKILLs itself at that point of a compaction

Sites: ``wal.write``, ``wal.sync``, ``wal.truncate``, ``wal.open`` (a new segment),
``lake.write``, ``lake.sync``, ``skip.write``, ``skip.sync`` (a skipping index's sidecar),
``catalog.commit``, ``disk.usage`` and the read site ``skip.read`` (a sidecar). Faults:
``enospc``, ``eio``, for writes ``short`` (half the bytes land, then ENOSPC) and for reads
``flip`` (one bit of the bytes read is turned: damage that keeps the length). The ``kill``
fault works at any site, and at the crash points of compaction jobs (``compactor.written``: the
new files are on disk, ``compactor.swap``: inside the catalog transaction,
``compactor.swapped``: after it, ``compactor.removing``: between two removals): the
process sends itself SIGKILL there, a ``kill -9`` at an exact moment. The file is read
again whenever it changes, so a test turns faults on and off while the server runs.
Without the variable every function here is the plain system call.
"""

from __future__ import annotations

import errno
import os
import signal
import sqlite3
import threading
from pathlib import Path

__all__ = [
    "ENV_VAR",
    "catalog_check",
    "check",
    "check_file",
    "crash_point",
    "disk_usage",
    "fdatasync",
    "ftruncate",
    "read_bytes",
    "write_all",
]

ENV_VAR = "SVC_FAULT_INJECTION"

_ERRNOS = {"enospc": errno.ENOSPC, "eio": errno.EIO, "short": errno.ENOSPC}


class _Injector:
    """The faults of one control file, re-read when the file changes."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._lock = threading.Lock()
        self._text: str | None = None
        self._faults: dict[str, list[str | int | None]] = {}

    def fault(self, site: str) -> str | None:
        """The fault the next call at ``site`` suffers, if any (counted faults run down)."""
        with self._lock:
            self._reload()
            found = self._faults.get(site)
            if found is None:
                return None
            kind, remaining = found
            if isinstance(remaining, int):
                if remaining <= 0:
                    return None
                found[1] = remaining - 1
        if kind == "kill":  # at any site, whatever the call would otherwise do
            os.kill(os.getpid(), signal.SIGKILL)
        return str(kind)

    def _reload(self) -> None:
        # Read on every call (test mode only): a changed mtime can go unnoticed between
        # two quick writes, a changed text cannot.
        try:
            text = self.path.read_text()
        except FileNotFoundError:
            text = ""
        if text == self._text:
            return
        self._text = text
        faults: dict[str, list[str | int | None]] = {}
        for line in text.splitlines():
            words = line.split("#", 1)[0].split()
            if len(words) >= 2:
                faults[words[0]] = [words[1], int(words[2]) if len(words) > 2 else None]
        self._faults = faults


def _from_environment() -> _Injector | None:
    path = os.environ.get(ENV_VAR)
    return _Injector(Path(path)) if path else None


_injector = _from_environment()


def _error(kind: str) -> OSError:
    code = _ERRNOS.get(kind, errno.EIO)
    return OSError(code, os.strerror(code))


def crash_point(site: str) -> None:
    """Die by SIGKILL here when ``site`` is faulted with ``kill`` (other faults raise)."""
    check(site)


def check(site: str) -> None:
    """Raise the error configured for ``site`` (a write that has no call of its own here)."""
    if _injector is not None and (kind := _injector.fault(site)) is not None:
        raise _error(kind)


def check_file(site: str, path: Path) -> None:
    """Raise the error configured for ``site`` after writing ``path``; ``short`` first cuts
    the file in half, as a write that stopped part way would leave it."""
    if _injector is not None and (kind := _injector.fault(site)) is not None:
        if kind == "short":
            os.truncate(path, path.stat().st_size // 2)
        raise _error(kind)


def read_bytes(site: str, data: bytes) -> bytes:
    """``data`` as read at ``site``: with ``flip``, one bit in the middle turned; other
    faults raise their error."""
    if _injector is None or (kind := _injector.fault(site)) is None:
        return data
    if kind != "flip":
        raise _error(kind)
    if not data:
        return data
    middle = len(data) // 2
    return data[:middle] + bytes([data[middle] ^ 0x10]) + data[middle + 1 :]


def catalog_check() -> None:
    """Raise SQLite's error for a failed commit when ``catalog.commit`` is faulted."""
    if _injector is not None and (kind := _injector.fault("catalog.commit")) is not None:
        if kind == "kill":
            _error(kind)
        text = "database or disk is full" if kind != "eio" else "disk I/O error"
        raise sqlite3.OperationalError(text)


def write_all(site: str, fd: int, data: bytes) -> None:
    """Write every byte of ``data`` to ``fd`` (looping over short writes)."""
    view = memoryview(data)
    if _injector is not None and (kind := _injector.fault(site)) is not None:
        if kind == "short":
            os.write(fd, view[: len(view) // 2])
        raise _error(kind)
    while view:
        written = os.write(fd, view)
        view = view[written:]


def fdatasync(site: str, fd: int) -> None:
    """``os.fdatasync``, or the fault configured for ``site``."""
    check(site)
    os.fdatasync(fd)


def ftruncate(site: str, fd: int, length: int) -> None:
    """``os.ftruncate``, or the fault configured for ``site``."""
    check(site)
    os.ftruncate(fd, length)


def disk_usage(path: Path) -> float:
    """Used share (0 to 1) of the filesystem holding ``path``, as ``df`` counts it."""
    if _injector is not None and (value := _injector.fault("disk.usage")) is not None:
        return float(value)
    stat = os.statvfs(path)
    if stat.f_blocks == 0:
        return 0.0
    return (stat.f_blocks - stat.f_bfree) / stat.f_blocks
