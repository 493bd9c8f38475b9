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

import yaml

from svc.durations import format_duration, parse_duration_seconds

__all__ = [
    "CompactorConfig",
    "Config",
    "ConfigError",
    "DistributorConfig",
    "IngesterConfig",
    "LimitsConfig",
    "QuerierConfig",
    "QueryRangeConfig",
    "ServerConfig",
    "config_from_yaml",
    "config_to_dict",
    "setting",
    "validate_config",
]

MIB = 1024 * 1024


class ConfigError(Exception):
    """The configuration cannot be used; ``errors`` lists every problem found."""

    def __init__(self, errors: list[str]) -> None:
        self.errors = errors
        if len(errors) == 1:
            text = errors[0]
        else:
            text = "MULTIPLE CONFIG ERRORS FOUND, PLEASE READ CAREFULLY\n" + "\n".join(errors)
        super().__init__(text)


def setting(default: Any, help: str, *, duration: bool = False) -> Any:
    """A config field with its default and help string (``duration`` marks seconds fields)."""
    if isinstance(default, list | dict):
        factory = default.copy
        return field(default_factory=factory, metadata={"help": help, "duration": duration})
    return field(default=default, metadata={"help": help, "duration": duration})


@dataclass
class ServerConfig:
    """HTTP server settings (``server:``)."""

    http_listen_address: str = setting("0.0.0.0", "Address the HTTP server listens on.")
    http_listen_port: int = setting(3100, "Port the HTTP server listens on.")
    grpc_listen_port: int = setting(9095, "gRPC port (reserved for the distributed modes).")
    log_level: str = setting("info", "Log level: debug, info, warn or error.")
    grpc_server_max_send_msg_size: int = setting(4 * MIB, "Largest response a querier sends.")


@dataclass
class CommonConfig:
    """Settings shared by every component (``common:``)."""

    path_prefix: str = setting("./data", "Directory under which all data is stored.")
    replication_factor: int = setting(1, "Copies of each stream kept by ingesters.")


@dataclass
class DistributorConfig:
    """Push request handling (``distributor:``)."""

    max_recv_msg_size: int = setting(100 * MIB, "Largest compressed push body, in bytes.")
    max_decompressed_size: int = setting(5000 * MIB, "Largest decompressed push body, bytes.")


@dataclass
class IngesterConfig:
    """Write-ahead log and in-memory head (``ingester:``)."""

    head_max_bytes: int = setting(128 * MIB, "Flush the head to Parquet at this many line bytes.")
    max_chunk_age: float = setting(
        7200.0, "Flush the head when its oldest data is this old.", duration=True
    )
    flush_check_period: float = setting(
        10.0, "How often the flusher looks at the head.", duration=True
    )
    flush_on_shutdown: bool = setting(True, "Flush the head to Parquet on a clean shutdown.")
    wal_segment_max_bytes: int = setting(64 * MIB, "Start a new WAL segment past this size.")
    row_group_rows: int = setting(131072, "Rows per Parquet row group.")


@dataclass
class LimitsConfig:
    """Per-tenant limits (``limits_config:``)."""

    block_ingestion_until: str = setting("", "Reject pushes until this RFC 3339 time.")
    block_ingestion_status_code: int = setting(260, "Status answered while ingestion is blocked.")
    max_line_size: int = setting(256 * 1024, "Largest log line in bytes (0: unlimited).")
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
    allow_structured_metadata: bool = setting(True, "Accept structured metadata on entries.")
    max_entries_limit_per_query: int = setting(5000, "Largest `limit` of a log query.")
    max_query_series: int = setting(500, "Most series a metric query may return.")
    max_query_length: float = setting(721 * 3600.0, "Longest query time range.", duration=True)
    query_timeout: float = setting(60.0, "Queries running longer are cancelled.", duration=True)
    volume_enabled: bool = setting(True, "Serve the index volume endpoints.")
    otlp_promoted_resource_attributes: list[str] = setting(  # noqa: RUF009
        [], "OTLP resource attributes turned into stream labels (empty: the default list)."
    )


@dataclass
class QuerierConfig:
    """Query execution (``querier:``)."""

    multi_tenant_queries_enabled: bool = setting(False, "Accept `a|b` tenant lists on queries.")
    max_concurrent: int = setting(4, "Queries executed at once.")


@dataclass
class QueryRangeConfig:
    """Range query behaviour (``query_range:``)."""

    align_queries_with_step: bool = setting(True, "Align metric range queries to the step.")


@dataclass
class CompactorConfig:
    """Compaction, retention and deletion (``compactor:``)."""

    retention_enabled: bool = setting(False, "Apply retention and delete requests.")
    working_directory: str = setting("", "Compactor scratch space (default: under path_prefix).")


@dataclass
class Config:
    """The whole service configuration."""

    target: str = setting("all", "Components to run: all, write, read, backend, or one name.")
    auth_enabled: bool = setting(True, "Require X-Scope-OrgID on every request.")
    no_auth_tenant: str = setting("fake", "Tenant used when auth is disabled.")
    server: ServerConfig = field(default_factory=ServerConfig)
    common: CommonConfig = field(default_factory=CommonConfig)
    distributor: DistributorConfig = field(default_factory=DistributorConfig)
    ingester: IngesterConfig = field(default_factory=IngesterConfig)
    limits_config: LimitsConfig = field(default_factory=LimitsConfig)
    querier: QuerierConfig = field(default_factory=QuerierConfig)
    query_range: QueryRangeConfig = field(default_factory=QueryRangeConfig)
    compactor: CompactorConfig = field(default_factory=CompactorConfig)


_TARGETS = frozenset(
    [
        "all",
        "read",
        "write",
        "backend",
        "distributor",
        "ingester",
        "querier",
        "query-frontend",
        "query-scheduler",
        "index-gateway",
        "ruler",
        "compactor",
    ]
)
_LOG_LEVELS = frozenset({"debug", "info", "warn", "error"})


def config_from_yaml(text: str | None) -> Config:
    """Build a Config from YAML text (None or empty: the defaults); raise ConfigError."""
    raw = yaml.safe_load(text) if text else None
    if raw is None:
        raw = {}
    if not isinstance(raw, dict):
        raise ConfigError(["config file must be a YAML mapping"])
    errors: list[str] = []
    config = _build(Config, raw, "", errors)
    if errors:
        raise ConfigError(errors)
    assert isinstance(config, Config)
    return config


def validate_config(config: Config) -> list[str]:
    """Every semantic problem of an already well-typed config."""
    errors = []
    if config.target not in _TARGETS:
        errors.append(f"unrecognized target: {config.target}")
    if config.server.log_level not in _LOG_LEVELS:
        errors.append(f"unrecognized log level: {config.server.log_level}")
    if not 0 < config.server.http_listen_port < 65536:
        errors.append(f"invalid http_listen_port: {config.server.http_listen_port}")
    if not config.common.path_prefix:
        errors.append("common.path_prefix must not be empty")
    return errors


def config_to_dict(config: Any) -> dict[str, Any]:
    """The config as plain YAML-ready data, durations as duration strings."""
    out: dict[str, Any] = {}
    for f in dataclasses.fields(config):
        value = getattr(config, f.name)
        if dataclasses.is_dataclass(value):
            out[f.name] = config_to_dict(value)
        elif f.metadata.get("duration"):
            out[f.name] = format_duration(value)
        else:
            out[f.name] = value
    return out


def _build(cls: type, raw: dict[str, Any], prefix: str, errors: list[str]) -> Any:
    hints = typing.get_type_hints(cls)
    fields = {f.name: f for f in dataclasses.fields(cls)}
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


def _convert(hint: Any, f: dataclasses.Field[Any], value: Any, path: str, errors: list[str]) -> Any:
    if dataclasses.is_dataclass(hint):
        if value is None:
            return _INVALID
        if not isinstance(value, dict):
            errors.append(f"{path}: expected a mapping")
            return _INVALID
        return _build(typing.cast(type, hint), value, f"{path}.", errors)
    if f.metadata.get("duration"):
        try:
            return parse_duration_seconds(str(value)) if isinstance(value, str) else float(value)
        except (TypeError, ValueError) as exc:
            errors.append(f"{path}: {exc}")
            return _INVALID
    origin = typing.get_origin(hint)
    expected = origin if origin is not None and not isinstance(origin, types.UnionType) else hint
    if expected is float and isinstance(value, int) and not isinstance(value, bool):
        return float(value)
    if expected is bool and not isinstance(value, bool):
        errors.append(f"{path}: cannot unmarshal {value!r} into bool")
        return _INVALID
    if expected is int and (isinstance(value, bool) or not isinstance(value, int)):
        errors.append(f"{path}: cannot unmarshal {value!r} into int")
        return _INVALID
    if expected is str:
        return "" if value is None else str(value)
    if expected is list and not isinstance(value, list):
        errors.append(f"{path}: expected a list")
        return _INVALID
    return value
