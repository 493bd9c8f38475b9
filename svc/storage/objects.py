"""Where the lake's Parquet files live: a local directory (the default) or an S3 bucket.

Both backends take a file written completely on local disk and *publish* it under its
lake path, after which the catalog may list it:

* :class:`LocalLake` writes files beside their final name and publishes them by fsync and
  rename, exactly as before object storage existed (no copy, no extra I/O);
* :class:`S3Lake` writes files to a local staging directory and publishes them with one
  upload. An S3 object appears whole or not at all (a single PUT, or a multipart upload
  that becomes visible only when completed), so a reader never sees a partial file.

Readers name a file by its *URL*: the absolute local path, or ``s3://bucket/key``.
DuckDB reads the latter through an fsspec filesystem registered on its connection (its
httpfs extension cannot be installed offline), pyarrow through the S3 filesystem that
:func:`svc.storage.lake_urls.resolve` finds for the bucket.
"""

from __future__ import annotations

import contextlib
import dataclasses
from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pyarrow.fs as pafs

from svc.errors import ServiceError
from svc.storage import faults
from svc.storage.lake import publish_file
from svc.storage.lake_check import lake_files, quarantine
from svc.storage.lake_urls import S3_SCHEME, register_bucket

__all__ = [
    "LakeStorage",
    "LocalLake",
    "ObjectStoreError",
    "S3Lake",
    "S3Settings",
    "s3_filesystem",
]

_UPLOAD_CHUNK = 8 << 20


class LakeStorage(ABC):
    """The lake's files: publish, list, remove, and the URL readers open."""

    staging: Path
    """The local directory files are written under before they are published."""
    local: bool
    """Whether the lake is a directory on this machine (it then holds every file)."""

    @abstractmethod
    def url(self, relative: str) -> str:
        """What DuckDB and pyarrow open to read the file at a lake path."""

    @abstractmethod
    def publish(self, temporary: Path, relative: str, sites: str = "lake") -> int:
        """Make a completely written local file readable under its lake path, whole and
        durable; returns its size. ``temporary`` is gone afterwards, also on failure.
        ``sites``: the prefix of its fault injection sites (``lake``, ``skip``)."""

    @abstractmethod
    def remove(self, relative: str) -> None:
        """Delete a file (a missing one is no error)."""

    @abstractmethod
    def read(self, relative: str) -> bytes:
        """The whole content of a (small) file; OSError when it cannot be read."""

    @abstractmethod
    def files(self) -> list[str]:
        """Lake paths of every ``.parquet`` file in the tenant-day partitions."""

    @abstractmethod
    def size(self, relative: str) -> int | None:
        """The file's size, or None when it does not exist."""

    @abstractmethod
    def set_aside(self, relative: str, quarantine_root: Path) -> str | None:
        """Move a damaged file out of the lake, keeping it; where it went (None: missing)."""

    @abstractmethod
    def register(self, db: Any) -> None:
        """Make the lake's URLs readable by a DuckDB connection."""


class LocalLake(LakeStorage):
    """The lake as a local directory: files are renamed into place."""

    local = True

    def __init__(self, root: Path) -> None:
        self.root = root
        self.staging = root

    def url(self, relative: str) -> str:
        return str(self.root / relative)

    def publish(self, temporary: Path, relative: str, sites: str = "lake") -> int:
        final = self.root / relative
        publish_file(temporary, final, sites)
        return final.stat().st_size

    def remove(self, relative: str) -> None:
        (self.root / relative).unlink(missing_ok=True)

    def read(self, relative: str) -> bytes:
        return (self.root / relative).read_bytes()

    def files(self) -> list[str]:
        return lake_files(self.root)

    def size(self, relative: str) -> int | None:
        try:
            return (self.root / relative).stat().st_size
        except FileNotFoundError:
            return None

    def set_aside(self, relative: str, quarantine_root: Path) -> str | None:
        moved = quarantine(self.root, quarantine_root, relative)
        return None if moved is None else str(moved)

    def register(self, db: Any) -> None:
        """Local paths need nothing."""


@dataclass(frozen=True)
class S3Settings:
    """An S3-compatible store, as the reference's ``aws`` storage block names it."""

    bucket: str
    endpoint: str = ""
    region: str = ""
    access_key_id: str = ""
    secret_access_key: str = field(default="", repr=False)
    force_path_style: bool = False
    insecure: bool = False


class ObjectStoreError(ServiceError):
    """The object store settings cannot be used (the process does not start)."""


class S3Lake(LakeStorage):
    """The lake in an S3 bucket: files are written to local staging, then uploaded."""

    local = False

    def __init__(self, settings: S3Settings, staging: Path) -> None:
        buckets = [name.strip() for name in settings.bucket.split(",") if name.strip()]
        if not buckets:
            raise ObjectStoreError("at least one bucket name must be specified")
        if len(buckets) > 1:
            raise ObjectStoreError(
                f"svc keeps the lake in one bucket, {len(buckets)} are named: {settings.bucket}"
            )
        settings = dataclasses.replace(settings, bucket=buckets[0])
        self.settings = settings
        self.staging = staging
        self.filesystem = s3_filesystem(settings)
        self._base = f"{settings.bucket}/"
        register_bucket(settings.bucket, self.filesystem)
        self._fsspec: Any = None

    def url(self, relative: str) -> str:
        return f"{S3_SCHEME}{self._base}{relative}"

    def _key(self, relative: str) -> str:
        return f"{self._base}{relative}"

    def publish(self, temporary: Path, relative: str, sites: str = "lake") -> int:
        try:
            faults.check_file(f"{sites}.write", temporary)
            size = temporary.stat().st_size
            # One stream: pyarrow uploads it as a single PUT or a multipart upload that is
            # completed on close; an error aborts it and nothing becomes visible.
            with (
                temporary.open("rb") as source,
                self.filesystem.open_output_stream(self._key(relative), metadata={}) as target,
            ):
                while chunk := source.read(_UPLOAD_CHUNK):
                    target.write(chunk)
        finally:
            with contextlib.suppress(OSError):
                temporary.unlink(missing_ok=True)
        return size

    def remove(self, relative: str) -> None:
        with contextlib.suppress(FileNotFoundError):
            self.filesystem.delete_file(self._key(relative))

    def read(self, relative: str) -> bytes:
        with self.filesystem.open_input_stream(self._key(relative)) as source:
            return bytes(source.readall())

    def files(self) -> list[str]:
        selector = pafs.FileSelector(self._base.rstrip("/"), recursive=True, allow_not_found=True)
        found = []
        for info in self.filesystem.get_file_info(selector):
            relative = info.path[len(self._base) :]
            parts = relative.split("/")
            if (
                info.type == pafs.FileType.File
                and len(parts) == 3
                and parts[0].startswith("tenant=")
                and parts[1].startswith("day=")
                and parts[2].endswith(".parquet")
            ):
                found.append(relative)
        return sorted(found)

    def size(self, relative: str) -> int | None:
        info = self.filesystem.get_file_info(self._key(relative))
        return None if info.type == pafs.FileType.NotFound else int(info.size)

    def set_aside(self, relative: str, quarantine_root: Path) -> str | None:
        # Kept in the bucket, out of the tenant partitions that listings look at.
        target = f"{self._base}quarantine/{relative}"
        try:
            self.filesystem.move(self._key(relative), target)
        except FileNotFoundError:
            return None
        return f"{S3_SCHEME}{target}"

    def register(self, db: Any) -> None:
        db.register_filesystem(self._duckdb_filesystem())

    def _duckdb_filesystem(self) -> Any:
        if self._fsspec is None:
            from fsspec.implementations.arrow import ArrowFSWrapper

            class _S3Files(ArrowFSWrapper):  # type: ignore[misc]
                """pyarrow's S3 client behind fsspec, for DuckDB's ``s3://`` paths."""

                protocol = "s3"

            self._fsspec = _S3Files(self.filesystem)
        return self._fsspec


def s3_filesystem(settings: S3Settings) -> pafs.S3FileSystem:
    """pyarrow's S3 client for the settings (an endpoint ``host:port`` or a URL)."""
    endpoint = settings.endpoint
    scheme = "http" if settings.insecure else "https"
    if "://" in endpoint:
        scheme, endpoint = endpoint.split("://", 1)
    options: dict[str, Any] = {
        "scheme": scheme,
        "force_virtual_addressing": bool(endpoint) and not settings.force_path_style,
    }
    if endpoint:
        options["endpoint_override"] = endpoint.rstrip("/")
    if settings.region:
        options["region"] = settings.region
    if settings.access_key_id:
        options["access_key"] = settings.access_key_id
        options["secret_key"] = settings.secret_access_key
    return pafs.S3FileSystem(**options)
