"""The object-store copy of the delete requests holds every change, whichever of two
nodes' PUTs lands last."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pyarrow.fs as pafs

from svc.compactor.request_backup import RequestBackup, Snapshot
from svc.compactor.request_store import DeleteRequestStore
from svc.compactor.requests import NewDeleteRequest, Shard
from svc.storage.catalog import Catalog

HOUR_MS = 3_600_000


class _LateBackup(RequestBackup):
    """A node whose first PUT is slow: another node's whole change lands before it."""

    def __init__(self, key: str, meanwhile: Callable[[], object]) -> None:
        super().__init__(pafs.LocalFileSystem(), key)
        self.meanwhile: Callable[[], object] | None = meanwhile
        self.puts = 0

    def save(self, snapshot: Snapshot) -> None:
        self.puts += 1
        if self.meanwhile is not None:
            meanwhile, self.meanwhile = self.meanwhile, None
            meanwhile()
        super().save(snapshot)


def _request(query: str) -> NewDeleteRequest:
    return NewDeleteRequest(query, 0, HOUR_MS, (Shard(0, HOUR_MS),))


def test_a_stale_put_landing_last_is_written_again(tmp_path: Path) -> None:
    key = str(tmp_path / "delete_requests.json")
    catalog = Catalog(tmp_path / "catalog.sqlite")  # the shared catalog of both nodes
    other = DeleteRequestStore(catalog, RequestBackup(pafs.LocalFileSystem(), key))
    backup = _LateBackup(key, lambda: other.add("t", _request('{app="b"}')))
    node = DeleteRequestStore(catalog, backup)

    first = node.add("t", _request('{app="a"}'))

    copy = backup.load()
    assert copy is not None
    assert sorted(row[2] for row in copy["delete_requests"]) == ['{app="a"}', '{app="b"}']
    assert first in {row[0] for row in copy["delete_requests"]}
    assert backup.puts == 2  # the stale PUT, then the one after reading the tables again


def test_a_quiet_change_is_one_put(tmp_path: Path) -> None:
    key = str(tmp_path / "delete_requests.json")
    backup = _LateBackup(key, lambda: None)
    DeleteRequestStore(Catalog(tmp_path / "catalog.sqlite"), backup).add("t", _request("{a=1}"))
    assert backup.puts == 1
