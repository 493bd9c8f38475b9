"""A copy of the delete requests in the object store named by
``compactor.delete_request_store`` (as the reference keeps its delete-request database
there): ``<delete_request_store_key_prefix>delete_requests/delete_requests.json``.

The catalog stays the store every read and change goes through; after each change the
whole table set is written to the object in one PUT (a few rows per request), and written
again if the tables moved meanwhile (another node's change: ``DeleteRequestStore``), so
the copy ends with every change whichever PUT lands last. A catalog
rebuilt from an S3 lake (``svc catalog rebuild``, or a start over a lost catalog) has no
delete requests: they are read back from the copy, so deleted entries stay deleted.
"""

from __future__ import annotations

import logging
from typing import Any

import msgspec
import pyarrow.fs as pafs

from svc.config import Config
from svc.storage.backend_config import object_store_settings
from svc.storage.objects import one_bucket, s3_filesystem

__all__ = ["RequestBackup", "Snapshot", "request_backup"]

log = logging.getLogger(__name__)

Snapshot = dict[str, list[list[Any]]]
"""Rows of the delete-request tables by table name."""

_OBJECT = "delete_requests/delete_requests.json"


class RequestBackup:
    """The delete requests' copy: one object in a bucket."""

    def __init__(self, filesystem: pafs.FileSystem, key: str) -> None:
        self.filesystem = filesystem
        self.key = key

    def save(self, snapshot: Snapshot) -> None:
        """Replace the copy (a failure is logged: the catalog already holds the change,
        and the next change writes the copy again)."""
        body = msgspec.json.encode(snapshot)
        try:
            with self.filesystem.open_output_stream(self.key, metadata={}) as stream:
                stream.write(body)
        except OSError as exc:
            log.warning("could not copy the delete requests to s3://%s: %s", self.key, exc)

    def load(self) -> Snapshot | None:
        """The copy, or None when there is none."""
        try:
            with self.filesystem.open_input_stream(self.key) as stream:
                body = stream.read()
        except FileNotFoundError:
            return None
        found: Snapshot = msgspec.json.decode(body, type=Snapshot)
        return found


def request_backup(config: Config) -> RequestBackup | None:
    """The copy ``compactor.delete_request_store`` asks for: an S3 store (``s3``/``aws``,
    with the lake's S3 settings); None for the other stores (the catalog alone)."""
    # (object_store_settings answers None for a store that is not S3.)
    compactor = config.compactor
    settings = object_store_settings(
        compactor.delete_request_store, config.storage_config.aws, config.common.storage.s3
    )
    if settings is None or not settings.bucket.strip(", "):
        return None  # (an S3 store named without any bucket: the catalog alone, as before)
    settings = one_bucket(settings)
    key = f"{settings.bucket}/{compactor.delete_request_store_key_prefix}{_OBJECT}"
    return RequestBackup(s3_filesystem(settings), key)
