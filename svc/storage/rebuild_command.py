"""``svc catalog rebuild``: replace a data directory's catalog by one rebuilt from the lake.

The service must be stopped (the command takes the data directory's lock). The old
catalog, if any, is kept next to the new one as ``catalog.sqlite.replaced-<time>``.
"""

from __future__ import annotations

import os
from datetime import UTC, datetime
from pathlib import Path

from svc.storage.catalog import CATALOG_FILENAME, Catalog
from svc.storage.files import DataDirectoryLock, fsync_directory
from svc.storage.rebuild import rebuild_catalog
from svc.storage.wal import WriteAheadLog

__all__ = ["rebuild_data_directory"]


def rebuild_data_directory(root: Path) -> str:
    """Rebuild ``root``'s catalog from its lake; returns a summary for the operator."""
    lock = DataDirectoryLock(root)
    lock.acquire()
    try:
        catalog_path = root / CATALOG_FILENAME
        kept = _set_aside(catalog_path)
        wal = WriteAheadLog(root / "wal", segment_max_bytes=1)
        catalog = Catalog(catalog_path)
        try:
            report = rebuild_catalog(
                catalog, root / "lake", root / "quarantine", {seq for seq, _ in wal.segments()}
            )
        finally:
            catalog.close()
    finally:
        lock.release()
    lines = [
        f"catalog rebuilt: {catalog_path}",
        f"files listed: {len(report.listed)}",
        f"streams: {report.streams}",
        f"flushed WAL segment (watermark): {report.watermark}",
    ]
    if report.unlisted:
        lines.append(
            f"files left unlisted (their entries replay from the WAL; the next start "
            f"removes them): {len(report.unlisted)}"
        )
    if report.quarantined:
        lines.append(f"unreadable files quarantined: {len(report.quarantined)}")
    if kept is not None:
        lines.append(f"previous catalog kept as: {kept}")
    return "\n".join(lines)


def _set_aside(catalog_path: Path) -> Path | None:
    """Rename the catalog and its SQLite side files out of the way; returns the new name."""
    if not catalog_path.exists():
        return None
    stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%SZ")
    kept = catalog_path.with_name(f"{catalog_path.name}.replaced-{stamp}")
    for suffix in ("", "-wal", "-shm"):
        source = catalog_path.with_name(catalog_path.name + suffix)
        if source.exists():
            os.replace(source, kept.with_name(kept.name + suffix))
    fsync_directory(catalog_path.parent)
    return kept
