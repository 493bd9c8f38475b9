"""Configuration: one YAML file with the reference's keys, every tunable with a default and help.

The defaults run with no file at all: data under ``./data``, port 3100, ``auth_enabled: true``.
Durations are written as Go/Prometheus duration strings (``2h``, ``30s``) and held in seconds.
"""

from __future__ import annotations

import dataclasses
import types
import typing
from dataclasses import dataclass, field
from typing import Any

from gocompat.bytesize import format_datasize, parse_datasize
from gocompat.durations import format_go_duration, format_prom_duration, parse_duration_seconds
from gocompat.fmt import go_format_v
from svc.compactor.config import (
    CompactorConfig,
    StreamRetention,
    compactor_config_errors,
    retention_rule_error,
)
from svc.config_fields import MIB, setting
from svc.config_schema import active_period, named_store_names, schema_config_errors
from svc.distributed.config import RayConfig, ray_config_errors
from svc.errors import ServiceError
from svc.ingest.model import DEFAULT_DISCOVER_SERVICE_NAME
from svc.logging_setup import LOG_FORMATS
from svc.query.memory import parse_memory_limit
from svc.ruler.config import RulerConfig, ruler_config_errors
from svc.storage.backend_config import (
    CatalogConfig,
    CommonStorageConfig,
    S3Config,
    object_store_settings,
)
from svc.storage.objects import S3Settings
from svc.targets import TARGETS
from svc.tenancy import validate_tenant_id
from svc.timestamps import parse_timestamp_ns
from svc.tls.config import TLSServerConfig

__all__ = [
    "LOCAL_STORAGE_ONLY",
    "BackfillConfig",
    "CompactorConfig",
    "Config",
    "ConfigError",
    "DistributorConfig",
    "IndexTablesConfig",
    "IngesterConfig",
    "LifecyclerConfig",
    "LimitsConfig",
    "PatternIngesterConfig",
    "PeriodConfig",
    "QuerierConfig",
    "QueryRangeConfig",
    "QuerySchedulerConfig",
    "RuntimeConfigFiles",
    "SchemaConfig",
    "ServerConfig",
    "SqlConfig",
    "StorageConfig",
    "StreamRetention",
    "TsdbShipperConfig",
    "WalConfig",
    "active_period",
    "config_from_mapping",
    "config_from_yaml",
    "config_to_dict",
    "lake_object_store",
    "limits_errors",
    "overlay_limits",
    "setting",
    "shared_storage",
    "validate_config",
]


class ConfigError(Exception):
    """The configuration cannot be used; ``errors`` lists every problem found."""

    def __init__(self, errors: list[str]) -> None:
        self.errors = errors
        if len(errors) == 1:
            text = errors[0]
        else:
            text = "MULTIPLE CONFIG ERRORS FOUND, PLEASE READ CAREFULLY\n" + "\n".join(errors)
        super().__init__(text)


@dataclass
class ServerConfig:
    """HTTP server settings (``server:``)."""

    http_listen_address: str = setting("0.0.0.0", "Address the HTTP server listens on.")
    http_listen_port: int = setting(3100, "Port the HTTP server listens on.")
    http_listen_unix_socket: str = setting(
        "",
        "Serve HTTP on this Unix socket instead of the address and port (svc only): how a "
        "process in a network namespace of its own is reached from outside it.",
    )
    grpc_listen_port: int = setting(9095, "gRPC port (reserved for the distributed modes).")
    log_level: str = setting("info", "Log level: debug, info, warn or error.")
    log_format: str = setting("logfmt", "Log line format: logfmt or json.")
    grpc_server_max_send_msg_size: int = setting(4 * MIB, "Largest response a querier sends.")
    tls_cipher_suites: str = setting(
        "", "Comma-separated Go names of the TLS 1.2 cipher suites allowed (empty: defaults)."
    )
    tls_min_version: str = setting(
        "", "Oldest TLS version accepted: VersionTLS10 to VersionTLS13 (empty: TLS 1.2)."
    )
    http_tls_config: TLSServerConfig = field(default_factory=TLSServerConfig)
    grpc_tls_config: TLSServerConfig = field(default_factory=TLSServerConfig)


@dataclass
class CommonConfig:
    """Settings shared by every component (``common:``)."""

    path_prefix: str = setting("./data", "Directory under which all data is stored.")
    replication_factor: int = setting(1, "Copies of each stream kept by ingesters.")
    compactor_address: str = setting(
        "", "HTTP address of the compactor, for targets that do not run it (delete filtering)."
    )
    compactor_grpc_address: str = setting("", "gRPC address of the compactor (same use).")
    storage: CommonStorageConfig = field(default_factory=CommonStorageConfig)


@dataclass
class DistributorConfig:
    """Push request handling (``distributor:``)."""

    max_recv_msg_size: int = setting(100 * MIB, "Largest compressed push body, in bytes.")
    max_decompressed_size: int = setting(5000 * MIB, "Largest decompressed push body, bytes.")


@dataclass
class LifecyclerRingConfig:
    """The ring the lifecycler registers in (``ingester.lifecycler.ring:``)."""

    heartbeat_timeout: float = setting(
        10.0,
        "A member of a shared catalog whose last heartbeat is older than this has left the "
        "ring: readers no longer ask it for its unflushed entries.",
        duration=True,
    )


@dataclass
class LifecyclerConfig:
    """Ring membership of the ingester (``ingester.lifecycler:``)."""

    ring: LifecyclerRingConfig = field(default_factory=LifecyclerRingConfig)
    heartbeat_period: float = setting(
        2.0,
        "How often an instance of a shared catalog renews its membership heartbeat.",
        duration=True,
    )

    min_ready_duration: float = setting(
        0.0,
        "Time after the ingester starts running before /ready reports it ready "
        "(the reference defaults to 15s; 0 makes a single binary ready at once).",
        duration=True,
    )
    num_tokens: int = setting(128, "Tokens this instance owns in the ring.")
    id: str = setting(
        "",
        "This instance's name among the writers of a shared catalog (catalog.postgres.dsn): "
        "the WAL watermark it advances there; keep it across restarts (empty: the hostname).",
    )
    address: str = setting(
        "",
        "Host other instances of a shared catalog reach this one's HTTP API at (empty: "
        "server.http_listen_address, or the hostname when that is 0.0.0.0).",
    )


@dataclass
class WalConfig:
    """Write-ahead log of the ingester (``ingester.wal:``)."""

    disk_full_threshold: float = setting(
        0.90,
        "Used share (0 to 1) of the data directory's filesystem at which pushes are "
        "refused with 503 until space is freed; 0 disables the check.",
    )


@dataclass
class IngesterConfig:
    """Write-ahead log and in-memory head (``ingester:``)."""

    lifecycler: LifecyclerConfig = field(default_factory=LifecyclerConfig)
    wal: WalConfig = field(default_factory=WalConfig)
    shutdown_marker_path: str = setting(
        "", "Directory of the prepare-shutdown marker file (default: common.path_prefix)."
    )

    head_max_bytes: int = setting(16 * MIB, "Flush the head to Parquet at this many line bytes.")
    max_chunk_age: float = setting(
        7200.0, "Flush the head when its oldest data is this old.", duration=True
    )
    flush_check_period: float = setting(
        10.0, "How often the flusher looks at the head.", duration=True
    )
    flush_on_shutdown: bool = setting(True, "Flush the head to Parquet on a clean shutdown.")
    wal_segment_max_bytes: int = setting(64 * MIB, "Start a new WAL segment past this size.")
    row_group_rows: int = setting(131072, "Rows per Parquet row group.")
    chunk_idle_period: float = setting(
        1800.0,
        "A stream that received nothing for this long stops counting as active (stream "
        "limits) and forgets its newest timestamp (out-of-order window).",
        duration=True,
    )
    max_returned_stream_errors: int = setting(
        10, "Rejected entries of one stream listed in a push's error (0: all)."
    )


@dataclass
class LimitsConfig:
    """Per-tenant limits (``limits_config:``); the runtime overrides file replaces them per
    tenant (``svc/limits/overrides.py``). Defaults are the reference's."""

    # ingestion
    ingestion_rate_strategy: str = setting(
        "global",
        "local: each distributor enforces the whole rate; global: the rate is divided "
        "between the healthy distributors (not overridable per tenant).",
    )
    ingestion_rate_mb: float = setting(4.0, "Ingestion rate per tenant, in MB (2^20 B) per second.")
    ingestion_burst_size_mb: float = setting(6.0, "Ingestion burst per tenant, in MB.")
    max_label_name_length: int = setting(1024, "Longest label name.")
    max_label_value_length: int = setting(2048, "Longest label value.")
    max_label_names_per_series: int = setting(15, "Most labels on one stream.")
    reject_old_samples: bool = setting(True, "Reject entries older than the max age.")
    reject_old_samples_max_age: float = setting(
        604800.0, "Oldest accepted entry age.", duration=True
    )
    creation_grace_period: float = setting(
        600.0, "How far in the future entries may be.", duration=True
    )
    max_line_size: int = setting(256 * 1024, "Largest log line (0: unlimited).", bytesize=True)
    max_line_size_truncate: bool = setting(False, "Cut longer lines instead of refusing them.")
    max_line_size_truncate_identifier: str = setting(
        "", "Appended to a cut line (counted in max_line_size)."
    )
    max_streams_per_user: int = setting(0, "Active streams per tenant on one ingester (0: off).")
    max_global_streams_per_user: int = setting(
        5000, "Active streams per tenant in the cluster (0: off)."
    )
    unordered_writes: bool = setting(
        True, "Accept entries older than a stream's newest one, within max_chunk_age/2."
    )
    per_stream_rate_limit: int = setting(
        3 * MIB, "Ingestion rate of one stream, per second.", bytesize=True
    )
    per_stream_rate_limit_burst: int = setting(
        15 * MIB, "Ingestion burst of one stream.", bytesize=True
    )
    enforced_labels: list[str] = setting(  # noqa: RUF009
        [], "Labels every pushed stream must have."
    )
    block_ingestion_until: str = setting("", "Reject pushes until this RFC 3339 time.")
    block_ingestion_status_code: int = setting(260, "Status answered while ingestion is blocked.")
    allow_structured_metadata: bool = setting(True, "Accept structured metadata on entries.")
    max_structured_metadata_size: int = setting(
        64 * 1024, "Largest metadata of one entry.", bytesize=True
    )
    max_structured_metadata_entries_count: int = setting(128, "Most metadata pairs on one entry.")
    otlp_promoted_resource_attributes: list[str] = setting(  # noqa: RUF009
        [], "OTLP resource attributes turned into stream labels (empty: the default list)."
    )
    allow_deletes: bool = setting(False, "Deprecated and ignored: use deletion_mode.")
    discover_service_name: list[str] = setting(  # noqa: RUF009
        list(DEFAULT_DISCOVER_SERVICE_NAME),
        "Labels whose value a stream without service_name gets as one, in order (else"
        " unknown_service); empty: no discovery.",
    )
    discover_log_levels: bool = setting(
        True, "Find each entry's level (detected_level) from metadata, labels or its line."
    )
    log_level_fields: list[str] = setting(  # noqa: RUF009
        [], "Names of level fields, in order of preference (empty: the default list)."
    )
    log_level_from_json_max_depth: int = setting(
        2, "Depth of JSON objects searched for a level field (0 or less: any)."
    )
    # queries
    max_query_series: int = setting(500, "Most series a metric query may return.")
    max_query_lookback: float = setting(
        0.0, "How far back queries may read (0: no limit).", duration=True
    )
    max_query_length: float = setting(721 * 3600.0, "Longest query time range.", duration=True)
    max_query_range: float = setting(
        0.0, "Longest [range] of a range aggregation (0: no limit).", duration=True
    )
    max_query_parallelism: int = setting(
        32, "Sub-queries of one query run at once (non-TSDB periods; 0 disables queries)."
    )
    tsdb_max_query_parallelism: int = setting(
        128, "Sub-queries of one query run at once (TSDB periods; 0 disables queries)."
    )
    tsdb_max_bytes_per_shard: int = setting(
        600 * MIB, "Target size of one query shard (must be positive).", bytesize=True
    )
    max_streams_matchers_per_query: int = setting(1000, "Most stream matchers in one query.")
    max_concurrent_tail_requests: int = setting(10, "Open tail connections per tenant.")
    max_entries_limit_per_query: int = setting(5000, "Largest `limit` of a log query.")
    query_timeout: float = setting(60.0, "Queries running longer are cancelled.", duration=True)
    split_queries_by_interval: float = setting(
        3600.0, "Range queries run as sub-queries of this span (0: not split).", duration=True
    )
    split_metadata_queries_by_interval: float = setting(
        86400.0,
        "Span of the sub-queries of labels and series requests (0: not split).",
        duration=True,
    )
    max_query_bytes_read: int = setting(
        0, "Most bytes one query may read, estimated before it runs (0: off).", bytesize=True
    )
    max_querier_bytes_read: int = setting(
        150 * 1024 * MIB, "Most bytes one sub-query may read (0: off).", bytesize=True
    )
    volume_enabled: bool = setting(True, "Serve the index volume endpoints.")
    # ruler
    ruler_max_rules_per_rule_group: int = setting(0, "Most rules in one rule group (0: no limit).")
    ruler_max_rule_groups_per_tenant: int = setting(0, "Most rule groups per tenant (0: no limit).")
    ruler_remote_write_disabled: bool = setting(False, "Discard the tenant's recorded samples.")
    # retention and deletion
    deletion_mode: str = setting(
        "filter-and-delete",
        "Log deletion for the tenant: disabled, filter-only or filter-and-delete.",
    )
    retention_period: float = setting(
        0.0, "How long the tenant's entries are kept (0: forever).", duration=True
    )
    retention_stream: list[StreamRetention] = field(
        default_factory=list,
        metadata={
            "help": "Retention periods of the streams matching selectors (highest priority wins).",
            "duration": False,
            "bytesize": False,
        },
    )
    # patterns
    pattern_ingester_tokenizable_json_fields_default: str = setting(
        "log,message,msg,msg_,_msg,content",
        "Comma-separated JSON members whose text patterns are mined from.",
    )
    pattern_ingester_tokenizable_json_fields_append: str = setting(
        "", "Comma-separated JSON members added to the default ones."
    )
    pattern_ingester_tokenizable_json_fields_delete: str = setting(
        "", "Comma-separated JSON members removed from the default and added ones."
    )
    # the deprecated spelling of runtime_config
    per_tenant_override_config: str = setting(
        "", "Deprecated: the runtime overrides file (use runtime_config.file)."
    )
    per_tenant_override_period: float = setting(
        10.0, "Deprecated: reload period of per_tenant_override_config.", duration=True
    )


@dataclass
class IndexTablesConfig:
    """Index tables of one schema period (``index:``)."""

    prefix: str = setting("index_", "Name prefix of the period's index tables.")
    period: float = setting(
        86400.0, "Time span of one index table; tsdb requires 24h.", duration=True
    )


@dataclass
class PeriodConfig:
    """One schema period, an item of ``schema_config.configs``."""

    from_: str = setting(
        "2020-10-24", "First day (YYYY-MM-DD, UTC) the period applies to.", key="from"
    )
    store: str = setting("tsdb", "Index type; tsdb is required for structured metadata.")
    object_store: str = setting("filesystem", "Object store of the period's data.")
    schema: str = setting("v13", "Schema version; v13 is required for structured metadata.")
    index: IndexTablesConfig = field(default_factory=IndexTablesConfig)


def _default_periods() -> list[PeriodConfig]:
    return [PeriodConfig()]


@dataclass
class SchemaConfig:
    """Storage schema periods (``schema_config:``)."""

    configs: list[PeriodConfig] = field(
        default_factory=_default_periods,
        metadata={
            "help": "Schema periods in increasing `from` order; the last one started is active.",
            "duration": False,
        },
    )


@dataclass
class QuerierConfig:
    """Query execution (``querier:``)."""

    multi_tenant_queries_enabled: bool = setting(False, "Accept `a|b` tenant lists on queries.")
    query_ingesters_within: float = setting(
        3 * 3600.0,
        "Queries whose range ends longer ago than this do not ask the writers of a shared "
        "catalog for their unflushed entries (0: every query asks).",
        duration=True,
    )
    max_concurrent: int = setting(4, "Queries executed at once.")
    log_scan_group_rows: int = setting(
        4_000_000, "Rows a limited log query reads before checking whether it can stop."
    )
    query_memory_limit: str = setting(
        "50%",
        "Memory all running queries may hold in the query engine (DuckDB memory_limit): a "
        "share of the machine's memory (`50%`, of the cgroup limit when lower) or a size "
        "(`4GiB`). Past it, work spills to `<path_prefix>/query-spill`; a query that still "
        "does not fit fails with 400.",
    )
    max_template_line_size: int = setting(
        4 * MIB,
        "Largest output, in characters, of one line_format or label_format render (and of "
        "any value a template builds); larger answers 400.",
    )
    max_template_query_size: int = setting(
        1024 * MIB,
        "Largest total template output, in characters, of one query (0: unlimited); larger "
        "answers 400.",
    )
    execution: str = setting(
        "local",
        "Where query statements run (svc only): `local`, DuckDB in this process; `ray`, "
        "DuckDB in long-lived Ray actors (querier.ray), the frontend keeping the splitting, "
        "limits, fairness and timeouts.",
    )
    ray: RayConfig = field(default_factory=RayConfig)


@dataclass
class QueryRangeConfig:
    """Range query behaviour (``query_range:``)."""

    align_queries_with_step: bool = setting(True, "Align metric range queries to the step.")


@dataclass
class QuerySchedulerConfig:
    """Queues of query requests in front of the query workers (``query_scheduler:``)."""

    max_outstanding_requests_per_tenant: int = setting(
        32000, "Sub-queries a tenant may have queued; more answer 429."
    )
    max_queue_hierarchy_levels: int = setting(
        3, "Deepest actor-path sub-queue under a tenant's queue (0: the header is ignored)."
    )


@dataclass
class RuntimeConfigFiles:
    """Files reloaded while running: per-tenant overrides (``runtime_config:``)."""

    file: str = setting("", "Comma-separated YAML files, merged left to right.")
    period: float = setting(10.0, "How often the files are read again.", duration=True)


@dataclass
class TsdbShipperConfig:
    """Index listing of the tsdb store (``storage_config.tsdb_shipper:``)."""

    resync_interval: float = setting(
        300.0, "How often the index gateway re-lists the index (periodic sync).", duration=True
    )
    min_sync_duration: float = setting(
        0.0,
        "Shortest time one index sync takes; spreads catalog reloads out (tests use it to "
        "observe a sync in progress).",
        duration=True,
    )


@dataclass
class PatternRingConfig:
    """Ring of the pattern ingesters (``pattern_ingester.lifecycler.ring:``)."""

    replication_factor: int = setting(1, "Copies of each stream's patterns; must be 1.")


@dataclass
class PatternLifecyclerConfig:
    """Ring membership of the pattern ingester (``pattern_ingester.lifecycler:``)."""

    ring: PatternRingConfig = field(default_factory=PatternRingConfig)


@dataclass
class PatternIngesterConfig:
    """Log pattern detection behind ``GET /patterns`` (``pattern_ingester:``).

    Patterns are mined when queried (see ``svc/query/patterns.py``), so being enabled
    costs nothing at ingest; the settings keep the reference's names, defaults and
    start-up checks.
    """

    enabled: bool = setting(
        True, "Serve GET /patterns (404 while disabled; the reference defaults to false)."
    )
    lifecycler: PatternLifecyclerConfig = field(default_factory=PatternLifecyclerConfig)
    max_clusters: int = setting(300, "Most patterns one stream's miner of one level keeps.")
    max_eviction_ratio: float = setting(
        0.25,
        "Share of a miner's lines that may cost a pattern before it pauses for 10 minutes.",
    )
    max_allowed_line_length: int = setting(3000, "Longer lines (UTF-8 bytes) are not mined.")
    query_line_limit: int = setting(
        200_000,
        "Most lines one /patterns query mines per tenant: the newest of its range (svc only; "
        "the reference mines every line as it arrives).",
    )
    pattern_sample_interval: float = setting(10.0, "Resolution of pattern samples.", duration=True)
    max_chunk_age: float = setting(
        3600.0, "Span of one chunk of pattern samples (>= pattern_sample_interval).", duration=True
    )
    retain_for: float = setting(
        3 * 3600.0, "How far back patterns reach (>= max_chunk_age).", duration=True
    )
    volume_threshold: float = setting(
        0.99, "Share of the log volume the aggregated patterns must cover, in [0, 1]."
    )


@dataclass
class SqlConfig:
    """Ad hoc SQL over a tenant's logs (``sql:``; ``/svc/api/v1/sql``)."""

    timeout: float = setting(
        0.0,
        "Longest an SQL query may run before it is interrupted with 504 "
        "(0: limits_config.query_timeout).",
        duration=True,
    )
    max_rows: int = setting(
        10_000,
        "Most rows of a JSON answer (`truncated` says when there were more); CSV, Parquet "
        "and Arrow answers are streamed whole.",
    )
    memory_limit: str = setting(
        "",
        "Memory one SQL query may use (DuckDB memory_limit), as a share (`10%`) or a size "
        "(`1GiB`); empty: querier.query_memory_limit divided by querier.max_concurrent.",
    )
    threads: int = setting(2, "DuckDB threads of one SQL query.")


@dataclass
class BackfillConfig:
    """``POST /svc/api/v1/backfill`` (``backfill:``; svc only)."""

    enabled: bool = setting(
        False, "Serve POST /svc/api/v1/backfill: imports of uploaded old logs (404 while off)."
    )
    max_body_size: int = setting(
        1024 * MIB, "Largest backfill upload, as sent (compressed), in bytes (413 over it)."
    )


@dataclass
class StorageConfig:
    """Storage settings (``storage_config:``)."""

    tsdb_shipper: TsdbShipperConfig = field(default_factory=TsdbShipperConfig)
    aws: S3Config = field(default_factory=S3Config)
    named_stores: dict[str, Any] = setting(  # noqa: RUF009
        {},
        "The reference's named object stores (by type, then name): accepted so that a schema "
        "period's object_store may name one; the data stays in the Parquet lake.",
    )


@dataclass
class Config:
    """The whole service configuration."""

    target: str = setting("all", "Components to run: all, write, read, backend, or one name.")
    auth_enabled: bool = setting(True, "Require X-Scope-OrgID on every request.")
    no_auth_tenant: str = setting("fake", "Tenant used when auth is disabled.")
    shutdown_delay: float = setting(
        0.0,
        "Time between SIGTERM and the start of the shutdown, while /ready already answers "
        "503 `Application is stopping`.",
        duration=True,
    )
    server: ServerConfig = field(default_factory=ServerConfig)
    common: CommonConfig = field(default_factory=CommonConfig)
    distributor: DistributorConfig = field(default_factory=DistributorConfig)
    ingester: IngesterConfig = field(default_factory=IngesterConfig)
    limits_config: LimitsConfig = field(default_factory=LimitsConfig)
    querier: QuerierConfig = field(default_factory=QuerierConfig)
    query_range: QueryRangeConfig = field(default_factory=QueryRangeConfig)
    query_scheduler: QuerySchedulerConfig = field(default_factory=QuerySchedulerConfig)
    runtime_config: RuntimeConfigFiles = field(default_factory=RuntimeConfigFiles)
    compactor: CompactorConfig = field(default_factory=CompactorConfig)
    schema_config: SchemaConfig = field(default_factory=SchemaConfig)
    storage_config: StorageConfig = field(default_factory=StorageConfig)
    pattern_ingester: PatternIngesterConfig = field(default_factory=PatternIngesterConfig)
    ruler: RulerConfig = field(default_factory=RulerConfig)
    sql: SqlConfig = field(default_factory=SqlConfig)
    backfill: BackfillConfig = field(default_factory=BackfillConfig)
    catalog: CatalogConfig = field(default_factory=CatalogConfig)
    overrides: dict[str, Any] = setting(  # noqa: RUF009
        {},
        "Per-tenant limits blocks, as the runtime overrides file's `overrides:` (read first, "
        "the files go over them).",
    )


_LOG_LEVELS = frozenset({"debug", "info", "warn", "error"})
DELETION_MODES = ("disabled", "filter-only", "filter-and-delete")


def config_from_yaml(text: str | None) -> Config:
    """Build a Config from YAML text (None or empty: the defaults); raise ConfigError.

    Keys of the reference that svc does not use are accepted (``svc.config_file``).
    """
    from svc.config_file import parse_config_text  # that module builds on this one

    return parse_config_text(text or "").config


def config_from_mapping(raw: dict[str, Any]) -> Config:
    """Build a Config from YAML data holding only svc's keys; raise ConfigError."""
    errors: list[str] = []
    config = _build(Config, raw, "", errors)
    if errors:
        raise ConfigError(errors)
    assert isinstance(config, Config)
    return config


def validate_config(config: Config) -> list[str]:
    """Every semantic problem of an already well-typed config."""
    errors = []
    if config.target not in TARGETS:
        errors.append(f"unrecognized target: {config.target}")
    if config.server.log_level not in _LOG_LEVELS:
        errors.append(f"unrecognized log level: {config.server.log_level}")
    if config.server.log_format not in LOG_FORMATS:
        errors.append(f"unrecognized log format: {config.server.log_format}")
    if not 0 < config.server.http_listen_port < 65536:
        errors.append(f"invalid http_listen_port: {config.server.http_listen_port}")
    if not config.common.path_prefix:
        errors.append("common.path_prefix must not be empty")
    threshold = config.ingester.wal.disk_full_threshold
    if not 0 <= threshold <= 1:
        errors.append(
            f"invalid disk full threshold: {go_format_v(threshold)} (must be between 0 and 1)"
        )
    errors += [
        f"CONFIG ERROR: invalid limits_config config: {problem}"
        for problem in limits_errors(config.limits_config)
    ]
    try:
        parse_memory_limit(config.querier.query_memory_limit)
    except ValueError as exc:
        errors.append(f"querier.query_memory_limit: {exc}")
    if config.querier.max_template_line_size <= 0:
        errors.append("querier.max_template_line_size must be positive")
    errors += ray_config_errors(config.querier.execution, config.querier.ray)
    errors += compactor_config_errors(
        config.compactor,
        target=config.target,
        compactor_address=config.common.compactor_address or config.common.compactor_grpc_address,
    )
    errors += _sql_errors(config.sql)
    errors += schema_config_errors(
        config.schema_config.configs,
        structured_metadata=config.limits_config.allow_structured_metadata,
        named_stores=named_store_names(config.storage_config.named_stores),
    )
    errors += _override_errors(config)
    if config.backfill.enabled and shared_storage(config):
        errors.append(f"backfill.enabled: {LOCAL_STORAGE_ONLY}")
    errors += _pattern_ingester_errors(config.pattern_ingester)
    errors += ruler_config_errors(config.ruler)
    return errors


def _object_store(config: Config) -> str:
    periods = config.schema_config.configs
    return periods[active_period(periods)].object_store if periods else "filesystem"


LOCAL_STORAGE_ONLY = (
    "backfills write to the local lake and catalog, not to object storage or catalog.postgres (yet)"
)
"""Why a backfill refuses a deployment whose lake or catalog is shared."""


def shared_storage(config: Config) -> bool:
    """Whether the lake is in object storage or the catalog in PostgreSQL."""
    return lake_object_store(config) is not None or bool(config.catalog.postgres.dsn)


def lake_object_store(config: Config) -> S3Settings | None:
    """The S3 store the lake is kept in (the active schema period's ``object_store``), or
    None for the local directory under ``common.path_prefix``."""
    return object_store_settings(
        _object_store(config), config.storage_config.aws, config.common.storage.s3
    )


def _sql_errors(cfg: SqlConfig) -> list[str]:
    errors = []
    if cfg.memory_limit:
        try:
            parse_memory_limit(cfg.memory_limit)
        except ValueError as exc:
            errors.append(f"sql.memory_limit: {exc}")
    if cfg.max_rows <= 0:
        errors.append("sql.max_rows must be positive")
    if cfg.threads <= 0:
        errors.append("sql.threads must be positive")
    if cfg.timeout < 0:
        errors.append("sql.timeout must not be negative")
    return errors


def _pattern_ingester_errors(cfg: PatternIngesterConfig) -> list[str]:
    """The reference's checks of the pattern ingester, in its order (first failure only)."""
    if cfg.lifecycler.ring.replication_factor != 1:
        return ["pattern ingester replication factor must be 1"]
    retain, age = round(cfg.retain_for * 1e9), round(cfg.max_chunk_age * 1e9)
    interval = round(cfg.pattern_sample_interval * 1e9)
    if retain < age:
        return [
            f"retain-for ({format_go_duration(retain)}) must be greater than or equal to "
            f"chunk-duration ({format_go_duration(age)})"
        ]
    if age < interval:
        return [
            f"chunk-duration ({format_go_duration(age)}) must be greater than or equal to "
            f"sample-interval ({format_go_duration(interval)})"
        ]
    if not 0 <= cfg.volume_threshold <= 1:
        return [f"volume_threshold ({go_format_v(cfg.volume_threshold)}) must be between 0 and 1"]
    return []


def _override_errors(config: Config) -> list[str]:
    """Problems of the inline ``overrides:`` blocks, worded as the runtime file's."""
    errors: list[str] = []
    for tenant, raw in config.overrides.items():
        found: list[str] = []
        try:
            validate_tenant_id(str(tenant))
        except ServiceError as exc:
            found.append(exc.message)
        if raw is not None:
            found += limits_errors(overlay_limits(config.limits_config, raw, found))
        errors += [f"invalid override for tenant {tenant}: {problem}" for problem in found]
    return errors


def overlay_limits(base: LimitsConfig, raw: Any, errors: list[str]) -> LimitsConfig:
    """``base`` with the keys of one tenant's block replaced (strict: unknown keys and
    values of the wrong type are appended to ``errors``)."""
    if not isinstance(raw, dict):
        errors.append("expected a mapping")
        return base
    hints = typing.get_type_hints(LimitsConfig)
    fields = {f.name: f for f in dataclasses.fields(LimitsConfig)}
    values: dict[str, Any] = {}
    for key, value in raw.items():
        f = fields.get(str(key))
        if f is None:
            errors.append(f"field {key} not found in type validation.plain")
            continue
        converted = _convert(hints[f.name], f, value, str(key), errors)
        if converted is not _INVALID:
            values[f.name] = converted
    return dataclasses.replace(base, **values)


def limits_errors(limits: LimitsConfig) -> list[str]:
    """The reference's checks of a limits block, in its order (the first failure only)."""
    rule_error = retention_rule_error(limits.retention_stream)
    if rule_error:
        return [rule_error]
    if limits.deletion_mode not in DELETION_MODES:
        return ["unknown deletion mode: must be one of " + "|".join(DELETION_MODES)]
    if limits.tsdb_max_bytes_per_shard <= 0:
        return ["querier.tsdb-max-bytes-per-shard must be greater than 0"]
    if limits.block_ingestion_until:
        try:
            parse_timestamp_ns(limits.block_ingestion_until)
        except ValueError as exc:
            return [f"block_ingestion_until: {exc}"]
    return []


def config_to_dict(config: Any) -> dict[str, Any]:
    """The config as plain YAML-ready data, durations as duration strings."""
    out: dict[str, Any] = {}
    for f in dataclasses.fields(config):
        value = getattr(config, f.name)
        key = f.metadata.get("key", f.name)
        if f.metadata.get("duration") and value is not None:
            out[key] = format_prom_duration(round(value * 1e9))
        elif f.metadata.get("bytesize"):
            out[key] = format_datasize(value)
        else:
            out[key] = _plain(value)
    return out


def _plain(value: Any) -> Any:
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return config_to_dict(value)
    if isinstance(value, list):
        return [_plain(item) for item in value]
    if isinstance(value, dict):
        return {key: _plain(item) for key, item in value.items()}
    return value


def _build(cls: type, raw: dict[str, Any], prefix: str, errors: list[str]) -> Any:
    hints = typing.get_type_hints(cls)
    fields = {f.metadata.get("key", f.name): f for f in dataclasses.fields(cls)}
    values: dict[str, Any] = {}
    for key, value in raw.items():
        path = f"{prefix}{key}"
        f = fields.get(str(key))
        if f is None:
            errors.append(f"line {path}: field {key} not found in type {cls.__name__}")
            continue
        converted = _convert(hints[f.name], f, value, path, errors)
        if converted is not _INVALID:
            values[f.name] = converted
    return cls(**values)


_INVALID = object()
_ZERO: dict[Any, Any] = {int: int, float: float, bool: bool, str: str, list: list, dict: dict}


def _build_section(hint: Any, value: Any, path: str, errors: list[str]) -> Any:
    if not isinstance(value, dict):
        errors.append(f"{path}: expected a mapping")
        return _INVALID
    return _build(typing.cast(type, hint), value, f"{path}.", errors)


def _convert_collection(hint: Any, value: Any, path: str, errors: list[str]) -> Any:
    """Lists and string-keyed mappings of config sections (``schema_config.configs``)."""
    origin, args = typing.get_origin(hint), typing.get_args(hint)
    if origin is list:
        if not isinstance(value, list):
            errors.append(f"{path}: expected a list")
            return _INVALID
        items = [
            _build_section(args[0], v or {}, f"{path}[{i}]", errors) for i, v in enumerate(value)
        ]
        return _INVALID if _INVALID in items else items
    if not isinstance(value, dict):
        errors.append(f"{path}: expected a mapping")
        return _INVALID
    built = {
        str(k): _build_section(args[1], v or {}, f"{path}.{k}", errors) for k, v in value.items()
    }
    return _INVALID if _INVALID in built.values() else built


def _optional_of(hint: Any) -> Any:
    """``X`` of an ``X | None`` hint, else None."""
    if not isinstance(hint, types.UnionType):
        return None
    args = [arg for arg in typing.get_args(hint) if arg is not type(None)]
    return args[0] if len(args) == 1 else None


def _section_collection(hint: Any) -> bool:
    origin, args = typing.get_origin(hint), typing.get_args(hint)
    return (origin is list or origin is dict) and dataclasses.is_dataclass(args[-1])


def _convert(hint: Any, f: dataclasses.Field[Any], value: Any, path: str, errors: list[str]) -> Any:
    optional = _optional_of(hint)
    if optional is not None and (_section_collection(optional) or f.metadata.get("duration")):
        # ``X | None`` of a duration or of config sections: unset stays None.
        if value is None:
            return None
        hint = optional
    if dataclasses.is_dataclass(hint):
        if value is None:
            return _INVALID
        return _build_section(hint, value, path, errors)
    if _section_collection(hint):
        return _INVALID if value is None else _convert_collection(hint, value, path, errors)
    if f.metadata.get("duration"):
        if value is None:
            return 0.0
        try:
            return parse_duration_seconds(str(value)) if isinstance(value, str) else float(value)
        except (TypeError, ValueError) as exc:
            errors.append(f"{path}: {exc}")
            return _INVALID
    if f.metadata.get("bytesize"):
        try:
            if isinstance(value, bool | float | list | dict) or value is None:
                raise ValueError(f"cannot unmarshal {value!r} into a byte size")
            return parse_datasize(str(value))
        except ValueError as exc:
            errors.append(f"{path}: {exc}")
            return _INVALID
    origin = typing.get_origin(hint)
    expected = origin if origin is not None and not isinstance(origin, types.UnionType) else hint
    if value is None and expected in _ZERO:
        return _ZERO[expected]()  # an empty key: Go's YAML decoder sets the zero value
    if expected is float and isinstance(value, int) and not isinstance(value, bool):
        return float(value)
    if expected is bool and not isinstance(value, bool):
        errors.append(f"{path}: cannot unmarshal {value!r} into bool")
        return _INVALID
    if expected is int and (isinstance(value, bool) or not isinstance(value, int)):
        errors.append(f"{path}: cannot unmarshal {value!r} into int")
        return _INVALID
    if expected is str:
        return str(value)
    if expected is list and not isinstance(value, list):
        errors.append(f"{path}: expected a list")
        return _INVALID
    if hint == list[str]:
        # An empty item is Go's zero string, as the reference's YAML decoder reads it.
        value = ["" if item is None else item for item in value]
        if not all(isinstance(item, str) for item in value):
            errors.append(f"{path}: expected a list of strings")
            return _INVALID
    if expected is dict and not isinstance(value, dict):
        errors.append(f"{path}: expected a mapping")
        return _INVALID
    return value
