"""The tenant limits the compactor reads: deletion mode, retention period, stream rules.

One accessor per key, each a tenant override when set, else ``limits_config``; when the
per-tenant limits lookup lands, these become one-line calls to it.
"""

from __future__ import annotations

from svc.compactor.config import StreamRetention
from svc.config import Config

__all__ = [
    "DISABLED",
    "FILTER_AND_DELETE",
    "FILTER_ONLY",
    "MODES",
    "deletion_enabled",
    "deletion_mode",
    "deletion_served",
    "retention_period",
    "retention_streams",
]

DISABLED = "disabled"
FILTER_ONLY = "filter-only"
FILTER_AND_DELETE = "filter-and-delete"
MODES = (DISABLED, FILTER_ONLY, FILTER_AND_DELETE)


def deletion_mode(config: Config, tenant: str) -> str:
    """The tenant's ``deletion_mode``."""
    override = config.overrides.get(tenant)
    mode = override.deletion_mode if override is not None else None
    return mode or config.limits_config.deletion_mode


def retention_period(config: Config, tenant: str) -> float:
    """The tenant's ``retention_period`` in seconds (0: keep forever)."""
    override = config.overrides.get(tenant)
    if override is not None and override.retention_period is not None:
        return override.retention_period
    return config.limits_config.retention_period


def retention_streams(config: Config, tenant: str) -> list[StreamRetention]:
    """The tenant's ``retention_stream`` rules: its own list replaces the global one."""
    override = config.overrides.get(tenant)
    if override is not None and override.retention_stream is not None:
        return override.retention_stream
    return config.limits_config.retention_stream


def deletion_served(config: Config) -> bool:
    """Whether the deletion routes exist at all: retention on and an index that supports
    deletes (``tsdb`` or ``boltdb-shipper``) in some schema period (DELETION.md 1)."""
    stores = {period.store for period in config.schema_config.configs}
    return config.compactor.retention_enabled and bool(stores & {"tsdb", "boltdb-shipper"})


def deletion_enabled(config: Config, tenant: str) -> bool:
    """Whether the deletion API, its cache generation numbers and query-time filtering
    apply to the tenant."""
    return deletion_served(config) and deletion_mode(config, tenant) != DISABLED
