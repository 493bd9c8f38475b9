"""The deletion API's operations: create, list and cancel delete requests (DELETION.md 2-4).

The HTTP layer (``svc/api/delete.py``) decodes and encodes; this module validates, stores,
keeps query-time filtering current (before it answers) and counts. Errors carry the
reference's status and text.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass

from gocompat.durations import format_go_duration, format_prom_duration
from svc.compactor.filters import DeleteFilters
from svc.compactor.limits import LimitsLookup, deletion_enabled
from svc.compactor.metrics import CompactorMetrics
from svc.compactor.request_backup import request_backup
from svc.compactor.request_store import DeleteRequest, DeleteRequestStore
from svc.compactor.requests import DeleteRequestError, new_request, now_ms, parse_time_ms
from svc.config import Config
from svc.errors import NotFoundError
from svc.storage.catalog import Catalog

__all__ = ["Deletions", "Listing"]

log = logging.getLogger(__name__)

_SECOND_NS = 1_000_000_000


@dataclass(frozen=True)
class Listing:
    """A list answer: the requests, and the time errors the reference writes before them."""

    errors: list[str]
    requests: list[DeleteRequest]


class Deletions:
    """Delete requests of every tenant and the filters they impose on queries."""

    def __init__(
        self,
        config: Config,
        catalog: Catalog,
        metrics: CompactorMetrics,
        limits_for: LimitsLookup,
    ) -> None:
        self.config = config
        self.metrics = metrics
        self.limits_for = limits_for
        """The tenants' limits in force (deletion mode, retention)."""
        self.requests = DeleteRequestStore(catalog, request_backup(config))
        self.filters = DeleteFilters(
            self.requests, lambda tenant: deletion_enabled(config, limits_for(tenant))
        )

    def load(self) -> None:
        """Read the stored requests (at startup; from the object store's copy when the
        catalog was rebuilt without them)."""
        restored = self.requests.restore()
        if restored:
            log.warning(
                "the catalog had no delete requests: read %d back from the delete request "
                "store's copy in object storage",
                restored,
            )
        self.filters.reload()

    def create(
        self,
        tenant: str,
        query: str | None,
        start: str | None,
        end: str | None,
        max_interval: str | None,
    ) -> str:
        """Validate and store a request; its entries are filtered from queries at once."""
        cfg = self.config.compactor
        request = new_request(
            query,
            start,
            end,
            max_interval,
            delete_max_interval_ns=round(cfg.delete_max_interval * _SECOND_NS),
        )
        identifier = self.requests.add(tenant, request)
        self.filters.reload()
        self.metrics.requests_received.labels(tenant).inc()
        interval_ms = request.shards[0].end_ms - request.shards[0].start_ms
        log.info(
            "delete request for user added: delete_request_id=%s user=%s query=%s interval=%s",
            identifier,
            tenant,
            request.query,
            format_go_duration(interval_ms * 1_000_000) if len(request.shards) > 1 else "0s",
        )
        return identifier

    def listing(
        self, tenant: str, start: str | None, end: str | None, querytime: str | None
    ) -> Listing:
        """The tenant's requests, oldest first. ``start`` and ``end`` count only together;
        an unparsable one is reported and read as 0, as the reference does."""
        errors: list[str] = []
        overlapping = None
        if start and end:
            bounds = []
            for name, text in (("start", start), ("end", end)):
                try:
                    bounds.append(parse_time_ms(text))
                except ValueError:
                    errors.append(f"invalid {name} time: require unix seconds or RFC3339 format")
                    bounds.append(0)
            overlapping = (bounds[0], bounds[1])
        # Only the sqlite store honours the queriers' parameter; boltdb ignores it.
        unfinished = (
            querytime == "true" and self.config.compactor.delete_request_store_db_type == "sqlite"
        )
        found = self.requests.requests(tenant, overlapping=overlapping, unfinished=unfinished)
        return Listing(errors, found)

    def cancel(self, tenant: str, identifier: str, force: bool) -> None:
        """Cancel a request (DELETION.md 4); an empty ID cancels nothing."""
        if not identifier:
            return
        found = self.requests.get(tenant, identifier)
        if found is None:
            raise NotFoundError("could not find delete request with given id")
        if found.status == "processed":
            raise DeleteRequestError(
                "deletion of request which is in process or already processed is not allowed"
            )
        period = self.config.compactor.delete_request_cancel_period
        late = found.created_ms + round(period * 1000) < now_ms()
        if (found.status != "received" or late) and not force:
            raise DeleteRequestError(
                "Cancellation of partially completed delete request or delete request past "
                f"the deadline of {format_go_duration(round(period * _SECOND_NS))} since its "
                "creation is not allowed. To force, use the ?force query parameter"
            )
        self.requests.cancel(tenant, identifier)
        self.filters.reload()
        log.info(
            "delete request cancelled: delete_request_id=%s user=%s age=%s",
            identifier,
            tenant,
            format_prom_duration(max(now_ms() - found.created_ms, 0) * 1_000_000),
        )
