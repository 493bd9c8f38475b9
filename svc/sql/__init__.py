"""Ad hoc SQL next to LogQL: read-only queries over a tenant's ``logs`` and ``streams``.

statement.py     static check: one statement, read-only kinds, views only (policy.py)
rewrite.py       views renamed, logql() calls expanded (logql_source.py), views.py
sandbox.py       a locked-down DuckDB database per query
service.py       runs a query: bind, lock, execute, read; errors redacted (redact.py)
values.py        result values for JSON and CSV; formats.py streams CSV/Parquet/Arrow
explain.py       the SQL of a LogQL query
cli.py           ``svc sql``
"""
