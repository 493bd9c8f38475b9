"""The tenant limits the compactor reads: deletion mode, retention period, stream rules.

Each accessor takes the tenant's limits in force (``Runtime.limits_for``: its runtime or
inline override, else ``limits_config``).
"""

from __future__ import annotations

from collections.abc import Callable

from svc.compactor.config import StreamRetention
from svc.config import Config, LimitsConfig

__all__ = [
    "DISABLED",
    "FILTER_AND_DELETE",
    "FILTER_ONLY",
    "MODES",
    "LimitsLookup",
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

LimitsLookup = Callable[[str], LimitsConfig]
"""A tenant's limits in force."""


def deletion_mode(limits: LimitsConfig) -> str:
    """The tenant's ``deletion_mode``."""
    return limits.deletion_mode


def retention_period(limits: LimitsConfig) -> float:
    """The tenant's ``retention_period`` in seconds (0: keep forever)."""
    return limits.retention_period


def retention_streams(limits: LimitsConfig) -> list[StreamRetention]:
    """The tenant's ``retention_stream`` rules (an override's list replaces the global one)."""
    return limits.retention_stream


def deletion_served(config: Config) -> bool:
    """Whether the deletion routes exist at all: retention on and an index that supports
    deletes (``tsdb`` or ``boltdb-shipper``) in some schema period (DELETION.md 1)."""
    stores = {period.store for period in config.schema_config.configs}
    return config.compactor.retention_enabled and bool(stores & {"tsdb", "boltdb-shipper"})


def deletion_enabled(config: Config, limits: LimitsConfig) -> bool:
    """Whether the deletion API, its cache generation numbers and query-time filtering
    apply to a tenant with these limits."""
    return deletion_served(config) and deletion_mode(limits) != DISABLED
