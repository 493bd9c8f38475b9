"""Validation of ``schema_config`` periods: the storage schema rules of SPEC 7.2.

Structured metadata (and native OTLP ingestion) need schema v13 or newer and the ``tsdb``
index in the active period; store and object-store names must be known.
"""

from __future__ import annotations

import datetime
import re
from collections.abc import Sequence
from typing import Protocol

__all__ = ["Period", "active_period", "schema_config_errors"]


class IndexTables(Protocol):
    """What the checks read of a period's ``index:`` settings."""

    @property
    def period(self) -> float:
        """Seconds one index table spans."""


class Period(Protocol):
    """What the checks read of one ``schema_config.configs`` item (``svc.config``'s
    ``PeriodConfig``, which this module need not import)."""

    @property
    def from_(self) -> str:
        """First day, YYYY-MM-DD."""

    @property
    def store(self) -> str:
        """Index type."""

    @property
    def object_store(self) -> str:
        """Object store name."""

    @property
    def schema(self) -> str:
        """Schema version, ``v13``."""

    @property
    def index(self) -> IndexTables:
        """Index table settings."""


_DAY_SECONDS = 86400.0
_INDEX_TYPES = ("tsdb",)
# Backends the reference still accepts as both an index type and an object store.
_LEGACY_BACKENDS = frozenset(
    {
        "aws-dynamo",
        "bigtable",
        "bigtable-hashed",
        "cassandra",
        "gcp",
        "gcp-columnkey",
        "grpc-store",
        "inmemory",
    }
)
_LEGACY_INDEX_TYPES = _LEGACY_BACKENDS | {"boltdb-shipper", "boltdb", "aws"}
_OBJECT_STORES = ("filesystem", "aws", "alibabacloud", "azure", "bos", "cos", "gcs", "s3", "swift")
_LEGACY_OBJECT_STORES = _LEGACY_BACKENDS
_SCHEMA_VERSIONS = range(9, 14)
_STRUCTURED_METADATA_ADVICE = (
    "Set `allow_structured_metadata: false` in the `limits_config` section or set the command "
    "line argument `-validation.allow-structured-metadata=false` and restart svc. Then proceed "
    "to {step} before re-enabling this config, search for 'Storage Schema' in the docs for the "
    "schema update procedure"
)


def _schema_version(schema: str) -> int | None:
    """The number of ``v13`` (leading and trailing ``v`` trimmed, as the reference does)."""
    digits = schema.strip("v")
    return int(digits) if re.fullmatch(r"[+-]?[0-9]+", digits) else None


def _period_start(period: Period) -> datetime.date | None:
    if not re.fullmatch(r"[0-9]{4}-[0-9]{2}-[0-9]{2}", period.from_):
        return None
    try:
        return datetime.date.fromisoformat(period.from_)
    except ValueError:
        return None


def _period_error(period: Period) -> str | None:
    """The first structural problem of one period, in the reference's order."""
    if _period_start(period) is None:
        return f'parsing time "{period.from_}" as "2006-01-02": expected a YYYY-MM-DD date'
    if period.store == "tsdb" and period.index.period != _DAY_SECONDS:
        return "tsdb must always have periodic config for index set to 24h"
    if period.index.period > 0 and period.index.period % _DAY_SECONDS:
        return "the table period must be a multiple of 24h (1h for schema v1)"
    if _schema_version(period.schema) not in _SCHEMA_VERSIONS:
        return "invalid schema version"
    return None


def _schema_structure_error(periods: Sequence[Period]) -> str | None:
    for index, period in enumerate(periods):
        problem = _period_error(period)
        if problem is not None:
            return problem
        start = _period_start(period)
        following = _period_start(periods[index + 1]) if index + 1 < len(periods) else None
        if start is not None and following is not None and following <= start:
            return "from time in schemas must be distinct and in increasing order"
    return None


def active_period(periods: Sequence[Period], today: datetime.date | None = None) -> int:
    """Index of the period that applies to data pushed now: the last one already started."""
    today = today or datetime.datetime.now(datetime.UTC).date()
    active = 0
    for index, period in enumerate(periods):
        start = _period_start(period)
        if start is not None and start <= today:
            active = index
    return active


def _schema_value_errors(period: Period) -> list[str]:
    errors = []
    if period.store not in _INDEX_TYPES and period.store not in _LEGACY_INDEX_TYPES:
        errors.append(
            f"unrecognized `store` (index) type `{period.store}`, "
            f"choose one of: {', '.join(_INDEX_TYPES)}"
        )
    if period.object_store not in _OBJECT_STORES and period.object_store not in (
        _LEGACY_OBJECT_STORES
    ):
        errors.append(
            f"unrecognized `object_store` type `{period.object_store}`, which also does not "
            f"match any named_stores. Choose one of: {', '.join(_OBJECT_STORES)}. "
            "Or choose a named_store"
        )
    return errors


def _structured_metadata_errors(period: Period) -> list[str]:
    errors = []
    version = _schema_version(period.schema)
    if version is not None and version < 13:
        errors.append(
            "CONFIG ERROR: schema v13 is required to store Structured Metadata and use native "
            f"OTLP ingestion, your schema version is {period.schema}. "
            + _STRUCTURED_METADATA_ADVICE.format(step="update to schema v13 or newer")
        )
    if period.store != "tsdb":
        errors.append(
            "CONFIG ERROR: `tsdb` index type is required to store Structured Metadata and use "
            f"native OTLP ingestion, your index type is `{period.store}` (defined in the `store` "
            "parameter of the schema_config). "
            + _STRUCTURED_METADATA_ADVICE.format(step="update the schema to use index type `tsdb`")
        )
    return errors


def schema_config_errors(periods: Sequence[Period], *, structured_metadata: bool) -> list[str]:
    """Every problem of the schema periods; with ``structured_metadata`` (allowed by the
    limits) the active period must also support it."""
    if not periods:
        return ["invalid schema config: must specify at least one schema configuration"]
    errors = []
    problem = _schema_structure_error(periods)
    if problem is not None:
        errors.append(f"invalid schema config: {problem}")
    for period in periods:
        errors += _schema_value_errors(period)
    if structured_metadata:
        errors += _structured_metadata_errors(periods[active_period(periods)])
    return errors
