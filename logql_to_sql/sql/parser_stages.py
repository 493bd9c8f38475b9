"""Parser stages -> SQL producing the labels they extract (LOGQL.md 5.3).

Every builder returns a ``Parsed``: ``entries`` is a ``LIST(STRUCT(key, value))`` of
sanitised names in first-wins order, ``error``/``details`` what the stage sets on failure.
All work runs inside DuckDB (its JSON reader and RE2), never in Python per row.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from sqlglot import exp

from gocompat.regex_syntax import capture_names
from logql_to_sql.sql.dialect import UDF_JSON_FIELDS, UDF_JSON_PARTIAL, query_id, sql
from logql_to_sql.sql.frame import JSON_LOOKUP, JSON_PARTIAL, LINE
from logql_to_sql.syntax import ast

__all__ = [
    "IS_OBJECT",
    "IS_OBJECT_SAFE",
    "JSON_DETAILS",
    "JSON_SCALAR",
    "Hinted",
    "Parsed",
    "first_wins",
    "group_names",
    "json_all",
    "json_candidate_paths",
    "json_fields",
    "json_hinted",
    "json_partial_value",
    "json_paths",
    "logfmt",
    "logfmt_hinted",
    "logfmt_value",
    "pattern",
    "pattern_regex",
    "regexp",
    "sanitize",
    "sanitize_sql",
    "unpack_entries",
]

_NULL = "CAST(NULL AS VARCHAR)"
JSON_DETAILS = "Value looks like object, but can't find closing '}' symbol"
_EMPTY_ENTRIES = "CAST([] AS STRUCT(key VARCHAR, value VARCHAR)[])"
# json_type and json_transform raise on malformed input, even for rows a surrounding CASE
# or AND rules out; only a CASE on json_valid guards them.
# A valid JSON document is an object exactly when it starts with "{": no second parse.
IS_OBJECT = (
    "CASE WHEN NOT json_valid(line) THEN false WHEN starts_with(line, '{') THEN true "
    "ELSE starts_with(ltrim(line, ' \t\n\r'), '{') END"
)
IS_OBJECT_SAFE = "CASE WHEN " + IS_OBJECT + " THEN line ELSE '{}' END"


@dataclass(frozen=True, kw_only=True)
class Parsed:
    """What a parser stage extracts from ``line`` and the error it may set."""

    entries: exp.Expr
    error: exp.Expr
    details: exp.Expr
    skip_empty_base: bool = False
    """Drop empty values named like a stream or metadata label (listed logfmt keys)."""


def sanitize(name: str) -> str:
    """A label name as the parsers sanitise keys (``a-b`` -> ``a_b``, ``9x`` -> ``_9x``)."""
    name = re.sub(r"[^A-Za-z0-9_]", "_", name.strip())
    return "_" + name if name[:1].isdigit() else name


def sanitize_sql(key: exp.Expr) -> exp.Expr:
    """``sanitize`` as SQL over a key expression."""
    cleaned = sql("regexp_replace(trim(:k), '[^A-Za-z0-9_]', '_', 'g')", k=key)
    return sql("CASE WHEN regexp_matches(:c, '^[0-9]') THEN '_' || :c ELSE :c END", c=cleaned)


def first_wins(entries: exp.Expr) -> exp.Expr:
    """Drop empty names and every later duplicate of a name."""
    return sql(
        "list_filter(:e, (x, i) -> x.key <> '' AND "
        "list_position(list_transform(:e, y -> y.key), x.key) = i)",
        e=entries,
    )


def json_all() -> Parsed:
    """``| json``: every scalar field, nested objects flattened with ``_``, by the engine's
    ``UDF_JSON_FIELDS`` (DuckDB's JSON functions lose number text and duplicate keys)."""
    valid = sql(IS_OBJECT)
    entries = json_fields()
    return Parsed(
        entries=entries,
        error=sql("CASE WHEN NOT :valid THEN 'JSONParserErr' END", valid=valid),
        details=sql("CASE WHEN NOT :valid THEN :d END", valid=valid.copy(), d=JSON_DETAILS),
    )


def json_fields(*, partial: bool = False) -> exp.Expr:
    """The line's fields as ``| json`` reads them (``UDF_JSON_FIELDS``): flattened, in line
    order, and for a malformed line those before the syntax error. ``partial``: called for
    malformed lines only (``UDF_JSON_PARTIAL``)."""
    udf = UDF_JSON_PARTIAL if partial else UDF_JSON_FIELDS
    return exp.Anonymous(this=udf, expressions=[exp.column(LINE), query_id()])


def json_partial_value(key: str) -> exp.Expr:
    """The first value of field ``key`` in ``JSON_PARTIAL`` (the fields of a malformed
    line): what ``| json`` reads there when paths find nothing."""
    return sql(
        "list_extract(list_filter(:fields, x -> x.key = :k), 1).value",
        fields=exp.column(JSON_PARTIAL),
        k=key,
    )


_PATH_PART = re.compile(r'\.?([A-Za-z_][A-Za-z0-9_]*)|\[(\d+)\]|\["((?:[^"\\]|\\.)*)"\]')


def json_path(expression: str) -> str:
    """A ``| json x="a.b[0]"`` expression as a DuckDB JSON path (``$."a"."b"[0]``)."""
    path = "$"
    for match in _PATH_PART.finditer(expression):
        key, index, quoted = match.groups()
        if index is not None:
            path += f"[{index}]"
        else:
            name = key if key is not None else re.sub(r"\\(.)", r"\1", quoted)
            path += '."' + name.replace("\\", "\\\\").replace('"', '\\"') + '"'
    return path


def json_paths(extractions: tuple[ast.LabelExtraction, ...]) -> Parsed:
    """``| json a="path", b``: only these labels; a missing path gives ``""``."""
    items = []
    for extraction in extractions:
        value = sql(
            "CASE WHEN json_type(:j) = 'VARCHAR' THEN :j ->> '$' WHEN :j IS NULL "
            "OR json_type(:j) = 'NULL' THEN '' ELSE CAST(:j AS VARCHAR) END",
            j=sql(
                "json_extract(CASE WHEN json_valid(line) THEN line ELSE '{}' END, :p)",
                p=json_path(extraction.expression),
            ),
        )
        items.append(sql("{'key': :k, 'value': :v}", k=extraction.name, v=value))
    good_start = sql("left(line, 1) IN ('{', '[', '\"')")
    entries = sql(
        "CASE WHEN line = '' OR NOT :ok THEN " + _EMPTY_ENTRIES + " ELSE :items END",
        ok=good_start,
        items=exp.Array(expressions=items),
    )
    bad = sql("line <> '' AND NOT :ok", ok=good_start.copy())
    return Parsed(
        entries=entries,
        error=sql("CASE WHEN :bad THEN 'JSONParserErr' END", bad=bad),
        details=sql(_NULL),
    )


_LOGFMT_TOKEN = r'(?:[^\x00-\x20"]+|"(?:[^"\\]|\\.)*"?)+'
_LOGFMT_PAIR = r'([^="\x00-\x20]+)(=("(?:[^"\\]|\\.)*"|[^="\x00-\x20]*))?'


def logfmt_value(raw: exp.Expr) -> exp.Expr:
    """A logfmt value as text: a quoted one unescaped. Its escapes are JSON's (``\\uXXXX``
    included), which DuckDB decodes; a quoted value JSON rejects (a raw control character,
    ``\\'``) has ``\\"``, ``\\n``, ``\\t`` and ``\\\\`` replaced instead."""
    return sql(
        "CASE WHEN starts_with(:r, '\"') THEN coalesce(TRY(json_extract_string(:r, '$')), "
        "replace(replace(replace(replace("
        "substr(:r, 2, length(:r) - 2), '\\\"', '\"'), '\\n', chr(10)), '\\t', chr(9)), "
        "'\\\\', '\\')) ELSE :r END",
        r=raw,
    )


def logfmt(node: ast.LogfmtParser) -> Parsed:
    """``| logfmt``: key=value pairs; invalid pairs skipped (``--strict``: the first one
    stops parsing and sets the error)."""
    tokens = sql("regexp_extract_all(line, :re)", re=_LOGFMT_TOKEN)
    bad = sql(
        "coalesce(list_position(list_transform(:t, t -> regexp_full_match(t, :pair)), false), 0)",
        t=tokens.copy(),
        pair=_LOGFMT_PAIR,
    )
    considered = (
        sql("CASE WHEN :bad > 0 THEN :t[1 : :bad - 1] ELSE :t END", bad=bad, t=tokens.copy())
        if node.strict
        else tokens.copy()
    )
    valid = sql(
        "list_filter(:t, t -> regexp_full_match(t, :pair))", t=considered, pair=_LOGFMT_PAIR
    )
    pairs = sql(
        "list_transform(:v, t -> {'key': :key, 'value': :value})",
        v=valid,
        key=sanitize_sql(sql("regexp_extract(t, '^[^=]*')")),
        value=logfmt_value(sql("regexp_extract(t, '^[^=]*=?(.*)$', 1)")),
    )
    if node.extractions:
        wanted = {e.expression: e.name for e in node.extractions}
        found = sql(
            "map_from_entries(list_filter(:p, (x, i) -> list_contains(:keys, x.key) AND "
            "list_position(list_transform(:p, y -> y.key), x.key) = i))",
            p=pairs,
            keys=list(wanted),
        )
        # Every listed label exists afterwards, empty when the line lacks its key.
        pairs = exp.Array(
            expressions=[
                sql("{'key': :n, 'value': coalesce(:f[:k], '')}", n=name, f=found.copy(), k=key)
                for key, name in wanted.items()
            ]
        )
    elif not node.keep_empty:
        pairs = sql("list_filter(:p, x -> x.value <> '')", p=pairs)
    if not node.strict:
        return Parsed(
            entries=pairs,
            error=sql(_NULL),
            details=sql(_NULL),
            skip_empty_base=bool(node.extractions),
        )
    offender = sql(":t[:bad]", t=tokens.copy(), bad=bad.copy())
    prefix = sql("length(regexp_extract(:o, :pair))", o=offender, pair=r"^" + _LOGFMT_PAIR)
    details = sql(
        "CASE WHEN regexp_full_match(:o, :open) THEN 'logfmt syntax error at pos ' || "
        "(length(line) + 1) || ' : unterminated quoted value' "
        "ELSE 'logfmt syntax error at pos ' || (strpos(line, :o) + :prefix) || "
        "' : unexpected ' || chr(39) || substr(:o, :prefix + 1, 1) || chr(39) END",
        o=offender.copy(),
        open=r'[^="\x00-\x20]+="(?:[^"\\]|\\.)*\\?',
        prefix=prefix,
    )
    return Parsed(
        entries=pairs,
        error=sql("CASE WHEN :bad > 0 THEN 'LogfmtParserErr' END", bad=bad.copy()),
        details=sql("CASE WHEN :bad > 0 THEN :d END", bad=bad.copy(), d=details),
        skip_empty_base=bool(node.extractions),
    )


def group_names(regex: str) -> list[str]:
    """Every capture group's name in position order (``_g<i>`` for unnamed groups), as
    DuckDB's ``regexp_extract(s, re, names)`` assigns names by position."""
    return [name or f"_g{i}" for i, name in enumerate(capture_names(regex), start=1)]


def _captures(regex: str, names: list[str], markers: dict[str, str] | None = None) -> Parsed:
    markers = markers or {}
    matched = sql("regexp_extract(line, :re, :names)", re=regex, names=group_names(regex))
    items = []
    for name in names:
        value = sql(":s[:k]", s=matched.copy(), k=name)
        if name in markers:
            value = sql(
                "CASE WHEN :s[:m] <> '' THEN :v END", s=matched.copy(), m=markers[name], v=value
            )
        items.append(sql("{'key': :k, 'value': :v}", k=sanitize(name), v=value))
    entries = sql(
        "CASE WHEN regexp_matches(line, :re) THEN list_filter(:items, x -> x.value IS NOT NULL) "
        "ELSE " + _EMPTY_ENTRIES + " END",
        re=regex,
        items=exp.Array(expressions=items),
    )
    return Parsed(entries=entries, error=sql(_NULL), details=sql(_NULL))


def regexp(node: ast.RegexpParser) -> Parsed:
    """``| regexp``: the named groups of the first match; no match sets nothing."""
    names = [n for n in capture_names(node.regex) if n]
    return _captures(node.regex, names)


_PATTERN_PART = re.compile(r"<([A-Za-z_][A-Za-z0-9_]*)>")


def pattern_regex(text: str) -> tuple[str, list[str], dict[str, str]]:
    """An RE2 regex doing what the pattern parser does, its capture names, and for each
    capture behind a literal the marker group telling whether that literal was found.

    A leading literal anchors at the start; each capture runs to the first occurrence of
    the next literal; when a literal is missing the capture before it takes the rest of
    the line and the later captures stay unset.
    """
    parts = _PATTERN_PART.split(text)
    literals, names = parts[0::2], parts[1::2]
    regex = "(?s)^" + re.escape(literals[0])
    closing = ""
    markers: dict[str, str] = {}
    marker = ""
    for index, (name, literal) in enumerate(zip(names, literals[1:], strict=True)):
        group = ".*?" if name == "_" else f"(?P<{name}>.*?)"
        if name != "_" and marker:
            markers[name] = marker
        if literal:
            marker = f"_m{index}"
            regex += f"{group}(?:(?P<{marker}>{re.escape(literal)})"
            closing += ")?"
        else:
            regex += group.replace(".*?", ".*")
    regex += ".*" + closing + "$" if closing else "$"
    return regex, [n for n in names if n != "_"], markers


def pattern(node: ast.PatternParser) -> Parsed:
    """``| pattern "<ip> - <_> <status>"``: captures by literal delimiters."""
    regex, names, markers = pattern_regex(node.pattern)
    return _captures(regex, names, markers)


def unpack_entries() -> tuple[exp.Expr, exp.Expr, Parsed]:
    """``| unpack``: (new line, has ``_entry``, labels) from a JSON object's string fields."""
    strings = sql(
        "list_transform(list_filter(map_entries(json_transform(" + IS_OBJECT_SAFE + ", "
        "'\"MAP(VARCHAR, JSON)\"')), "
        "e -> json_type(e.value) = 'VARCHAR'), e -> {'key': e.key, 'value': e.value ->> '$'})"
    )
    entry = sql("list_filter(:s, e -> e.key = '_entry')", s=strings)
    has_entry = sql("len(:e) > 0", e=entry)
    new_line = sql("CASE WHEN :has THEN :e[1].value ELSE line END", has=has_entry, e=entry.copy())
    labels = sql(
        "CASE WHEN :has THEN list_transform(list_filter(:s, e -> e.key <> '_entry'), "
        "e -> {'key': :name, 'value': e.value}) ELSE " + _EMPTY_ENTRIES + " END",
        has=has_entry.copy(),
        s=strings.copy(),
        name=sanitize_sql(exp.column("key", table="e")),
    )
    bad = sql("line <> '' AND NOT starts_with(line, '{')")
    return (
        new_line,
        has_entry.copy(),
        Parsed(
            entries=labels,
            error=sql("CASE WHEN :bad THEN 'JSONParserErr' END", bad=bad),
            details=sql(
                "CASE WHEN :bad THEN 'expecting json object(6), but it is not' END",
                bad=bad.copy(),
            ),
        ),
    )


@dataclass(frozen=True)
class Hinted:
    """A parse limited to some keys: ``lookup`` and ``partial`` are computed first (as
    ``JSON_LOOKUP`` and ``JSON_PARTIAL``)."""

    lookup: exp.Expr
    partial: exp.Expr
    parsed: Parsed


JSON_SCALAR = (
    "CASE WHEN json_type(:v) = 'VARCHAR' THEN :v ->> '$' "
    "WHEN json_type(:v) IN ('BIGINT', 'UBIGINT', 'HUGEINT', 'DOUBLE', 'BOOLEAN') "
    "THEN CAST(:v AS VARCHAR) END"
)


def json_candidate_paths(key: str, limit: int = 8) -> list[str]:
    """JSON paths whose flattened name is ``key``: ``a_b`` is ``$.a_b`` or ``$.a.b``."""
    parts = key.split("_")
    if len(parts) > 4:
        return [json_path_of([key])]
    paths = []
    for mask in range(2 ** (len(parts) - 1)):
        segments, current = [], parts[0]
        for index, part in enumerate(parts[1:]):
            if mask >> index & 1:
                segments.append(current)
                current = part
            else:
                current += "_" + part
        segments.append(current)
        if all(segments):
            paths.append(json_path_of(segments))
    return paths[:limit]


def json_path_of(segments: list[str]) -> str:
    """``$."a"."b"`` for the key segments ``a``, ``b``."""
    return "$" + "".join('."' + s.replace("\\", "\\\\").replace('"', '\\"') + '"' for s in segments)


def json_hinted(keys: tuple[str, ...]) -> Hinted:
    """``| json`` producing only ``keys``, each read by path instead of parsing every field."""
    paths: list[str] = []
    items = []
    for key in keys:
        candidates = []
        for path in json_candidate_paths(key):
            paths.append(path)
            element = sql("list_extract(:lookup, :i)", lookup=exp.column(JSON_LOOKUP), i=len(paths))
            candidates.append(sql(JSON_SCALAR, v=element))
        value = exp.Coalesce(
            this=candidates[0], expressions=[*candidates[1:], json_partial_value(key)]
        )
        items.append(sql("{'key': :k, 'value': :v}", k=key, v=value))
    valid = sql(IS_OBJECT)
    # A malformed line fails the extraction (NULL: no second parse to validate it first);
    # its fields before the syntax error come from the engine's reader, for it alone.
    lookup = sql("TRY(json_extract(line, :p))", p=paths) if paths else sql("CAST([] AS JSON[])")
    partial = sql(
        "CASE WHEN NOT json_valid(line) THEN :fields END", fields=json_fields(partial=True)
    )
    entries = (
        sql("list_filter(:items, x -> x.value IS NOT NULL)", items=exp.Array(expressions=items))
        if items
        else sql(_EMPTY_ENTRIES)
    )
    return Hinted(
        lookup,
        partial,
        Parsed(
            entries=entries,
            error=sql("CASE WHEN NOT :valid THEN 'JSONParserErr' END", valid=valid),
            details=sql("CASE WHEN NOT :valid THEN :d END", valid=valid.copy(), d=JSON_DETAILS),
        ),
    )


def logfmt_hinted(keys: tuple[str, ...], *, keep_empty: bool) -> Parsed:
    """``| logfmt`` producing only ``keys``: the first ``key=value`` of each, by regex."""
    items = []
    for key in keys:
        pair = (
            r"(?:^|[\x00-\x20])"
            + re.escape(key)
            + r'(=("(?:[^"\\]|\\.)*"|[^\x00-\x20"=]*))?(?:[\x00-\x20]|$)'
        )
        value = logfmt_value(sql("regexp_extract(line, :re, 2)", re=pair))
        items.append(
            sql(
                "{'key': :k, 'value': CASE WHEN regexp_matches(line, :re) THEN :v END}",
                k=key,
                re=pair,
                v=value,
            )
        )
    keep = "x.value IS NOT NULL" if keep_empty else "x.value IS NOT NULL AND x.value <> ''"
    entries = (
        sql("list_filter(:items, x -> " + keep + ")", items=exp.Array(expressions=items))
        if items
        else sql(_EMPTY_ENTRIES)
    )
    return Parsed(entries=entries, error=sql(_NULL), details=sql(_NULL))
