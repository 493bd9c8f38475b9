"""What an ad hoc SQL statement may contain: the tables the static check reads.

The check (:mod:`svc.sql.statement`) allows a statement only when it is one of the
``STATEMENT_KEYWORDS`` kinds, reads only the ``VIEWS``, its own common table expressions,
``logql(...)`` and the ``PURE_TABLE_FUNCTIONS``, and calls no function of
``DENIED_FUNCTIONS`` or starting with one of ``DENIED_PREFIXES``: those read files, URLs,
the environment, settings, the catalog or the running query's own text (which names the
lake's files). The sandboxed connection (:mod:`svc.sql.sandbox`) is the second line.
"""

from __future__ import annotations

from typing import Final

from sqlglot import exp

__all__ = [
    "DENIED_FUNCTIONS",
    "DENIED_PREFIXES",
    "FORBIDDEN_NODES",
    "LOGQL_FUNCTION",
    "PURE_TABLE_FUNCTIONS",
    "RESERVED_PREFIX",
    "STATEMENT_KEYWORDS",
    "VIEWS",
    "denied_function",
    "statement_name",
]

VIEWS: Final = frozenset({"logs", "streams"})
"""The relations a query reads, by name."""

LOGQL_FUNCTION: Final = "logql"
"""The table function whose rows are a LogQL log query's entries."""

RESERVED_PREFIX: Final = "__svc"
"""Names the service gives its own relations; a query may not define or read them."""

PURE_TABLE_FUNCTIONS: Final = frozenset({"range", "generate_series", "unnest"})
"""Table functions that compute rows and read nothing."""

STATEMENT_KEYWORDS: Final = frozenset(
    {"SELECT", "WITH", "VALUES", "FROM", "(", "DESCRIBE", "DESC", "SUMMARIZE", "EXPLAIN"}
)
"""The words a statement may begin with."""

DENIED_FUNCTIONS: Final = frozenset(
    {
        # files and URLs
        "glob",
        "sniff_csv",
        "parquet_scan",
        "json_scan",
        "query",
        "query_table",
        "json_execute_serialized_sql",
        "load_aws_credentials",
        "which_secret",
        "checkpoint",
        "force_checkpoint",
        # the environment, the settings and the running statement
        "getenv",
        "current_setting",
        "getvariable",
        "current_query",
        "sql_auto_complete",
        "enable_logging",
        "disable_logging",
        "truncate_duckdb_logs",
        "write_log",
        "parse_duckdb_log_message",
        "enable_profiling",
        "disable_profiling",
    }
)
"""Functions refused wherever they appear (lower case)."""

DENIED_PREFIXES: Final = (
    "read_",  # read_parquet, read_csv*, read_json*, read_text, read_blob, read_ndjson*...
    "parquet_",  # parquet_metadata, parquet_schema, parquet_kv_metadata...
    "duckdb_",  # duckdb_settings, duckdb_tables, duckdb_temporary_files...
    "pragma_",
    "iceberg_",
    "delta_",
    "sqlite_",
    "postgres_",
    "mysql_",
    "ducklake_",
    "http_",
    "st_read",
    "logql_",  # the service's own functions, called by compiled LogQL only
    "__internal",  # DuckDB's own, for COPY and filters it plans
)
"""Name prefixes of refused functions."""

FORBIDDEN_NODES: Final[dict[type[exp.Expr], str]] = {
    exp.Create: "CREATE",
    exp.Drop: "DROP",
    exp.Alter: "ALTER",
    exp.Insert: "INSERT",
    exp.Update: "UPDATE",
    exp.Delete: "DELETE",
    exp.Merge: "MERGE",
    exp.TruncateTable: "TRUNCATE",
    exp.Copy: "COPY",
    exp.Export: "EXPORT",
    exp.Attach: "ATTACH",
    exp.Detach: "DETACH",
    exp.Install: "INSTALL",
    exp.Pragma: "PRAGMA",
    exp.Set: "SET",
    exp.Use: "USE",
    exp.Transaction: "BEGIN",
    exp.Commit: "COMMIT",
    exp.Rollback: "ROLLBACK",
    exp.Command: "command",
    exp.Into: "SELECT ... INTO",
    exp.LoadData: "LOAD",
    exp.Analyze: "ANALYZE",
    exp.Refresh: "REFRESH",
    exp.Cache: "CACHE",
    exp.Uncache: "UNCACHE",
    exp.Grant: "GRANT",
    exp.Revoke: "REVOKE",
    exp.Comment: "COMMENT",
    exp.Show: "SHOW",
    exp.Declare: "DECLARE",
    exp.Execute: "EXECUTE",
    exp.Placeholder: "a parameter",
    exp.Parameter: "a parameter",
    exp.SessionParameter: "a session parameter",
}
"""Statement and clause kinds refused anywhere in the tree, with the name a refusal uses."""


def denied_function(name: str) -> bool:
    """Whether the function ``name`` (any case) is refused."""
    lowered = name.lower()
    return lowered in DENIED_FUNCTIONS or lowered.startswith(DENIED_PREFIXES)


def statement_name(node: exp.Expr) -> str:
    """The SQL keyword of a refused statement or clause."""
    for kind, name in FORBIDDEN_NODES.items():
        if isinstance(node, kind):
            if isinstance(node, exp.Command):
                return str(node.this).upper()
            return name
    return type(node).__name__.upper()
