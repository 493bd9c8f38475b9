"""A view's delete filters as SQL: the rows of one tenant's sources that stay visible.

Applied where the engine binds ``logs`` (``QueryEngine.bound_sql``), so every query kind
(log, metric, tail, patterns, detected fields, Parquet results) sees it alike. A delete
filter of line filters only becomes ``NOT coalesce(<condition>, false)`` on the rows; any
other pipeline an anti-join with the entries it keeps (``logql_to_sql.compile_deletion``).
Rendered texts are cached per (filter, relation names): the names are the only values
that change between queries.
"""

from __future__ import annotations

from functools import lru_cache

from sqlglot import exp

from logql_to_sql import DIALECT, compile_deletion
from svc.storage.store import DeleteFilter

__all__ = ["visible_rows_sql"]


def visible_rows_sql(source: str, deletes: tuple[DeleteFilter, ...], *, streams: str) -> str:
    """A SELECT of the rows (``ts, stream_id, line, metadata``) of the relation named
    ``source`` that no filter of ``deletes`` removes; ``streams`` names the tenant's
    stream relation."""
    conditions: list[str] = []
    anti: list[str] = []
    for delete in deletes:
        condition = _condition(delete, streams)
        if condition is None:
            anti.append(f"({_entries(delete, source, streams)})")
        else:
            conditions.append(f"NOT coalesce({condition}, false)")
    text = f"SELECT r.ts, r.stream_id, r.line, r.metadata FROM {source} AS r"
    if anti:
        text += (
            f" ANTI JOIN ({' UNION ALL '.join(anti)}) AS d "
            "ON r.stream_id = d.stream_id AND r.ts = d.ts AND r.line = d.line"
        )
    if conditions:
        text += " WHERE " + " AND ".join(conditions)
    return text


@lru_cache(maxsize=1024)
def _condition(delete: DeleteFilter, streams: str) -> str | None:
    plan = compile_deletion(delete.query, start_ns=delete.start_ns, end_ns=delete.end_ns)
    if plan.condition is None:
        return None
    return _renamed(plan.condition, {"streams": streams}).sql(dialect=DIALECT)


@lru_cache(maxsize=1024)
def _entries(delete: DeleteFilter, logs: str, streams: str) -> str:
    plan = compile_deletion(delete.query, start_ns=delete.start_ns, end_ns=delete.end_ns)
    assert plan.entries is not None
    return _renamed(plan.entries, {"streams": streams, "logs": logs}).sql(dialect=DIALECT)


def _renamed(tree: exp.Expr, names: dict[str, str]) -> exp.Expr:
    """``tree`` reading the relations ``names`` maps to (the compiler's ``logs`` and
    ``streams`` as this query defines them); aliases keep the column qualifiers valid."""

    def rename(node: exp.Expr) -> exp.Expr:
        if isinstance(node, exp.Table) and not node.db and node.name in names:
            alias = node.alias or node.name
            return exp.Table(
                this=exp.to_identifier(names[node.name]),
                alias=exp.TableAlias(this=exp.to_identifier(alias)),
            )
        return node

    return tree.transform(rename)
