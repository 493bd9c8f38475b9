"""The running service's parts, built from the config and shared by every handler."""

from __future__ import annotations

import logging
import threading
from dataclasses import dataclass, field
from pathlib import Path

from svc.config import Config
from svc.errors import ServiceUnavailableError
from svc.ingest.model import PushLimits
from svc.query.engine import QueryEngine
from svc.storage.store import Store, StoreSettings
from svc.tenancy import TenantResolver

__all__ = ["Runtime"]

log = logging.getLogger(__name__)


def push_limits(config: Config) -> PushLimits:
    """The decoder limits of the config."""
    limits = config.limits_config
    return PushLimits(
        max_recv_msg_size=config.distributor.max_recv_msg_size,
        max_decompressed_size=config.distributor.max_decompressed_size,
        max_label_name_length=limits.max_label_name_length,
        max_label_value_length=limits.max_label_value_length,
        max_label_names_per_series=limits.max_label_names_per_series,
        max_line_size=limits.max_line_size,
        reject_old_samples=limits.reject_old_samples,
        reject_old_samples_max_age_ns=int(limits.reject_old_samples_max_age * 1e9),
        creation_grace_period_ns=int(limits.creation_grace_period * 1e9),
        allow_structured_metadata=limits.allow_structured_metadata,
        max_structured_metadata_size=limits.max_structured_metadata_size,
        max_structured_metadata_entries_count=limits.max_structured_metadata_entries_count,
    )


@dataclass
class Runtime:
    """Config, store, query engine and tenant rules of one service instance."""

    config: Config
    store: Store
    engine: QueryEngine
    resolver: TenantResolver
    limits: PushLimits
    ready: threading.Event = field(default_factory=threading.Event)
    stopping: threading.Event = field(default_factory=threading.Event)
    replayed_rows: int = 0
    startup_error: BaseException | None = None

    @classmethod
    def from_config(cls, config: Config) -> Runtime:
        """Build (but do not start) every part."""
        ingester = config.ingester
        store = Store(
            StoreSettings(
                root=Path(config.common.path_prefix),
                head_max_bytes=ingester.head_max_bytes,
                max_head_age_seconds=ingester.max_chunk_age,
                flush_check_seconds=ingester.flush_check_period,
                wal_segment_max_bytes=ingester.wal_segment_max_bytes,
                row_group_rows=ingester.row_group_rows,
            )
        )
        return cls(
            config=config,
            store=store,
            engine=QueryEngine(store, timeout_seconds=config.limits_config.query_timeout),
            resolver=TenantResolver(
                auth_enabled=config.auth_enabled,
                no_auth_tenant=config.no_auth_tenant,
                multi_tenant_queries=config.querier.multi_tenant_queries_enabled,
            ),
            limits=push_limits(config),
        )

    def start_in_background(self) -> threading.Thread:
        """Replay the WAL and open the store on a thread; ``ready`` is set when done."""
        thread = threading.Thread(target=self._start, name="startup", daemon=True)
        thread.start()
        return thread

    def _start(self) -> None:
        try:
            self.replayed_rows = self.store.open()
            log.info("store opened: replayed_rows=%d", self.replayed_rows)
            self.ready.set()
        except BaseException as exc:
            self.startup_error = exc
            log.exception("store failed to start")

    def require_ready(self) -> None:
        """Raise 503 while the WAL is still being replayed or after shutdown began."""
        if self.stopping.is_set():
            raise ServiceUnavailableError("Ingester is shutting down")
        if not self.ready.is_set():
            raise ServiceUnavailableError("Ingester not ready: ingester not ready: Starting")

    def stop(self) -> None:
        """Stop writes, flush if configured, release everything."""
        if self.stopping.is_set():
            return
        self.stopping.set()
        if self.ready.is_set():
            self.store.close(flush=self.config.ingester.flush_on_shutdown)
        self.engine.close()
