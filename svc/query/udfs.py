"""Functions the compiled SQL calls that DuckDB does not have, as vectorized Arrow UDFs.

``logql_ip_match(text, pattern)``: whether an IP address found in ``text`` lies in
``pattern`` (one address, a CIDR or an ``a-b`` range), as the ``ip()`` filters scan
(LOGQL.md 5.2). ``logql_json_fields(line, query)``: ``| json``'s fields (``json_fields``).
``logql_template(template, kind, labels, line, ts, query)``: a Go template's
output or error, for ``line_format`` and ``label_format``.

``query`` is the id of the running query (:mod:`svc.query.context`): the functions work in
slices of :data:`_SLICE_ROWS` rows and check the query's deadline between them, and
renders stay within its output budgets.
"""

from __future__ import annotations

import contextlib
import ipaddress
import re
from collections.abc import Callable, Iterator
from functools import lru_cache

import duckdb
import pyarrow as pa
import pyarrow.compute as pc
from duckdb.func import FunctionNullHandling, PythonUDFType

from gocompat.template import Template, TemplateError, parse_template
from gocompat.template.limits import OutputTooLarge, render_limits
from logql_to_sql import UDF_IP_MATCH, UDF_JSON_FIELDS, UDF_JSON_PARTIAL, UDF_TEMPLATE
from svc.query.context import QueryContext, line_too_large, lookup
from svc.query.json_fields import json_fields_batch
from svc.query.template_batch import render_batch

__all__ = ["find_addresses", "ip_predicate", "register_udfs"]

Address = ipaddress.IPv4Address | ipaddress.IPv6Address

_V4_RUN = re.compile(r"[0-9.]+")
_V6_RUN = re.compile(r"[0-9a-fA-F:.]+")
_LOOKS_V4 = re.compile(r"^\d{1,3}\.")


def find_addresses(text: str) -> Iterator[Address]:
    """Every maximal run of ``text`` that parses as an IPv4 or IPv6 address."""
    for match in _V4_RUN.finditer(text):
        if _LOOKS_V4.match(match.group()):
            with contextlib.suppress(ValueError):
                yield ipaddress.IPv4Address(match.group())
    for match in _V6_RUN.finditer(text):
        if ":" in match.group():
            with contextlib.suppress(ValueError):
                yield ipaddress.IPv6Address(match.group())


@lru_cache(maxsize=256)
def ip_predicate(pattern: str) -> Callable[[Address], bool]:
    """The test an address must pass for ``ip(pattern)``."""
    if "/" in pattern:
        network = ipaddress.ip_network(pattern, strict=False)
        return lambda address: address.version == network.version and address in network
    if "-" in pattern:
        low_text, high_text = pattern.split("-", 1)
        low, high = ipaddress.ip_address(low_text), ipaddress.ip_address(high_text)
        return lambda address: address.version == low.version and low <= address <= high  # type: ignore[operator]
    single = ipaddress.ip_address(pattern)
    return lambda address: address == single


def _ip_match(texts: pa.ChunkedArray, patterns: pa.ChunkedArray) -> pa.Array:
    values = texts.to_pylist()
    pattern_list = patterns.to_pylist()
    out: list[bool | None] = []
    for text, pattern in zip(values, pattern_list, strict=True):
        if text is None or pattern is None:
            out.append(None)
            continue
        test = ip_predicate(pattern)
        out.append(any(test(address) for address in find_addresses(text)))
    return pa.array(out, pa.bool_())


_SLICE_ROWS = 128
"""Rows a Python function handles between two checks of its query's deadline."""


def _template(
    templates: pa.ChunkedArray,
    kinds: pa.ChunkedArray,
    labels: pa.ChunkedArray,
    lines: pa.ChunkedArray,
    timestamps: pa.ChunkedArray,
    query_ids: pa.ChunkedArray,
) -> pa.Array:
    text = templates[0].as_py() if len(templates) else ""
    kind = kinds[0].as_py() if len(kinds) else "line"
    try:
        template = _parsed_template(text, kind)
    except TemplateError as exc:
        errors = pa.array([str(exc)] * len(lines), pa.string())
        return pa.StructArray.from_arrays(
            [pa.nulls(len(lines), pa.string()), errors], names=["text", "error"]
        )
    context = lookup(query_ids[0].as_py() if len(query_ids) else None)
    label_rows, line_rows = labels.combine_chunks(), lines.combine_chunks()
    ts_rows = timestamps.combine_chunks()
    parts = []
    for start in range(0, len(line_rows), _SLICE_ROWS):
        end = start + _SLICE_ROWS
        parts.append(
            _render_slice(
                template, context, label_rows[start:end], line_rows[start:end], ts_rows[start:end]
            )
        )
    if not parts:
        return pa.StructArray.from_arrays(
            [pa.array([], pa.string()), pa.array([], pa.string())], names=["text", "error"]
        )
    return pa.concat_arrays(parts)


def _render_slice(
    template: Template,
    context: QueryContext | None,
    labels: pa.MapArray,
    lines: pa.StringArray,
    timestamps: pa.Int64Array,
) -> pa.StructArray:
    """One slice of a template call, within its query's deadline and output budgets."""
    if context is None:
        rendered, errors = render_batch(template, labels, lines, timestamps)
    else:
        context.check()
        try:
            with render_limits(context.render_limits()):
                rendered, errors = render_batch(template, labels, lines, timestamps)
        except OutputTooLarge as exc:
            raise context.fail(line_too_large(exc)) from None
        context.add_output(pc.sum(pc.utf8_length(rendered)).as_py() or 0)
    return pa.StructArray.from_arrays([rendered, errors], names=["text", "error"])


def _json_fields(lines: pa.ChunkedArray, query_ids: pa.ChunkedArray) -> pa.Array:
    context = lookup(query_ids[0].as_py() if len(query_ids) else None)
    rows = lines.combine_chunks()
    parts = []
    for start in range(0, len(rows), _SLICE_ROWS):
        if context is not None:
            context.check()
        parts.append(json_fields_batch(rows[start : start + _SLICE_ROWS]))
    return pa.concat_arrays(parts) if parts else json_fields_batch(rows)


@lru_cache(maxsize=256)
def _parsed_template(text: str, kind: str) -> Template:
    return parse_template(text, name=kind)


def register_udfs(connection: duckdb.DuckDBPyConnection) -> None:
    """Make the compiler's helper functions callable on ``connection`` and its cursors."""
    connection.create_function(
        UDF_IP_MATCH,
        _ip_match,
        ["VARCHAR", "VARCHAR"],
        "BOOLEAN",
        type=PythonUDFType.ARROW,
        null_handling=FunctionNullHandling.SPECIAL,
    )
    connection.create_function(
        UDF_JSON_FIELDS,
        _json_fields,
        ["VARCHAR", "VARCHAR"],
        "STRUCT(key VARCHAR, value VARCHAR)[]",
        type=PythonUDFType.ARROW,
        null_handling=FunctionNullHandling.SPECIAL,
        # Volatile to DuckDB: it then computes the fields once where the SQL does, instead
        # of inlining the call into each later use when it merges projections.
        side_effects=True,
    )
    connection.create_function(
        UDF_JSON_PARTIAL,
        _json_fields,
        ["VARCHAR", "VARCHAR"],
        "STRUCT(key VARCHAR, value VARCHAR)[]",
        type=PythonUDFType.ARROW,
        null_handling=FunctionNullHandling.SPECIAL,
    )
    connection.create_function(
        UDF_TEMPLATE,
        _template,
        ["VARCHAR", "VARCHAR", "MAP(VARCHAR, VARCHAR)", "VARCHAR", "BIGINT", "VARCHAR"],
        "STRUCT(text VARCHAR, error VARCHAR)",
        type=PythonUDFType.ARROW,
        null_handling=FunctionNullHandling.SPECIAL,
    )
