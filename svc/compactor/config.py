"""The ``compactor:`` block: the reference's keys and defaults, svc's own compaction keys,
and the start-up checks of SPEC 7.2 (DELETION.md 9).

Keys the reference has for object stores and its distributed mode (upload parallelism,
worker counts, horizontal scaling) are accepted and checked as the reference checks them;
on one instance with a local lake they change nothing.
"""

from __future__ import annotations

from dataclasses import dataclass

import logql_to_sql
from gocompat.durations import format_prom_duration
from logql_to_sql import LogQLError, NotASelectorError, ast
from svc.config_fields import MIB, setting

__all__ = [
    "COMPACTOR_TARGETS",
    "DELETE_STORE_DB_TYPES",
    "QUERIER_TARGETS",
    "CompactorConfig",
    "StreamRetention",
    "compactor_config_errors",
    "parse_selector",
    "retention_interval_seconds",
    "retention_rule_error",
]

DELETE_STORE_DB_TYPES = ("boltdb", "sqlite")
COMPACTOR_TARGETS = frozenset({"all", "backend", "compactor"})
"""Targets that run the compactor and serve the deletion API (SPEC 4.1)."""
QUERIER_TARGETS = frozenset({"querier", "read", "ruler", "query-frontend"})
"""Targets that filter deleted lines but reach the compactor through an address."""
_WRAP = "CONFIG ERROR: invalid compactor config: "
_DAY_SECONDS = 86400.0


@dataclass
class CompactorConfig:
    """Compaction, retention and deletion (``compactor:``)."""

    working_directory: str = setting(
        "",
        "Compactor scratch space (sort spill files of compaction jobs); empty: "
        "<path_prefix>/compactor. Delete requests live in the catalog.",
    )
    compaction_interval: float = setting(
        600.0, "How often the compactor looks for work (compaction, deletes).", duration=True
    )
    apply_retention_interval: float = setting(
        0.0,
        "How often retention and delete requests are applied; 0: compaction_interval plus "
        "min(10m, compaction_interval/2).",
        duration=True,
    )
    retention_enabled: bool = setting(
        False, "Apply retention and serve the deletion API (routes answer 404 while off)."
    )
    retention_delete_delay: float = setting(
        7200.0,
        "Files replaced by retention or a delete request are removed from disk this long "
        "after they were unlisted (and once no running query reads them).",
        duration=True,
    )
    retention_delete_worker_count: int = setting(150, "Workers removing files (reference key).")
    retention_table_timeout: float = setting(
        0.0, "Longest time spent on one table per pass (reference key; 0: none).", duration=True
    )
    delete_request_store: str = setting(
        "", "Object store holding delete requests; required when retention is enabled."
    )
    delete_request_store_key_prefix: str = setting("index/", "Key prefix of the delete store.")
    delete_request_store_db_type: str = setting(
        "boltdb", "Delete store database type: boltdb or sqlite (svc keeps them in its catalog)."
    )
    backup_delete_request_store_db_type: str = setting(
        "", "Backup delete store type while migrating (boltdb or empty)."
    )
    delete_batch_size: int = setting(70, "Most delete request shards processed per pass.")
    delete_request_cancel_period: float = setting(
        86400.0,
        "A delete request can be cancelled this long after creation; it is processed only "
        "after it is older than this (plus one minute).",
        duration=True,
    )
    delete_request_grace_period: float = setting(
        60.0,
        "svc: extra age, past the cancel period, before a request is processed (the "
        "reference's fixed minute).",
        duration=True,
    )
    delete_max_interval: float = setting(
        86400.0,
        "Largest span of one shard of a delete request with line filters (0: no sharding).",
        duration=True,
    )
    orphan_grace_period: float = setting(
        3600.0,
        "svc: a lake file no catalog commit listed (a writer killed between its upload and "
        "its commit, a compaction that failed after writing) is removed by the compactor "
        "once it is this old; keep it above the longest flush (0: never removed).",
        duration=True,
    )
    max_compaction_parallelism: int = setting(1, "Tables compacted at once; must be >= 1.")
    upload_parallelism: int = setting(10, "Uploads per compaction (reference key).")
    horizontal_scaling_mode: str = setting(
        "disabled", "disabled, main or worker (reference key; one instance here)."
    )
    deletion_marker_object_store_prefix: str = setting(
        "", "Object-store prefix of deletion markers; must end with / when set."
    )
    compaction_target_file_size: int = setting(
        256 * MIB,
        "svc: a tenant-day's small files are merged into files of about this many bytes "
        "(a file at half of it or more is left alone).",
    )
    compaction_min_files: int = setting(
        8,
        "svc: small files a partition still receiving data must have before they are "
        "merged (partitions whose day ended an hour ago merge from two).",
    )
    compaction_level: int = setting(
        15, "svc: zstd level of compacted files (flushes use 1); 1 to 22."
    )


def retention_interval_seconds(cfg: CompactorConfig) -> float:
    """How often retention and deletes run (the reference's rule for the 0 default)."""
    interval = cfg.apply_retention_interval or cfg.compaction_interval
    if interval == cfg.compaction_interval:
        interval += min(600.0, interval / 2)
    return interval


def compactor_config_errors(
    cfg: CompactorConfig, *, target: str, compactor_address: str
) -> list[str]:
    """The reference's start-up errors of the compactor block, in its order."""
    errors = []
    wrapped = _first_error(cfg)
    if wrapped:
        errors.append(_WRAP + wrapped)
    if cfg.delete_request_store_db_type not in DELETE_STORE_DB_TYPES:
        errors.append(
            f"unexpected delete requests store DB type {cfg.delete_request_store_db_type}. "
            "Supported types: (boltdb, sqlite)"
        )
    if cfg.retention_enabled and target in QUERIER_TARGETS and not compactor_address:
        errors.append(
            "query filtering for deletes requires 'compactor_grpc_address' or "
            "'compactor_address' to be configured"
        )
    if not 1 <= cfg.compaction_level <= 22:
        errors.append(f"compactor.compaction_level must be 1 to 22, not {cfg.compaction_level}")
    if cfg.compaction_target_file_size < MIB:
        errors.append("compactor.compaction_target_file_size must be at least 1MiB")
    if cfg.compaction_min_files < 2:
        errors.append("compactor.compaction_min_files must be at least 2")
    return errors


def _first_error(cfg: CompactorConfig) -> str | None:
    """The first failing check of the reference's ``Validate``."""
    if cfg.max_compaction_parallelism < 1:
        return "max compaction parallelism must be >= 1"
    if cfg.retention_enabled:
        if not cfg.delete_request_store:
            return "compactor.delete-request-store should be configured when retention is enabled"
        prefix_error = _path_prefix_error(cfg.delete_request_store_key_prefix)
        if prefix_error:
            return f"validate delete store path prefix: {prefix_error}"
        marker = cfg.deletion_marker_object_store_prefix
        if marker and not marker.endswith("/"):
            return "deletion marker object store prefix must end with /"
    return None


def _path_prefix_error(prefix: str) -> str | None:
    """The reference's check of an object-store key prefix."""
    if not prefix:
        return "prefix must be set"
    if "\\" in prefix:
        return "prefix should only have '/' as a path separator"
    if prefix.startswith("/"):
        return "prefix should never start with a path separator i.e '/'"
    if not prefix.endswith("/"):
        return "prefix should end with a path separator i.e '/'"
    return None


@dataclass
class StreamRetention:
    """One per-stream retention rule, an item of ``retention_stream`` (limits)."""

    selector: str = setting("", "Label matchers the rule applies to, e.g. '{namespace=\"dev\"}'.")
    priority: int = setting(0, "The highest priority among the matching rules wins.")
    period: float = setting(0.0, "Retention of the matching streams (>= 24h).", duration=True)

    def outranks(self, other: StreamRetention | None) -> bool:
        """Whether this rule wins over ``other`` for a stream both match: the higher
        priority, then the shorter period."""
        return (
            other is None
            or self.priority > other.priority
            or (self.priority == other.priority and self.period < other.period)
        )


def retention_rule_error(rules: list[StreamRetention]) -> str | None:
    """The reference's check of ``retention_stream`` rules (the first failure)."""
    for rule in rules:
        try:
            parse_selector(rule.selector)
        except LogQLError as exc:
            return f"invalid labels matchers: {exc}"
        if rule.period < _DAY_SECONDS:
            period = format_prom_duration(round(rule.period * 1e9))
            return f"retention period must be >= 24h was {period}"
    return None


def parse_selector(text: str) -> tuple[ast.Matcher, ...]:
    """The matchers of a validated stream selector (raises a LogQL error)."""
    expr = logql_to_sql.parse(text)
    if not isinstance(expr, ast.LogQuery) or expr.stages:
        raise NotASelectorError(f"only a stream selector is allowed: {text}")
    return expr.selector.matchers
