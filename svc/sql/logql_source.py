"""``logql('<query>')``: the entries of a LogQL log query as rows of an SQL query.

Each call is replaced by a derived table holding the query compiled for the request's
tenants and range; the compiled SQL reads the engine's own ``logs`` and ``streams``
relations, so the client never names a file. Rows have the columns of the ``logs`` view:
``ts`` (TIMESTAMP_NS), ``ts_ns``, ``stream_id``, ``labels`` (the entry's labels as LogQL
gives them: stream labels, structured metadata and parsed labels), ``line``, ``metadata``
(as stored), and ``tenant`` when several tenants are queried. Like any derived table's,
the rows come in no particular order (``ORDER BY ts`` orders them): an aggregation over
them then sorts nothing.
"""

from __future__ import annotations

from sqlglot import exp

import logql_to_sql
from logql_to_sql import Direction, LogQLError, Needed, compile_log_query, entry_labels
from svc.errors import BadRequestError
from svc.sql.views import LABELS_TABLE

__all__ = ["logql_rows", "timestamp_ns"]


def timestamp_ns(column: exp.Expr) -> exp.Expr:
    """``column`` (Unix ns) as a TIMESTAMP_NS."""
    return exp.Anonymous(this="make_timestamp_ns", expressions=[column])


def logql_rows(
    text: str,
    *,
    start_ns: int,
    end_ns: int,
    multi: bool,
    wanted: Needed = None,
    unique_entries: bool = False,
) -> exp.Select:
    """The rows of the log query ``text`` over ``[start_ns, end_ns)``; 400 when ``text``
    is not a valid log query. ``wanted``: the only label keys the query reads (None: the
    whole map); its ``labels`` then hold at least those. ``unique_entries``: the data read
    holds no entry twice (``svc.query.unique_entries``), so none is to be dropped."""
    try:
        query = logql_to_sql.parse(text)
    except LogQLError as exc:
        raise BadRequestError(f"logql(): {exc}") from exc
    if not logql_to_sql.is_log_query(query):
        raise BadRequestError(
            "logql() takes a log query (a selector and a pipeline), not a metric query"
        )
    try:
        plan = compile_log_query(
            query,  # type: ignore[arg-type]
            start_ns=start_ns,
            end_ns=end_ns,
            limit=None,
            direction=Direction.FORWARD,
            wanted=wanted,
            ordered=False,
            unique_entries=unique_entries,
        )
    except LogQLError as exc:
        raise BadRequestError(f"logql(): {exc}") from exc
    rows = plan.select.subquery("q", copy=False)
    labels: exp.Expr
    if plan.labels_final:
        labels = exp.column("labels", table="q")
    else:
        labels = entry_labels(exp.column("labels", table="s"), exp.column("metadata", table="q"))
    select = exp.select(
        timestamp_ns(exp.column("ts", table="q")).as_("ts"),
        exp.column("ts", table="q").as_("ts_ns"),
        exp.column("stream_id", table="q"),
        labels.as_("labels"),
        exp.column("line", table="q"),
        exp.column("metadata", table="q"),
    ).from_(rows, copy=False)
    if not plan.labels_final:
        select = select.join(
            exp.table_("streams", alias="s"),
            on=exp.column("stream_id", table="q").eq(exp.column("stream_id", table="s")),
            copy=False,
        )
    if multi:
        select = select.select(exp.column("tenant", table="t"), copy=False).join(
            exp.table_(LABELS_TABLE, alias="t"),
            on=exp.column("stream_id", table="q").eq(exp.column("stream_id", table="t")),
            join_type="left",
            copy=False,
        )
    return select
