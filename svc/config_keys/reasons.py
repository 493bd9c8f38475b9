"""Why a reference key means nothing here: the reason logged for each ignored key.

Rules are matched in order against the dotted path of the ignored key; a rule's pattern
names path segments, ``*`` standing for any one segment and a leading ``**`` for any
number of them; it also covers the keys below those it names.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable
from fnmatch import fnmatchcase
from typing import Final, Protocol

__all__ = ["ignore_reason", "log_ignored_keys"]

log = logging.getLogger(__name__)

_CLUSTER: Final = "single process: no hash ring, memberlist or key-value store"
_STORAGE: Final = "data is kept in the Parquet lake under common.path_prefix"
_CACHE: Final = "no result, chunk or index caches: queries read the Parquet lake"
_IN_PROCESS: Final = "one process: queries are planned and executed in-process"
_GRPC: Final = "no gRPC listener: every API is served over HTTP"
_FLAG: Final = "set by a command-line flag only"

_RULES: Final = (
    ("storage_config.tsdb_shipper", "the index is the lake's catalog under common.path_prefix"),
    ("**.ring", _CLUSTER),
    ("**.lifecycler", _CLUSTER),
    ("**.kvstore", _CLUSTER),
    ("**.*ring", _CLUSTER),
    ("memberlist", _CLUSTER),
    ("common.instance_*", _CLUSTER),
    ("server.grpc*", _GRPC),
    ("server.*", "the HTTP server is uvicorn; settings of the reference's Go server do not apply"),
    ("**.*cache*", _CACHE),
    ("**.*_cache_config", _CACHE),
    ("common.storage", _STORAGE),
    ("common.*", _STORAGE),
    ("storage_config", _STORAGE),
    ("storage_config.*", _STORAGE),
    ("ruler_storage", _STORAGE),
    ("ruler.storage.*", "rule groups are files under common.path_prefix (ruler.storage.local)"),
    ("chunk_store_config", _CACHE),
    ("**.grpc_client_config", _GRPC),
    ("*.*grpc*", _GRPC),
    ("ingester_client", "the ingester runs in the same process"),
    ("frontend", _IN_PROCESS),
    ("frontend_worker", _IN_PROCESS),
    ("query_scheduler.*", _IN_PROCESS),
    ("query_range.*", _IN_PROCESS),
    ("query_engine", _IN_PROCESS),
    ("querier.*", _IN_PROCESS),
    ("index_gateway", "the index is the catalog, read in-process"),
    ("bloom_*", "no bloom filters: Parquet statistics prune instead"),
    ("kafka_config", "no Kafka ingestion: pushes are written to the local WAL"),
    ("ingester.kafka_ingestion", "no Kafka ingestion: pushes are written to the local WAL"),
    ("dataobj", "no data objects: entries are stored as Parquet files"),
    ("ingest_limits*", "limits are enforced by the distributor in-process"),
    ("ingester.wal", "the WAL is kept under common.path_prefix"),
    ("ingester.*", "the head is flushed to Parquet; chunk and WAL tuning of the reference differs"),
    ("compactor*", "compaction of Parquet files is svc's own"),
    ("pattern_ingester.*", "patterns are mined when queried (GET /patterns)"),
    ("runtime_config", "per-tenant settings are read from this file's overrides block"),
    ("verifyconfig", _FLAG),
    ("printconfig", _FLAG),
    ("listtargets", _FLAG),
    ("logconfig", _FLAG),
    ("configfile", _FLAG),
    ("configexpandenv", _FLAG),
    ("ballast_bytes", "no Go heap to pad"),
    ("tracing", "no tracing"),
    ("analytics", "no usage reporting"),
    ("profiling", "no profiling endpoints"),
    ("ui", "no embedded UI"),
    ("operational_config", "not used by svc"),
    ("limits_config.*", "this limit is not enforced by svc"),
    ("distributor.*", "pushes are validated and written in-process"),
    ("ruler.*", "the ruler evaluates in-process, without a ring"),
)


def _matches(path: list[str], pattern: list[str]) -> bool:
    if not pattern:
        return True  # a rule also covers every key below the ones it names
    if pattern[0] == "**":
        rest = pattern[1:]
        return any(_matches(path[i:], rest) for i in range(len(path) - len(rest) + 1))
    return bool(path) and fnmatchcase(path[0], pattern[0]) and _matches(path[1:], pattern[1:])


def ignore_reason(path: str) -> str:
    """The reason for ignoring the key at dotted ``path`` (list items as ``[]``)."""
    segments = [seg for seg in path.replace("[]", "").replace("{}", "").split(".") if seg]
    for pattern, reason in _RULES:
        if _matches(segments, pattern.split(".")):
            return reason
    return "not used by svc"


class _Ignored(Protocol):
    @property
    def path(self) -> str: ...
    @property
    def reason(self) -> str: ...


def log_ignored_keys(ignored: Iterable[_Ignored]) -> None:
    """One info line per reason, naming the ignored keys it covers."""
    by_reason: dict[str, list[str]] = {}
    for key in ignored:
        by_reason.setdefault(key.reason, []).append(key.path)
    for reason, paths in by_reason.items():
        log.info("config keys accepted but ignored (%s): %s", reason, ", ".join(paths))
