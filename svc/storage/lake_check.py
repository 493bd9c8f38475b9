"""Checks of the lake's files: verify, quarantine and sweep.

* :func:`check_file` is the cheap test run on every listed file at startup: the file
  exists, has the size the catalog recorded, and its Parquet footer reads.
* :func:`read_fully` decodes every page; it runs only on the files of a query that failed,
  to find the one that is damaged inside.
* :func:`quarantine` moves a bad file out of the lake, to ``<data>/quarantine/`` under the
  same relative path, so that nothing reading the lake by glob meets it again and the
  evidence is kept.
* :func:`sweep` removes the files a crash left behind: ``.parquet`` files the catalog does
  not list and ``.parquet.tmp`` files.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Iterable
from pathlib import Path

import pyarrow.fs as pafs
import pyarrow.parquet as pq

from svc.storage.lake_urls import parquet_file, resolve

__all__ = ["check_file", "lake_files", "quarantine", "read_fully", "sweep"]

log = logging.getLogger(__name__)

_MAGIC = b"PAR1"
_READ_BATCH_ROWS = 65_536


def check_file(path: Path | str, expected_bytes: int | None) -> str | None:
    """Why the file at a local path or lake URL is unusable (missing, wrong size,
    unreadable footer), or None."""
    where, filesystem = resolve(path)
    if filesystem is not None:
        return _check_object(where, filesystem, expected_bytes)
    path = Path(where)
    try:
        size = path.stat().st_size
    except FileNotFoundError:
        return "missing"
    except OSError as exc:
        return f"cannot stat: {exc}"
    if expected_bytes is not None and size != expected_bytes:
        return f"size {size} bytes, the catalog recorded {expected_bytes}"
    try:
        with path.open("rb") as handle:
            head = handle.read(4)
            handle.seek(max(size - 4, 0))
            tail = handle.read(4)
        if head != _MAGIC or tail != _MAGIC:
            return "no Parquet magic bytes"
        pq.read_metadata(path)
    except Exception as exc:  # pyarrow raises OSError, ArrowInvalid and friends
        return f"unreadable footer: {exc}"
    return None


def _check_object(key: str, filesystem: pafs.FileSystem, expected_bytes: int | None) -> str | None:
    try:
        info = filesystem.get_file_info(key)
    except OSError as exc:
        return f"cannot stat: {exc}"
    if info.type == pafs.FileType.NotFound:
        return "missing"
    if expected_bytes is not None and info.size != expected_bytes:
        return f"size {info.size} bytes, the catalog recorded {expected_bytes}"
    try:
        with filesystem.open_input_file(key) as handle:
            head = handle.read_at(4, 0)
            tail = handle.read_at(4, max(info.size - 4, 0))
            if head != _MAGIC or tail != _MAGIC:
                return "no Parquet magic bytes"
            pq.read_metadata(handle)
    except Exception as exc:
        return f"unreadable footer: {exc}"
    return None


def read_fully(path: Path | str) -> str | None:
    """Why the file cannot be decoded, page by page, or None when every page reads."""
    reason = check_file(path, None)
    if reason is not None:
        return reason
    try:
        for _ in parquet_file(path).iter_batches(batch_size=_READ_BATCH_ROWS):
            pass
    except Exception as exc:
        return f"unreadable data: {exc}"
    return None


def quarantine(lake_root: Path, quarantine_root: Path, relative: str) -> Path | None:
    """Move a lake file to the quarantine directory; returns where it went (None: missing)."""
    source = lake_root / relative
    target = quarantine_root / relative
    number = 0
    while target.exists():
        number += 1
        target = quarantine_root / f"{relative}.{number}"
    target.parent.mkdir(parents=True, exist_ok=True)
    try:
        os.replace(source, target)
    except FileNotFoundError:
        return None
    return target


def lake_files(lake_root: Path) -> list[str]:
    """Relative paths of the ``.parquet`` files in the lake's partitions."""
    if not lake_root.is_dir():
        return []
    return sorted(str(p.relative_to(lake_root)) for p in lake_root.glob("tenant=*/day=*/*.parquet"))


def sweep(lake_root: Path, listed: Iterable[str]) -> list[str]:
    """Delete unlisted ``.parquet`` and every ``.parquet.tmp`` file; returns what went.

    Run at startup only, before anything writes: then every unlisted file is the
    remainder of a flush that never committed, whose rows are still in the WAL.
    """
    keep = set(listed)
    removed: list[str] = []
    if not lake_root.is_dir():
        return removed
    for pattern in ("tenant=*/day=*/*.parquet", "tenant=*/day=*/*.parquet.tmp"):
        for path in lake_root.glob(pattern):
            relative = str(path.relative_to(lake_root))
            if relative in keep:
                continue
            try:
                path.unlink()
            except OSError as exc:
                log.warning("could not remove unlisted lake file %s: %s", relative, exc)
                continue
            removed.append(relative)
    return sorted(removed)
