"""Config sections of the storage backends: the S3 store and the shared catalog.

The S3 keys are the reference's (``storage_config.aws`` and ``common.storage.s3``, the
same ``aws.S3Config`` block in both places); a schema period whose ``object_store`` is
``s3`` or ``aws`` keeps the lake there. ``catalog.postgres.dsn`` (svc only) puts the
catalog in PostgreSQL, shared by every process of a deployment.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from svc.config_fields import setting
from svc.storage.objects import S3Settings

__all__ = [
    "S3_OBJECT_STORES",
    "CatalogConfig",
    "CommonStorageConfig",
    "PostgresCatalogConfig",
    "S3Config",
    "object_store_settings",
]

S3_OBJECT_STORES = frozenset({"s3", "aws"})


@dataclass
class S3Config:
    """An S3-compatible object store (the reference's ``aws.S3Config`` keys)."""

    endpoint: str = setting("", "host:port (or URL) of the S3 endpoint; empty: AWS for the region.")
    bucketnames: str = setting("", "Bucket holding the lake (svc uses exactly one).")
    region: str = setting("", "Region of the bucket.")
    access_key_id: str = setting("", "Access key id (empty: the environment's credentials).")
    secret_access_key: str = setting("", "Secret access key.")
    s3forcepathstyle: bool = setting(
        False, "Address the bucket in the path (http://endpoint/bucket), as MinIO and others need."
    )
    insecure: bool = setting(False, "Talk plain HTTP to the endpoint.")


@dataclass
class CommonStorageConfig:
    """Storage shared by every component (``common.storage:``)."""

    s3: S3Config = field(default_factory=S3Config)


@dataclass
class PostgresCatalogConfig:
    """The catalog in PostgreSQL (``catalog.postgres:``)."""

    dsn: str = setting(
        "",
        "libpq connection string of a shared catalog (empty: SQLite under common.path_prefix).",
    )


@dataclass
class CatalogConfig:
    """Where the catalog of lake files and streams is kept (``catalog:``; svc only)."""

    postgres: PostgresCatalogConfig = field(default_factory=PostgresCatalogConfig)


def _chosen(aws: S3Config, common: S3Config) -> S3Config:
    """``storage_config.aws`` when it names a bucket, else ``common.storage.s3``."""
    return aws if aws.bucketnames else common


def object_store_settings(object_store: str, aws: S3Config, common: S3Config) -> S3Settings | None:
    """The S3 store the active schema period keeps the lake in, or None (local disk)."""
    if object_store not in S3_OBJECT_STORES:
        return None
    chosen = _chosen(aws, common)
    return S3Settings(
        bucket=chosen.bucketnames,
        endpoint=chosen.endpoint,
        region=chosen.region,
        access_key_id=chosen.access_key_id,
        secret_access_key=chosen.secret_access_key,
        force_path_style=chosen.s3forcepathstyle,
        insecure=chosen.insecure,
    )
