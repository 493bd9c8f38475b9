"""LogQL -> SQL, pure (no I/O): ``syntax`` (lexer, parser, AST, validation, printers) and
``sql`` (the compiler to sqlglot expressions over the relations ``logs`` and ``streams``).

>>> from logql_to_sql import parse, to_text
>>> to_text(parse('sum(rate({app="foo"}[5m])) by (c)'))
'sum by (c)(rate({app="foo"}[5m]))'

The service uses only the names exported here.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from logql_to_sql.errors import (
        LexError,
        LogQLError,
        NotASelectorError,
        ParseError,
        UnsupportedError,
    )
    from logql_to_sql.sql.compiler import (
        Direction,
        LogQueryPlan,
        compile_log_query,
        compile_stream_matchers,
    )
    from logql_to_sql.sql.deletion import DeletionPlan, compile_deletion
    from logql_to_sql.sql.dialect import (
        DIALECT,
        QUERY_VARIABLE,
        UDF_IP_MATCH,
        UDF_JSON_ERROR,
        UDF_JSON_FIELDS,
        UDF_JSON_PARTIAL,
        UDF_JSON_PATH,
        UDF_PARSE_VALUE,
        UDF_TEMPLATE,
    )
    from logql_to_sql.sql.frame import entry_labels
    from logql_to_sql.sql.hints import Needed
    from logql_to_sql.sql.label_keys import sanitize
    from logql_to_sql.sql.metric_query import MetricPlan, compile_metric_query
    from logql_to_sql.sql.parser_stages import json_all, logfmt
    from logql_to_sql.sql.range_aggregation import Grid
    from logql_to_sql.syntax import ast
    from logql_to_sql.syntax.ast import Expr, LogQuery
    from logql_to_sql.syntax.labels import parse_labels
    from logql_to_sql.syntax.parser import parse_expr
    from logql_to_sql.syntax.printer import pretty, to_text
    from logql_to_sql.syntax.validate import validate

# Names are imported on first use (PEP 562): a command that needs only the label parser
# or the errors (``svc backfill``) does not pay for the compiler and sqlglot at start.
_EXPORTS = {
    "LexError": "logql_to_sql.errors",
    "LogQLError": "logql_to_sql.errors",
    "NotASelectorError": "logql_to_sql.errors",
    "ParseError": "logql_to_sql.errors",
    "UnsupportedError": "logql_to_sql.errors",
    "Direction": "logql_to_sql.sql.compiler",
    "LogQueryPlan": "logql_to_sql.sql.compiler",
    "compile_log_query": "logql_to_sql.sql.compiler",
    "compile_stream_matchers": "logql_to_sql.sql.compiler",
    "DeletionPlan": "logql_to_sql.sql.deletion",
    "compile_deletion": "logql_to_sql.sql.deletion",
    "DIALECT": "logql_to_sql.sql.dialect",
    "QUERY_VARIABLE": "logql_to_sql.sql.dialect",
    "UDF_IP_MATCH": "logql_to_sql.sql.dialect",
    "UDF_JSON_ERROR": "logql_to_sql.sql.dialect",
    "UDF_JSON_FIELDS": "logql_to_sql.sql.dialect",
    "UDF_JSON_PARTIAL": "logql_to_sql.sql.dialect",
    "UDF_JSON_PATH": "logql_to_sql.sql.dialect",
    "UDF_PARSE_VALUE": "logql_to_sql.sql.dialect",
    "UDF_TEMPLATE": "logql_to_sql.sql.dialect",
    "entry_labels": "logql_to_sql.sql.frame",
    "Needed": "logql_to_sql.sql.hints",
    "MetricPlan": "logql_to_sql.sql.metric_query",
    "compile_metric_query": "logql_to_sql.sql.metric_query",
    "json_all": "logql_to_sql.sql.parser_stages",
    "logfmt": "logql_to_sql.sql.parser_stages",
    "sanitize": "logql_to_sql.sql.label_keys",
    "Grid": "logql_to_sql.sql.range_aggregation",
    "ast": "logql_to_sql.syntax.ast",
    "Expr": "logql_to_sql.syntax.ast",
    "LogQuery": "logql_to_sql.syntax.ast",
    "parse_labels": "logql_to_sql.syntax.labels",
    "parse_expr": "logql_to_sql.syntax.parser",
    "pretty": "logql_to_sql.syntax.printer",
    "to_text": "logql_to_sql.syntax.printer",
    "validate": "logql_to_sql.syntax.validate",
}

__all__ = [
    "DIALECT",
    "QUERY_VARIABLE",
    "UDF_IP_MATCH",
    "UDF_JSON_ERROR",
    "UDF_JSON_FIELDS",
    "UDF_JSON_PARTIAL",
    "UDF_JSON_PATH",
    "UDF_PARSE_VALUE",
    "UDF_TEMPLATE",
    "DeletionPlan",
    "Direction",
    "Expr",
    "Grid",
    "LexError",
    "LogQLError",
    "LogQuery",
    "LogQueryPlan",
    "MetricPlan",
    "Needed",
    "NotASelectorError",
    "ParseError",
    "UnsupportedError",
    "ast",
    "compile_deletion",
    "compile_log_query",
    "compile_metric_query",
    "compile_stream_matchers",
    "entry_labels",
    "format_query",
    "is_log_query",
    "json_all",
    "logfmt",
    "parse",
    "parse_expr",
    "parse_labels",
    "pretty",
    "sanitize",
    "to_text",
    "validate",
]


def __getattr__(name: str) -> Any:
    """An exported name, imported now (``ast`` is a module, the others its members)."""
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    imported = importlib.import_module(module)
    value = imported if name == "ast" else getattr(imported, name)
    globals()[name] = value
    return value


def parse(text: str) -> Expr:
    """Parse and validate a LogQL query; raise a :class:`ParseError` on any problem."""
    from logql_to_sql.syntax.parser import parse_expr
    from logql_to_sql.syntax.validate import validate

    expr = parse_expr(text)
    validate(expr)
    return expr


def format_query(query: str | Expr) -> str:
    """The pretty form ``P`` (what ``GET /format_query`` returns); parses text first.

    Text is parsed as Loki's ``format_query`` does: without building the pipeline, so a
    stage error (a broken ``line_format`` template, say) does not stop the formatting.
    """
    from logql_to_sql.syntax.parser import parse_expr
    from logql_to_sql.syntax.printer import pretty
    from logql_to_sql.syntax.validate import validate

    if isinstance(query, str):
        expr = parse_expr(query)
        validate(expr, stages=False)
    else:
        expr = query
    return pretty(expr)


def is_log_query(expr: Expr) -> bool:
    """True for a log query (selector plus pipeline), False for metric queries."""
    from logql_to_sql.syntax.ast import LogQuery

    return isinstance(expr, LogQuery)
