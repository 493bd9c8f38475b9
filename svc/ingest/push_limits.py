"""The push checks' settings (:class:`PushLimits`) of a tenant's limits, for the
distributor and ``svc backfill`` (a module of its own: the backfill does not load the
distributor and what it imports)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from svc.ingest.model import PushLimits
from svc.timestamps import parse_timestamp_ns

if TYPE_CHECKING:
    from svc.config import Config, LimitsConfig

__all__ = ["push_limits"]


def push_limits(config: Config, limits: LimitsConfig) -> PushLimits:
    """The decoding and validation settings of a tenant with these limits (a backfill
    uses them as the push path does)."""
    distributor = config.distributor
    until = limits.block_ingestion_until
    return PushLimits(
        max_recv_msg_size=distributor.max_recv_msg_size,
        max_decompressed_size=distributor.max_decompressed_size,
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
        max_line_size_truncate=limits.max_line_size_truncate,
        max_line_size_truncate_identifier=limits.max_line_size_truncate_identifier,
        enforced_labels=tuple(limits.enforced_labels),
        block_ingestion_until_ns=parse_timestamp_ns(until) if until else 0,
        block_ingestion_until=until,
        block_ingestion_status_code=limits.block_ingestion_status_code,
        discover_service_name=tuple(limits.discover_service_name),
        discover_log_levels=limits.discover_log_levels,
        log_level_fields=tuple(limits.log_level_fields),
        log_level_from_json_max_depth=limits.log_level_from_json_max_depth,
    )
