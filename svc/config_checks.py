"""Start-up checks of SPEC 7.2 that read more than svc's own settings.

``validate_config`` checks svc's settings. These checks also read the reference's keys that
svc accepts without using (``LoadedConfig.raw``), with the reference's defaults where a key
is absent, and the listeners' TLS files. Each produces the reference's message; the caller
aggregates them with ``validate_config``'s under ``MULTIPLE CONFIG ERRORS FOUND``.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterator, Mapping
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from gocompat.durations import format_go_duration, parse_prom_or_go_duration
from svc.config_keys import RefNode, reference_tree
from svc.config_schema import active_period
from svc.tls.checks import client_tls_errors, server_tls_errors

if TYPE_CHECKING:
    from svc.config import Config
    from svc.config_file import LoadedConfig

__all__ = ["startup_errors"]

_STORAGE_BACKENDS = ("azure", "filesystem", "gcs", "s3", "bos", "swift", "alibabacloud", "cos")
_SSE_TYPES = ("SSE-KMS", "SSE-S3")
_PREFIX_CHARACTERS = re.compile(r"[0-9a-zA-Z-]+")
_KAFKA_TARGETS = frozenset({"all", "write", "distributor"})
_STORAGE_WRAP = "CONFIG ERROR: invalid storage_config config: "
_NO_RUNTIME_CONFIG = (
    "overrides-exporter has been enabled, but no runtime configuration file was configured"
)


def _get(raw: Any, path: str, default: Any = None) -> Any:
    """The value at dotted ``path`` of YAML data (``default`` when absent or null)."""
    node = raw
    for key in path.split("."):
        if not isinstance(node, Mapping) or node.get(key) is None:
            return default
        node = node[key]
    return node


def _configured(value: Any) -> bool:
    """A block holds at least one value (the reference compares it with its defaults)."""
    if isinstance(value, Mapping):
        return any(_configured(v) for v in value.values())
    if isinstance(value, list):
        return bool(value)
    return value not in (None, "", False, 0)


def _duration_ns(value: Any, default: int) -> int:
    if value is None:
        return default
    if isinstance(value, int | float) and not isinstance(value, bool):
        return int(value)
    try:
        return parse_prom_or_go_duration(str(value))
    except ValueError:
        return default


def _common_errors(raw: Any, config: Config) -> list[str]:
    errors = []
    storage = _get(raw, "common.storage", {})
    found = [name for name in _STORAGE_BACKENDS if _configured(_get(storage, name))]
    if len(found) > 1:
        errors.append(
            "too many storage configs provided in the common config, please only define one "
            "storage backend"
        )
    if _get(raw, "common.persist_tokens") is True and not config.common.path_prefix:
        errors.append("if persist_tokens is true, path_prefix MUST be defined")
    old = _configured(_get(raw, "frontend_worker.grpc_client_config"))
    new = _configured(_get(raw, "frontend_worker.query_frontend_grpc_client")) or _configured(
        _get(raw, "frontend_worker.query_scheduler_grpc_client")
    )
    if old and new:
        errors.append(
            "both `grpc_client_config` and (`query_frontend_grpc_client` or "
            "`query_scheduler_grpc_client`) are set at the same time. Please use only "
            "`query_frontend_grpc_client` and `query_scheduler_grpc_client`"
        )
    return errors


def _directory_errors(raw: Any, config: Config) -> list[str]:
    """The reference's ``validateDirectoriesExist``: once per tsdb period."""
    if config.common.path_prefix:
        return []  # the reference derives every directory from it
    errors = []
    where = "please set this directly or set `path_prefix:` in the `common:` section"
    for period in config.schema_config.configs:
        if period.store != "tsdb":
            continue
        for key in ("active_index_directory", "cache_location"):
            if not _get(raw, f"storage_config.tsdb_shipper.{key}"):
                errors.append(
                    "CONFIG ERROR: `tsdb` index type is configured in at least one schema "
                    f"period, however, `storage_config`, `tsdb_shipper`, `{key}` is not set, "
                    + where
                )
        if not config.compactor.working_directory:
            errors.append(
                "CONFIG ERROR: `compactor:` `working_directory:` is empty, please set a valid "
                "directory or set `path_prefix:` in the `common:` section"
            )
    return errors


def _s3_bucket_error(s3: Any) -> str | None:
    """The reference's check of a ``bucket.Config``'s ``s3`` block."""
    endpoint, bucket = str(_get(s3, "endpoint", "")), str(_get(s3, "bucket_name", ""))
    if endpoint and bucket and endpoint.split(".")[0] == bucket:
        return "the endpoint must not prefixed with the bucket name"
    sts = str(_get(s3, "sts_endpoint", ""))
    if sts:
        parts = urlsplit(sts)
        if not (parts.scheme and parts.netloc):
            return "sts-endpoint must be a valid url"
    sse_type = str(_get(s3, "sse.type", ""))
    if sse_type and sse_type not in _SSE_TYPES:
        return "unsupported S3 SSE type"
    context = str(_get(s3, "sse.kms_encryption_context", ""))
    if context:
        try:
            decoded = json.loads(context)
        except ValueError:
            decoded = None
        if not isinstance(decoded, dict) or not all(isinstance(v, str) for v in decoded.values()):
            return "invalid S3 SSE encryption context"
    return None


def _bucket_error(block: Any) -> str | None:
    """The reference's ``bucket.Config.Validate``: storage prefix, then the s3 block."""
    prefix = str(_get(block, "storage_prefix", ""))
    if prefix and not _PREFIX_CHARACTERS.fullmatch(prefix):
        return (
            "storage prefix contains invalid characters, it may only contain digits, English "
            "alphabet letters and dashes"
        )
    return _s3_bucket_error(_get(block, "s3", {}))


def _storage_errors(raw: Any, config: Config) -> list[str]:
    errors = []
    for path in ("storage_config.object_store", "common.storage.object_store"):
        problem = _bucket_error(_get(raw, path, {}))
        if problem:
            errors.append(f"{_STORAGE_WRAP}invalid object store config: {problem}")
    problem = _bucket_error(_get(raw, "ruler_storage", {}))
    if problem:
        errors.append(f"CONFIG ERROR: invalid ruler_storage config: {problem}")
    look_back = _duration_ns(_get(raw, "ingester.query_store_max_look_back_period"), 0)
    periods = config.schema_config.configs
    active = periods[active_period(periods)] if periods else None
    if config.target == "all" and look_back and active and active.object_store != "filesystem":
        errors.append(
            "it is an error to specify a non zero `query_store_max_look_back_period` value "
            "when using any object store other than `filesystem`"
        )
    return errors


def _cache_blocks(raw: Any, ref: RefNode) -> Iterator[Any]:
    """Every block of the reference's ``cache.Config`` type present in the data."""
    if ref.go_type == "cache.Config" and isinstance(raw, Mapping):
        yield raw
    if isinstance(raw, Mapping) and ref.is_struct:
        for key, value in raw.items():
            child = ref.child(str(key))
            if child is not None:
                yield from _cache_blocks(value, child)
    elif ref.item is not None:
        items = raw.values() if isinstance(raw, Mapping) else raw if isinstance(raw, list) else []
        for value in items:
            yield from _cache_blocks(value, ref.item)


def _cache_errors(raw: Any, config: Config) -> list[str]:
    for block in _cache_blocks(raw, reference_tree()):
        memcached = _get(block, "memcached_client.host") or _get(
            block, "memcached_client.addresses"
        )
        if memcached and _get(block, "redis.endpoint"):
            return ["use of multiple cache storage systems is not supported"]
    return []


def _kafka_errors(raw: Any, config: Config) -> list[str]:
    errors = []
    ingesting = _get(raw, "ingester.kafka_ingestion.enabled") is True
    if ingesting:
        reader = _get(raw, "kafka_config.reader_config.address", "localhost:9092")
        writer = _get(raw, "kafka_config.writer_config.address", "localhost:9092")
        problem = None
        if not reader and not writer:
            problem = "the Kafka address has not been configured"
        elif not _get(raw, "kafka_config.topic"):
            problem = "the Kafka topic has not been configured"
        elif bool(_get(raw, "kafka_config.sasl_username")) != bool(
            _get(raw, "kafka_config.sasl_password")
        ):
            problem = "both sasl username and password must be set"
        if problem:
            errors.append(f"CONFIG ERROR: invalid kafka_config config: {problem}")
    writing = _get(raw, "distributor.kafka_writes_enabled") is True
    if writing and not ingesting and config.target in _KAFKA_TARGETS:
        errors.append("kafka is enabled in distributor but not in ingester")
    return errors


def _bloom_gateway_errors(raw: Any, config: Config) -> list[str]:
    if _get(raw, "bloom_gateway.enabled") is True and not _get(
        raw, "bloom_gateway.client.addresses"
    ):
        return [
            "CONFIG ERROR: invalid bloom_gateway config: addresses requires a list of comma "
            "separated strings in DNS service discovery format with at least one item"
        ]
    return []


def _wal_errors(raw: Any, config: Config) -> list[str]:
    enabled = _get(raw, "ingester.wal.enabled", True)
    duration = _duration_ns(_get(raw, "ingester.wal.checkpoint_duration"), 5 * 60 * 10**9)
    if enabled is True and duration < 1:
        return [
            "CONFIG ERROR: invalid ingester config: invalid checkpoint duration: "
            + format_go_duration(duration)
        ]
    return []


def _overrides_exporter_errors(raw: Any, config: Config) -> list[str]:
    """The exporter publishes the runtime overrides, so it needs their file (svc has no
    such target: ``validate_config`` also names it unrecognized)."""
    if config.target == "overrides-exporter" and not _get(raw, "runtime_config.file"):
        return [_NO_RUNTIME_CONFIG]
    return []


def _tls_errors(raw: Any, config: Config) -> list[str]:
    return server_tls_errors(config.server) + client_tls_errors(raw)


_CHECKS: tuple[Callable[[Any, Config], list[str]], ...] = (
    _common_errors,
    _storage_errors,
    _directory_errors,
    _wal_errors,
    _overrides_exporter_errors,
    _kafka_errors,
    _bloom_gateway_errors,
    _cache_errors,
    _tls_errors,
)


def startup_errors(loaded: LoadedConfig) -> list[str]:
    """Every problem of SPEC 7.2 found in the file's accepted keys and the TLS settings."""
    errors: list[str] = []
    for check in _CHECKS:
        errors += check(loaded.raw, loaded.config)
    return errors
