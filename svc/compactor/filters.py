"""Query-time filtering of deleted entries: every tenant's unprocessed delete shards, held
in memory and handed to each view the store builds (``Store.delete_filters``).

The registry is reloaded from the request store whenever a request is created, cancelled
or processed, in the same thread and before the API answers, so a query that starts after
the answer never sees a deleted entry. A tenant without requests costs one dict lookup.
Tenants whose deletion mode is ``disabled`` get no filters, as in the reference.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable
from functools import lru_cache

from logql_to_sql import ast
from svc.compactor.request_store import DeleteRequestStore
from svc.compactor.requests import Shard, deletion_query, has_filter
from svc.storage.store import DeleteFilter

__all__ = ["DeleteFilters", "filter_query", "shard_filters"]

_MS = 1_000_000


@lru_cache(maxsize=4096)
def filter_query(text: str) -> ast.LogQuery:
    """What a request's query removes: its pipeline only when that can drop lines (the
    reference deletes whole streams in range otherwise)."""
    query = deletion_query(text)
    return query if has_filter(query) else ast.LogQuery(query.selector)


def shard_filters(shards: Iterable[tuple[str, str, Shard]]) -> tuple[DeleteFilter, ...]:
    """Filters of ``(request id, query, shard)`` items, a request's adjoining shards merged
    into one range."""
    merged: dict[tuple[str, str], list[list[int]]] = {}
    for identifier, query, shard in sorted(shards, key=lambda item: (item[0], item[2].start_ms)):
        spans = merged.setdefault((identifier, query), [])
        if spans and shard.start_ms <= spans[-1][1]:
            spans[-1][1] = max(spans[-1][1], shard.end_ms)
        else:
            spans.append([shard.start_ms, shard.end_ms])
    return tuple(
        DeleteFilter(filter_query(query), start * _MS, end * _MS)
        for (_, query), spans in merged.items()
        for start, end in spans
    )


class DeleteFilters:
    """The delete filters of each tenant, by time range."""

    def __init__(self, store: DeleteRequestStore, enabled: Callable[[str], bool]) -> None:
        self.store = store
        self.enabled = enabled
        self._lock = threading.Lock()
        self._by_tenant: dict[str, tuple[DeleteFilter, ...]] = {}

    def reload(self) -> None:
        """Read every tenant's unprocessed shards again."""
        found = {
            tenant: shard_filters(shards) for tenant, shards in self.store.unprocessed().items()
        }
        with self._lock:
            self._by_tenant = found

    def __call__(self, tenant: str, start_ns: int, end_ns: int) -> tuple[DeleteFilter, ...]:
        """The tenant's filters that meet ``[start_ns, end_ns)``."""
        filters = self._by_tenant.get(tenant)
        if not filters or not self.enabled(tenant):
            return ()
        return tuple(f for f in filters if f.start_ns < end_ns and f.end_ns >= start_ns)
