"""Lake files by URL: an absolute local path, or ``s3://bucket/key`` in a registered bucket.

The object-store backend (``svc.storage.objects``) registers its bucket's pyarrow
filesystem here, so that code holding only a file's URL (footer checks, metadata reads)
opens it without knowing where the lake lives. Local paths pass through untouched.
"""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

import pyarrow.fs as pafs
import pyarrow.parquet as pq

__all__ = ["S3_SCHEME", "parquet_file", "read_metadata", "register_bucket", "resolve"]

S3_SCHEME = "s3://"

_buckets: dict[str, pafs.FileSystem] = {}
_buckets_lock = threading.Lock()


def register_bucket(bucket: str, filesystem: pafs.FileSystem) -> None:
    """Open the bucket's URLs with ``filesystem`` from now on."""
    with _buckets_lock:
        _buckets[bucket] = filesystem


def resolve(path: str | Path) -> tuple[str, pafs.FileSystem | None]:
    """The path and filesystem pyarrow opens a lake URL with (local: no filesystem)."""
    text = str(path)
    if not text.startswith(S3_SCHEME):
        return text, None
    location = text[len(S3_SCHEME) :]
    with _buckets_lock:
        filesystem = _buckets.get(location.split("/", 1)[0])
    if filesystem is None:
        raise FileNotFoundError(f"no object store is configured for {text}")
    return location, filesystem


def parquet_file(path: str | Path) -> pq.ParquetFile:
    """The Parquet file at a lake URL."""
    where, filesystem = resolve(path)
    return pq.ParquetFile(where, filesystem=filesystem)


def read_metadata(path: str | Path) -> Any:
    """The footer of the Parquet file at a lake URL."""
    where, filesystem = resolve(path)
    return pq.read_metadata(where, filesystem=filesystem)
