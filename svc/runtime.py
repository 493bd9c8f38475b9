"""The running service's parts, built from the config and shared by every handler.

Internal services, started in this order on a background thread and stopped in reverse:

    store          catalog and stream index (reads); startup checks of the lake
    wal            WAL replay into the head, then the group-commit writer
    ingester       head and flusher; stopping it flushes (SPEC 3.2)
    querier        the DuckDB query engine
    index-gateway  on-demand and periodic index syncs (SPEC 3.3)
    compactor      compaction, retention and delete requests (targets all, backend,
                   compactor)
    ruler          rule evaluation, alert notifications, remote write (targets all,
                   ruler, backend)
"""

from __future__ import annotations

import functools
import logging
import socket
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from svc.compactor.config import COMPACTOR_TARGETS
from svc.compactor.deletions import Deletions
from svc.compactor.limits import deletion_served
from svc.compactor.metrics import CompactorMetrics
from svc.compactor.service import Compactor, build_compactor
from svc.config import Config, LimitsConfig, lake_object_store
from svc.distributor import Distributor
from svc.errors import ServiceUnavailableError
from svc.frontend.frontend import QueryFrontend
from svc.limits.discarded import DiscardedData
from svc.limits.merge import merged_limits
from svc.limits.overrides import Overrides
from svc.ops.cache_gen import CacheGenerations
from svc.ops.index_sync import IndexSyncer
from svc.ops.ingester import IngesterLifecycle
from svc.ops.metrics import Metrics
from svc.ops.services import Service, ServiceRegistry, State
from svc.query.engine import QueryEngine
from svc.query.memory import parse_memory_limit
from svc.ruler.service import RULER_TARGETS, Ruler, build_ruler
from svc.scheduler.workers import Scheduler, SchedulerCollector
from svc.sql.service import SqlService, build_sql_service
from svc.storage.members import Members
from svc.storage.remote_heads import RemoteHeads
from svc.storage.store import Store, StoreSettings
from svc.targets import TARGETS, runs, runs_any
from svc.tenancy import TenantResolver

__all__ = ["Runtime"]

log = logging.getLogger(__name__)

_STARTUP_JOIN_SECONDS = 60.0


@dataclass
class Runtime:
    """Config, store, query engine, tenant rules and internal services of one instance."""

    config: Config
    store: Store
    engine: QueryEngine
    resolver: TenantResolver
    distributor: Distributor
    ingester: IngesterLifecycle
    syncer: IndexSyncer
    cache_generations: CacheGenerations
    overrides: Overrides
    metrics: Metrics
    scheduler: Scheduler
    frontend: QueryFrontend
    services: ServiceRegistry = field(default_factory=ServiceRegistry)
    shutdown_requested: threading.Event = field(default_factory=threading.Event)
    replayed_rows: int = 0
    ruler: Ruler | None = None
    deletions: Deletions | None = None
    """Delete requests and their query-time filters (with ``retention_enabled``)."""
    compactor: Compactor | None = None
    members: Members | None = None
    """This process's registration in a shared catalog (None on a single node)."""
    sql: SqlService | None = None
    _startup: threading.Thread | None = None

    @classmethod
    def from_config(cls, config: Config) -> Runtime:
        """Build (but do not start) every part."""
        ingester = config.ingester
        root = Path(config.common.path_prefix)
        store = Store(
            StoreSettings(
                root=root,
                head_max_bytes=ingester.head_max_bytes,
                max_head_age_seconds=ingester.max_chunk_age,
                flush_check_seconds=ingester.flush_check_period,
                wal_segment_max_bytes=ingester.wal_segment_max_bytes,
                row_group_rows=ingester.row_group_rows,
                disk_full_threshold=ingester.wal.disk_full_threshold,
                object_store=lake_object_store(config),
                catalog_dsn=config.catalog.postgres.dsn,
                writer=ingester.lifecycler.id or socket.gethostname(),
            )
        )
        shipper = config.storage_config.tsdb_shipper
        metrics = Metrics()
        overrides = Overrides(config, metrics.registry)
        engine = _engine_class(config)(
            store,
            timeout_seconds=config.limits_config.query_timeout,
            scan_group_rows=config.querier.log_scan_group_rows,
            memory_limit=parse_memory_limit(config.querier.query_memory_limit),
            spill_dir=root / "query-spill",
            template_line_chars=config.querier.max_template_line_size,
            template_query_chars=config.querier.max_template_query_size,
            max_concurrent=config.querier.max_concurrent,
        )
        scheduler = Scheduler(
            config.querier.max_concurrent,
            config.query_scheduler.max_outstanding_requests_per_tenant,
        )

        def query_limits(tenants: tuple[str, ...]) -> LimitsConfig:
            return merged_limits([overrides.limits_for(tenant) for tenant in tenants])

        rt = cls(
            config=config,
            store=store,
            engine=engine,
            resolver=TenantResolver(
                auth_enabled=config.auth_enabled,
                no_auth_tenant=config.no_auth_tenant,
                multi_tenant_queries=config.querier.multi_tenant_queries_enabled,
            ),
            distributor=Distributor(
                config,
                overrides,
                store,
                DiscardedData(metrics.registry),
                lowered_step=scheduler.lowered_step,
            ),
            ingester=IngesterLifecycle(
                store,
                marker_dir=Path(ingester.shutdown_marker_path or root),
                flush_on_shutdown=ingester.flush_on_shutdown,
                min_ready_seconds=ingester.lifecycler.min_ready_duration,
            ),
            syncer=IndexSyncer(
                [period.store for period in config.schema_config.configs],
                store.load_index,
                resync_interval=shipper.resync_interval,
                min_duration=shipper.min_sync_duration,
            ),
            cache_generations=CacheGenerations(store.catalog),
            overrides=overrides,
            metrics=metrics,
            scheduler=scheduler,
            frontend=QueryFrontend(config, engine, scheduler, query_limits),
        )
        if store.catalog.shared:
            rt._join_members()
        rt.sql = build_sql_service(config, rt.engine, rt.metrics.registry)
        if config.target in RULER_TARGETS:
            rt.ruler = build_ruler(config, rt.engine, rt.metrics.registry, rt.limits_for)
        rt._build_compactor()
        rt._register_services()
        rt.metrics.watch(store, rt.services)
        rt.metrics.registry.register(SchedulerCollector(scheduler))
        rt.metrics.shutdown_marker.set_function(lambda: float(rt.ingester.prepared))
        return rt

    def _join_members(self) -> None:
        """Register in the shared catalog; a querier reads the other writers' heads."""
        config = self.config
        host = config.ingester.lifecycler.address or config.server.http_listen_address
        if host in ("", "0.0.0.0", "::"):
            host = socket.gethostname()
        address = f"http://{host}:{config.server.http_listen_port}"
        lifecycler = config.ingester.lifecycler
        self.members = Members(
            self.store.catalog,
            self.store.settings.writer,
            config.target,
            address,
            heartbeat_seconds=lifecycler.heartbeat_period,
            stale_seconds=lifecycler.ring.heartbeat_timeout,
        )
        if runs(config.target, "querier"):
            writers = frozenset(t for t in TARGETS if runs_any(t, "distributor", "ingester"))
            self.store.remote = RemoteHeads(
                self.members, writers, within_seconds=config.querier.query_ingesters_within
            )

    def limits_for(self, tenant: str) -> LimitsConfig:
        """The tenant's limits: its runtime override, else ``limits_config``."""
        return self.overrides.limits_for(tenant)

    def _build_compactor(self) -> None:
        """Delete requests (filtering every query from the start) and, on the compactor's
        targets, the compactor itself."""
        config = self.config
        if config.limits_config.allow_deletes:
            log.warning(
                "The compactor.allow-deletes configuration option has been deprecated and will "
                "be ignored. Instead, use deletion_mode in the limits_configs to adjust "
                "deletion functionality"
            )
        metrics = CompactorMetrics(self.metrics.registry)
        deletions = Deletions(config, self.store.catalog, metrics, self.limits_for)
        if deletion_served(config):
            deletions.load()
            self.store.delete_filters = deletions.filters
            self.deletions = deletions
        if config.target in COMPACTOR_TARGETS:
            self.compactor = build_compactor(config, self.store, self.engine, deletions, metrics)

    def _register_services(self) -> None:
        store = self.store
        if self.overrides.files:
            self.services.add(Service("runtime-config", self.overrides.start, self.overrides.stop))
        self.services.add(
            Service("store", store.open_catalog, store.close_catalog, degraded=store.degraded_lake)
        )
        if self.members is not None:
            members = self.members
            self.services.add(
                Service("members", members.start, members.stop, depends_on=("store",))
            )
        self.services.add(
            Service(
                "wal",
                self._replay,
                store.wal.stop,
                depends_on=("store",),
                degraded=store.degraded_wal,
            )
        )
        target = self.config.target
        if runs(target, "distributor"):
            self.services.add(Service("distributor", depends_on=("wal",)))
        if self.writes:
            self.services.add(self.ingester.service)
        self.services.add(
            Service(
                self.engine_service,
                starting=self._start_querier,
                stopping=self._stop_querier,
                depends_on=("store",),
            )
        )
        for member in ("query-frontend", "query-scheduler"):
            if runs(target, member):
                self.services.add(Service(member, depends_on=(self.engine_service,)))
        if runs(target, "index-gateway"):
            self.services.add(
                Service(
                    "index-gateway",
                    self.syncer.start_periodic,
                    self.syncer.stop,
                    depends_on=("store",),
                )
            )
        if self.compactor is not None:
            compactor = self.compactor
            self.services.add(
                Service(
                    "compactor",
                    compactor.start,
                    compactor.stop,
                    depends_on=("wal", self.engine_service),
                )
            )
        if self.ruler is not None:
            needs = ("wal", self.engine_service)
            self.services.add(Service("ruler", self.ruler.start, self.ruler.stop, depends_on=needs))

    @property
    def writes(self) -> bool:
        """Whether this instance takes writes: it runs the ingester (the distributor writes
        to its own instance's ingester, pushes are not forwarded)."""
        return runs_any(self.config.target, "distributor", "ingester")

    @property
    def engine_service(self) -> str:
        """The service of the query engine: ``querier`` where the target runs one; the
        compactor and the ruler of other targets run queries on it too."""
        return "querier" if runs(self.config.target, "querier") else "query-engine"

    def _start_querier(self) -> None:
        self.engine.start()
        self.scheduler.start()

    def _stop_querier(self) -> None:
        self.scheduler.stop()
        if self.sql is not None:
            self.sql.close()
        self.engine.close()

    def _replay(self) -> None:
        self.replayed_rows = self.store.replay_wal()
        log.info("wal replayed: replayed_rows=%d", self.replayed_rows)

    def start_in_background(self) -> threading.Thread:
        """Start the services on a thread; the WAL replay can take a while."""
        thread = threading.Thread(target=self.services.start_all, name="startup", daemon=True)
        thread.start()
        self._startup = thread
        return thread

    def require_ready(self) -> None:
        """Raise 503 until the WAL is replayed (or when a service it needs has failed)."""
        state = self.ingester.service.state
        if self.writes and state in (State.NEW, State.STARTING, State.FAILED):
            raise ServiceUnavailableError(f"Ingester not ready: ingester not ready: {state}")
        if self.services[self.engine_service].state is not State.RUNNING:
            raise ServiceUnavailableError("Querier not ready: querier is not running")

    def stop(self) -> None:
        """Stop every service: the ingester flushes as configured, then all is released."""
        self.shutdown_requested.set()
        self.services.request_stop()
        if self._startup is not None:
            self._startup.join(_STARTUP_JOIN_SECONDS)
        self.services.stop_all()


def _engine_class(config: Config) -> Callable[..., QueryEngine]:
    """The query engine of ``querier.execution``: in process, or on Ray actors."""
    if config.querier.execution != "ray":
        return QueryEngine
    from svc.distributed.engine import RayQueryEngine

    return functools.partial(RayQueryEngine, ray=config.querier.ray)
