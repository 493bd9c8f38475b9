"""Detected fields: what structured metadata and json/logfmt parsing find in recent lines.

The newest ``line_limit`` entries of the query (a selector, maybe with a pipeline) are read
with one DuckDB query (``compile_log_query``); a pipeline's rows carry their final labels,
and a second query fetches the stored metadata of just those rows so metadata and parsed
labels can be told apart. Each line is then parsed in DuckDB with the ``| json`` parser,
or, when it is not a JSON object, with ``| logfmt`` (``logql_to_sql.sql.parser_stages``). Python
only walks the at most ``line_limit`` results: types, distinct values, parsers and the
JSON path of each field. Stream labels are never fields; a parsed name equal to a stream
label becomes ``<name>_extracted``. Cardinality is exact (the reference estimates it).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any

import duckdb
import pyarrow as pa
from sqlglot import exp

from gocompat.durations import parse_go_duration, parse_humanize_bytes
from logql_to_sql import DIALECT, Direction, ast, compile_log_query, json_all, logfmt, sanitize
from svc.model import Labels, label_key
from svc.query.engine import QueryEngine, ScanStats
from svc.query.udfs import register_udfs

__all__ = [
    "DetectedField",
    "Entry",
    "detect_fields",
    "determine_type",
    "field_values",
    "recent_entries",
]

_ERROR_LABELS = frozenset({"__error__", "__error_details__"})
_GO_INT = re.compile(r"[+-]?[0-9]+")
_GO_FLOAT = re.compile(
    r"[+-]?(?:(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]+)?"
    r"|0[xX](?:[0-9a-fA-F]+(?:\.[0-9a-fA-F]*)?|\.[0-9a-fA-F]+)[pP][+-]?[0-9]+"
    r"|(?i:inf|infinity|nan))"
)
_GO_BOOLS = frozenset(
    {"1", "t", "T", "TRUE", "true", "True", "0", "f", "F", "FALSE", "false", "False"}
)


@dataclass
class Entry:
    """One scanned entry: its stream, line, metadata and parsed fields."""

    stream: Labels
    ts: int
    line: str
    metadata: dict[str, str] = field(default_factory=dict)
    query_parsed: dict[str, str] = field(default_factory=dict)
    parser: str = ""
    line_fields: list[tuple[str, str]] = field(default_factory=list)
    json_paths: dict[str, list[str]] = field(default_factory=dict)

    def parsed(self) -> dict[str, list[str]]:
        """Every parsed value by field name: the query's pipeline first, then the line's."""
        found = {name: [value] for name, value in self.query_parsed.items()}
        for name, value in self.line_fields:
            found.setdefault(name, []).append(value)
        return found


@dataclass
class DetectedField:
    """A field seen in the scanned lines."""

    label: str
    type: str = "string"
    values: set[str] = field(default_factory=set)
    parsers: list[str] = field(default_factory=list)
    json_path: list[str] | None = None

    def record(self) -> dict[str, Any]:
        """The wire record (``parsers`` null for metadata-only fields, as the reference)."""
        out: dict[str, Any] = {
            "label": self.label,
            "type": self.type,
            "cardinality": len(self.values),
            "parsers": self.parsers or None,
        }
        if self.json_path:
            out["jsonPath"] = self.json_path
        return out


def determine_type(value: str) -> str:
    """The first of int, float, boolean, duration, bytes that parses ``value`` as Go does."""
    if _GO_INT.fullmatch(value) and -(2**63) <= int(value) < 2**63:
        return "int"
    if _GO_FLOAT.fullmatch(value) and _finite_or_named(value):
        return "float"
    if value in _GO_BOOLS:
        return "boolean"
    for kind, parse in (("duration", parse_go_duration), ("bytes", parse_humanize_bytes)):
        try:
            parse(value)
        except ValueError:
            continue
        return kind
    return "string"


def _finite_or_named(value: str) -> bool:
    """False for literals out of float64 range (Go's ParseFloat fails on them)."""
    lowered = value.lower()
    if lowered.lstrip("+-") in ("inf", "infinity", "nan"):
        return True
    number = float.fromhex(value) if "x" in lowered else float(value)
    return number not in (float("inf"), float("-inf"))


def detect_fields(entries: list[Entry], limit: int) -> list[DetectedField]:
    """Fields in the reference's way: at most ``limit`` names, in order of discovery.

    A field's type is re-detected from the first value of each entry holding it, so the
    last entry decides; the result is sorted by name.
    """
    fields: dict[str, DetectedField] = {}

    def slot(name: str) -> DetectedField | None:
        found = fields.get(name)
        if found is None and len(fields) < limit:
            found = fields[name] = DetectedField(name)
        return found

    for entry in entries:
        for name, value in entry.metadata.items():
            detected = slot(name)
            if detected is not None:
                detected.type = determine_type(value)
                detected.values.add(value)
        for name, values in entry.parsed().items():
            detected = slot(name)
            if detected is None:
                continue
            if entry.parser and entry.parser not in detected.parsers:
                detected.parsers.append(entry.parser)
            detected.type = determine_type(values[0])
            detected.values.update(values)
            if name in entry.json_paths:
                detected.json_path = entry.json_paths[name]
    return sorted(fields.values(), key=lambda f: f.label)


def field_values(entries: list[Entry], name: str, limit: int) -> list[str]:
    """Distinct values of one field, newest entries first, at most ``limit``, sorted."""
    values: dict[str, None] = {}
    for entry in entries:
        found = [entry.metadata[name]] if name in entry.metadata else []
        found += entry.parsed().get(name, [])
        for value in found:
            if len(values) >= limit:
                return sorted(values)
            values[value] = None
    return sorted(values)


def recent_entries(
    engine: QueryEngine,
    tenants: tuple[str, ...],
    query: ast.LogQuery,
    start_ns: int,
    end_ns: int,
    line_limit: int,
) -> list[Entry]:
    """The newest ``line_limit`` entries with fields, grouped by stream as results are."""
    entries: list[Entry] = []
    for tenant in tenants:
        entries += _tenant_entries(engine, tenant, query, start_ns, end_ns, line_limit)
    entries.sort(key=lambda e: e.ts, reverse=True)
    entries = entries[:line_limit]
    _parse_lines(entries)
    entries.sort(key=lambda e: (label_key(e.stream).encode(), -e.ts))
    return entries


def _tenant_entries(
    engine: QueryEngine,
    tenant: str,
    query: ast.LogQuery,
    start_ns: int,
    end_ns: int,
    line_limit: int,
) -> list[Entry]:
    plan = compile_log_query(
        query, start_ns=start_ns, end_ns=end_ns, limit=line_limit, direction=Direction.BACKWARD
    )
    rows, _, _ = engine.run_log_query(tenant, plan, start_ns, end_ns, expr=query)
    index = engine.store.index
    entries = []
    final = plan.labels_final
    stored = _stored_metadata(engine, tenant, rows) if final else {}
    data = rows.to_pydict()
    extra = data["labels" if final else "metadata"]
    for ts, stream_id, line, more in zip(
        data["ts"], data["stream_id"], data["line"], extra, strict=True
    ):
        info = index.get(tenant, stream_id)
        stream: Labels = () if info is None else info.labels
        if final:
            metadata = _renamed(stream, stored.get((stream_id, ts)))
            labels = dict(more or ())
            metadata = {k: v for k, v in metadata.items() if labels.get(k) == v}
            parsed = _query_parsed(stream, metadata, labels)
        else:
            metadata, parsed = _renamed(stream, more), {}
        entries.append(Entry(stream, ts, line, metadata, parsed))
    return entries


def _renamed(stream: Labels, metadata: list[tuple[str, str]] | None) -> dict[str, str]:
    """Metadata as results show it: a key equal to a stream label gets ``_extracted``."""
    names = {name for name, _ in stream}
    return {(f"{k}_extracted" if k in names else k): v for k, v in metadata or ()}


def _query_parsed(
    stream: Labels, metadata: dict[str, str], labels: dict[str, str]
) -> dict[str, str]:
    """Labels the query's pipeline added: neither stream labels nor metadata nor errors."""
    own = dict(stream)
    return {
        k: v
        for k, v in labels.items()
        if own.get(k) != v and k not in metadata and k not in _ERROR_LABELS
    }


def _stored_metadata(
    engine: QueryEngine, tenant: str, rows: pa.Table
) -> dict[tuple[int, int], list[tuple[str, str]]]:
    """The stored metadata of the rows a pipeline query returned, by (stream_id, ts)."""
    if rows.num_rows == 0:
        return {}
    times = rows["ts"].to_pylist()
    ids = sorted(set(rows["stream_id"].to_pylist()))
    low, high = min(times), max(times)
    select = (
        exp.select("stream_id", "ts", "metadata")
        .from_("logs")
        .where(
            exp.and_(
                exp.column("stream_id").isin(*(exp.Literal.number(i) for i in ids)),
                exp.column("ts").between(exp.Literal.number(low), exp.Literal.number(high)),
            )
        )
    )
    view = engine.store.view(tenant, low, high + 1)
    found = engine.execute(select, view, ScanStats()).to_pydict()
    out: dict[tuple[int, int], list[tuple[str, str]]] = {}
    for stream_id, ts, metadata in zip(
        found["stream_id"], found["ts"], found["metadata"], strict=True
    ):
        out.setdefault((stream_id, ts), list(metadata or ()))
    return out


def _line_parsers_sql() -> str:
    """Per line: ``| json`` entries and error, and ``| logfmt`` entries (DuckDB SQL)."""
    parsed_json = json_all()
    parsed_logfmt = logfmt(ast.LogfmtParser())
    source = exp.select("*").from_("lines")
    for step in (*parsed_json.steps, *parsed_logfmt.steps):
        source = exp.select("*", *(e.as_(name) for name, e in step.items())).from_(
            source.subquery("s")
        )
    select = (
        exp.select(
            exp.column("i"),
            parsed_json.entries.as_("json_fields"),
            parsed_json.error.as_("json_error"),
            parsed_logfmt.entries.as_("logfmt_fields"),
        )
        .from_(source.subquery("parsed"))
        .order_by("i")
    )
    return select.sql(dialect=DIALECT)


def _parse_lines(entries: list[Entry]) -> None:
    """Fill each entry's ``parser``, ``line_fields`` and ``json_paths``."""
    if not entries:
        return
    lines = pa.table({"i": range(len(entries)), "line": [e.line for e in entries]})
    with duckdb.connect() as connection:
        register_udfs(connection)
        connection.register("lines", lines)
        rows = connection.sql(_line_parsers_sql()).fetchall()
    for entry, (_, json_fields, json_error, logfmt_fields) in zip(entries, rows, strict=True):
        names = {name for name, _ in entry.stream}
        entry.parser = "logfmt" if json_error else "json"
        raw = logfmt_fields if json_error else json_fields
        entry.line_fields = _first_wins(raw or [], names)
        if not json_error:
            paths = _json_paths(entry.line)
            entry.json_paths = {
                (f"{k}_extracted" if k in names else k): p for k, p in paths.items()
            }


def _first_wins(pairs: list[dict[str, str]], stream_names: set[str]) -> list[tuple[str, str]]:
    seen: dict[str, str] = {}
    for pair in pairs:
        name = pair["key"]
        if name and name not in seen:
            seen[name] = pair["value"]
    return [(f"{k}_extracted" if k in stream_names else k, v) for k, v in seen.items()]


def _json_paths(line: str) -> dict[str, list[str]]:
    """Sanitised flattened name -> path segments, for every member of a JSON object line."""
    try:
        document = json.loads(line)
    except ValueError:
        return {}
    paths: dict[str, list[str]] = {}
    if isinstance(document, dict):
        _walk(document, [], paths)
    return paths


def _walk(node: dict[str, Any], path: list[str], paths: dict[str, list[str]]) -> None:
    for key, value in node.items():
        segments = [*path, str(key)]
        if isinstance(value, dict):
            _walk(value, segments, paths)
        else:
            paths.setdefault(sanitize("_".join(segments)), segments)
