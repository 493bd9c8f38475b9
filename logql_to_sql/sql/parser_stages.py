"""Parser stages -> SQL producing the labels they extract (LOGQL.md 5.3).

Every builder returns a ``Parsed``: ``entries`` is a ``LIST(STRUCT(key, value))`` of
sanitised names in first-wins order, ``error``/``details`` what the stage sets on failure.
All work runs inside DuckDB (its JSON reader and RE2), never in Python per row.
"""

from __future__ import annotations

import re
from collections.abc import Collection
from dataclasses import dataclass

from sqlglot import exp

from gocompat.regex_syntax import capture_names
from logql_to_sql.sql.dialect import (
    UDF_JSON_ERROR,
    UDF_JSON_FIELDS,
    UDF_JSON_PARTIAL,
    UDF_JSON_PATH,
    query_id,
    sql,
)
from logql_to_sql.sql.frame import (
    JSON_ERROR_DETAILS,
    JSON_EXACT,
    JSON_LOOKUP,
    JSON_READ_ALIKE,
    LINE,
    pattern_at,
    pattern_rest,
    pattern_skip,
)
from logql_to_sql.sql.label_keys import sanitize, sanitize_sql
from logql_to_sql.sql.logfmt import logfmt_lookup, logfmt_pairs
from logql_to_sql.syntax import ast

__all__ = [
    "IS_OBJECT",
    "IS_OBJECT_SAFE",
    "JSON_SCALAR",
    "Parsed",
    "Stepped",
    "first_wins",
    "group_names",
    "json_all",
    "json_candidate_paths",
    "json_error",
    "json_error_details",
    "json_fields",
    "json_hinted",
    "json_lookup",
    "json_paths",
    "logfmt",
    "logfmt_hinted",
    "pattern",
    "pattern_names",
    "pattern_steps",
    "regexp",
    "sanitize",
    "sanitize_sql",
    "unpack_entries",
]

_NULL = "CAST(NULL AS VARCHAR)"
# DuckDB's reader is laxer than the reference's on NaN, Infinity, inf and nan as values,
# and decodes \u escapes otherwise: lines with those are left to the engine's function.
# ltrim only for the rare lines that do not start with the brace (it copies the line): a
# CASE, as DuckDB computes both sides of an OR outside a filter (#13: 34 of 234 ms).
_READ_ALIKE = (
    "CASE WHEN starts_with(line, '{') THEN true "
    "ELSE starts_with(ltrim(line, ' \t\n\r'), '{') END AND NOT contains(line, '\\u')"
)
_NAN_OR_INF = "regexp_matches(line, '[:,\\[][ \\t\\n\\r]*[-+]?(?i:nan|inf)')"
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
    steps: tuple[dict[str, exp.Expr], ...] = ()
    """Columns to compute first, one frame each (later ones may read earlier ones); the
    other fields may read them."""


def first_wins(entries: exp.Expr) -> exp.Expr:
    """Drop empty names and every later duplicate of a name."""
    return sql(
        "list_filter(:e, (x, i) -> x.key <> '' AND "
        "list_position(list_transform(:e, y -> y.key), x.key) = i)",
        e=entries,
    )


def _read_alike(valid: exp.Expr | None = None) -> exp.Expr:
    """Whether DuckDB reads column ``line`` as the reference's library does: a valid JSON
    object without the forms where they differ. With ``valid`` (a cheaper test of DuckDB's
    reading, for the key lookups of grouped metrics) NaN and Infinity values are not
    looked for: the reference's lookups stop at the last key they need and do not see
    those either, when they come after it (LOGQL.md 13.10)."""
    if valid is None:
        return sql("json_valid(line) AND " + _READ_ALIKE + " AND NOT " + _NAN_OR_INF)
    return sql(":v AND " + _READ_ALIKE, v=valid)


def json_error_details(valid: exp.Expr | None = None) -> exp.Expr:
    """``| json``'s error details for column ``line`` (NULL when it reads without error),
    as the reference's JSON library words them. Lines DuckDB reads as a JSON object read
    without error there too; the others are asked of the engine's ``UDF_JSON_ERROR``.
    ``valid`` says whether DuckDB reads the line (default: ``json_valid``)."""
    return sql(
        "CASE WHEN :alike THEN NULL ELSE :udf END",
        alike=_read_alike(valid),
        udf=exp.Anonymous(this=UDF_JSON_ERROR, expressions=[exp.column("line"), query_id()]),
    )


def json_error(details: exp.Expr) -> exp.Expr:
    """``JSONParserErr`` when ``details`` (from ``json_error_details``) is set."""
    return sql("CASE WHEN :d IS NOT NULL THEN 'JSONParserErr' END", d=details)


def json_all() -> Parsed:
    """``| json``: every scalar field, nested objects flattened with ``_``, by the engine's
    ``UDF_JSON_FIELDS`` (DuckDB's JSON functions lose number text and duplicate keys)."""
    entries = json_fields()
    return Parsed(
        entries=entries,
        error=json_error(exp.column(JSON_ERROR_DETAILS)),
        details=exp.column(JSON_ERROR_DETAILS),
        steps=({JSON_ERROR_DETAILS: json_error_details()},),
    )


def json_fields(*, partial: bool = False) -> exp.Expr:
    """The line's fields as ``| json`` reads them (``UDF_JSON_FIELDS``): flattened, in line
    order, and for a malformed line those before the syntax error. ``partial``: called for
    malformed lines only (``UDF_JSON_PARTIAL``)."""
    udf = UDF_JSON_PARTIAL if partial else UDF_JSON_FIELDS
    return exp.Anonymous(this=udf, expressions=[exp.column(LINE), query_id()])


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
        path = json_path(extraction.expression)
        value = sql(
            "CASE WHEN NOT json_valid(line) THEN coalesce(:exact, '') "
            "WHEN json_type(:j) = 'VARCHAR' THEN :j ->> '$' WHEN :j IS NULL OR "
            "json_type(:j) = 'NULL' THEN '' WHEN json_type(:j) = 'BOOLEAN' "
            "OR (json_type(:j) IN ('BIGINT', 'UBIGINT') AND CAST(:j AS VARCHAR) <> '0') "
            "THEN CAST(:j AS VARCHAR) ELSE coalesce(:exact, '') END",
            j=sql("json_extract(CASE WHEN json_valid(line) THEN line ELSE '{}' END, :p)", p=path),
            # Malformed lines (values before the error count), numbers DuckDB rewrites
            # (1e3 as 1000.0), objects and arrays: as the reference's library reads them.
            exact=exp.Anonymous(
                this=UDF_JSON_PATH,
                expressions=[exp.column("line"), exp.Literal.string(path), query_id()],
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


def logfmt(node: ast.LogfmtParser) -> Parsed:
    """``| logfmt``: key=value pairs as the reference's decoder reads them; invalid pairs
    skipped (``--strict``: the first one stops parsing and sets the error)."""
    pairs, error, details = logfmt_pairs(node)
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
    return Parsed(
        entries=pairs, error=error, details=details, skip_empty_base=bool(node.extractions)
    )


def group_names(regex: str) -> list[str]:
    """Every capture group's name in position order (``_g<i>`` for unnamed groups), as
    DuckDB's ``regexp_extract(s, re, names)`` assigns names by position."""
    return [name or f"_g{i}" for i, name in enumerate(capture_names(regex), start=1)]


def _captures(regex: str, names: list[str]) -> Parsed:
    matched = sql("regexp_extract(line, :re, :names)", re=regex, names=group_names(regex))
    items = []
    for name in names:
        value = sql(":s[:k]", s=matched.copy(), k=name)
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


@dataclass(frozen=True)
class Stepped:
    """A parse computed as successive columns: each step's columns read the line and the
    columns of earlier steps; ``values`` (per capture name, NULL when unset) read the last
    step's."""

    steps: list[dict[str, exp.Expr]]
    values: dict[str, exp.Expr]


def pattern_names(text: str) -> list[str]:
    """The capture names of a pattern in order, ``_`` included."""
    return _PATTERN_PART.findall(text)


def pattern_steps(text: str, wanted: Collection[str] | None = None) -> Stepped:
    """What ``| pattern`` captures, found with substring searches and literal-only regexes.

    The reference walks the pattern once: a leading literal must start the line (else
    nothing is captured), each capture takes the text up to the first occurrence of the
    literal after it, and once a literal is missing the capture before it takes the rest
    of the line and later captures stay unset; an empty line captures nothing. Only the
    captures up to the last one in ``wanted`` (all when None) are computed.

    Column ``pattern_rest(j)`` is the text from the ``j``-th wanted capture on (NULL once
    a literal before it was missing), ``pattern_at(j)`` where that capture's closing
    literal starts in it (0: missing). The literals between two wanted captures are
    skipped with one ``regexp_replace`` of ``^(?s:.*?)L1(?s:.*?)L2...``: leftmost-first,
    each lazy gap ends at the first occurrence of its literal after the previous one (a
    later occurrence cannot help a later literal be found), which is the reference's
    walk; the regex holds no capture group, so RE2 runs it on its DFA, over bytes. The
    chain it replaces, a ``strpos`` and a ``substr`` per literal, counted characters on
    every call (DuckDB decodes UTF-8 from the text's start without ASCII statistics,
    which Parquet does not give): 4 to 5 times the cost of the same calls on known-ASCII
    text (#13). A single literal after a wanted capture reuses that capture's position.
    """
    parts = _PATTERN_PART.split(text)
    leading, names, closing = parts[0], parts[1::2], parts[2::2]
    needed = [
        i for i, n in enumerate(names) if n != "_" and (wanted is None or sanitize(n) in wanted)
    ]
    if not needed:
        return Stepped([], {})
    steps: list[dict[str, exp.Expr]] = []
    values: dict[str, exp.Expr] = {}
    for j, i in enumerate(needed):
        previous = needed[j - 1] if j else 0
        skipped = closing[previous:i]
        if j == 0 and leading:
            skipped = [leading, *skipped]
        source = exp.column(LINE) if j == 0 else exp.column(pattern_rest(j - 1))
        if not skipped:  # the first capture starts the line
            steps.append({pattern_rest(j): sql("CASE WHEN line <> '' THEN line END")})
        elif len(skipped) == 1 and j:  # right after a wanted capture: its position
            steps.append(
                {
                    pattern_rest(j): sql(
                        "CASE WHEN :p > 0 THEN substr(:r, :p + :n) END",
                        p=exp.column(pattern_at(j - 1)),
                        r=source,
                        n=len(skipped[0]),
                    )
                }
            )
        else:
            regex = "^" + re.escape(leading) if j == 0 and leading else "^"
            regex += "".join("(?s:.*?)" + re.escape(literal) for literal in closing[previous:i])
            skip = pattern_skip(j)
            steps.append({skip: sql("regexp_replace(:r, :re, '')", r=source, re=regex)})
            # A match takes at least one literal's bytes: unchanged text means no match.
            steps.append(
                {
                    pattern_rest(j): sql(
                        "CASE WHEN strlen(:x) < strlen(:r) THEN :x END",
                        x=exp.column(skip),
                        r=source.copy(),
                    )
                }
            )
        rest = exp.column(pattern_rest(j))
        if not closing[i]:  # the final capture takes the rest
            values[names[i]] = rest
            break
        steps.append({pattern_at(j): sql("strpos(:r, :l)", r=rest.copy(), l=closing[i])})
        values[names[i]] = sql(
            "CASE WHEN :p = 0 THEN :r ELSE left(:r, :p - 1) END",
            p=exp.column(pattern_at(j)),
            r=rest,
        )
    return Stepped(steps, values)


def pattern(node: ast.PatternParser) -> Parsed:
    """``| pattern "<ip> - <_> <status>"``: captures by literal delimiters."""
    stepped = pattern_steps(node.pattern)
    items = [
        sql("{'key': :k, 'value': :v}", k=sanitize(name), v=value)
        for name, value in stepped.values.items()
    ]
    entries = sql(
        "list_filter(:items, x -> x.value IS NOT NULL)", items=exp.Array(expressions=items)
    )
    return Parsed(entries=entries, error=sql(_NULL), details=sql(_NULL), steps=tuple(stepped.steps))


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


JSON_SCALAR = (
    "CASE WHEN json_type(:v) = 'VARCHAR' THEN :v ->> '$' "
    "WHEN json_type(:v) IN ('BIGINT', 'UBIGINT', 'HUGEINT', 'DOUBLE', 'BOOLEAN') "
    "THEN CAST(:v AS VARCHAR) END"
)
"""A JSON value's text as a label, when it is a scalar (numbers as DuckDB writes them)."""


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


def json_lookup(keys: tuple[str, ...]) -> tuple[list[dict[str, exp.Expr]], dict[str, exp.Expr]]:
    """``| json`` giving only ``keys`` (sanitised names): columns to compute first (one
    frame per dict: ``hj`` the candidate paths' JSON values, ``jr``
    whether DuckDB reads the line alike, ``jd`` the error details, ``jx`` the engine's
    exact fields where needed), then each key's value over them.

    DuckDB reads the values by path; the engine's ``UDF_JSON_FIELDS`` reads the lines it
    cannot (malformed ones keep the fields before their error) and those where a value's
    text would change (DuckDB rewrites the numbers it reads as doubles: ``1e3``,
    ``1.50``, and ``-0``).
    """
    paths: list[str] = []
    values: dict[str, exp.Expr] = {}
    exact: list[exp.Expr] = [sql("NOT :r", r=exp.column(JSON_READ_ALIKE))]
    for key in keys:
        candidates = []
        for path in json_candidate_paths(key):
            paths.append(path)
            # The value's JSON text as DuckDB gives it tells its type by its first
            # character (no json_type per value): a string is unescaped, objects, arrays
            # and null are no scalar, the rest (numbers, booleans) is the text itself.
            text = sql(
                "CAST(list_extract(:l, :i) AS VARCHAR)", l=exp.column(JSON_LOOKUP), i=len(paths)
            )
            candidates.append(
                sql(
                    "CASE left(:s, 1) WHEN '\"' THEN :s ->> '$' WHEN '{' THEN NULL "
                    "WHEN '[' THEN NULL WHEN 'n' THEN NULL ELSE :s END",
                    s=text,
                )
            )
            # Numbers DuckDB read as doubles are written anew (1.50 as 1.5, 1e3 as
            # 1000.0), and -0 as 0: those are read exactly. One small regex over the
            # value's text costs less than testing its type and characters one by one.
            exact.append(
                sql(
                    "coalesce(regexp_matches(:s, :re), false)",
                    s=text.copy(),
                    re='^(?:-?[0-9][^"]*[.eE]|0$)',
                )
            )
        values[key] = sql(
            "CASE WHEN :x IS NOT NULL THEN list_filter(:x, x -> x.key = :k)[1].value ELSE :c END",
            x=exp.column(JSON_EXACT),
            k=key,
            c=candidates[0]
            if len(candidates) == 1
            else exp.Coalesce(this=candidates[0], expressions=candidates[1:]),
        )
    # One parse: a malformed line makes the extraction fail (NULL).
    lookup = sql("TRY(json_extract(line, :p))", p=paths or ["$"])
    # Volatile calls here would block DuckDB's optimisations of a limited scan; these
    # lines are few, so computing the fields once per use costs little.
    fields = json_fields(partial=True)
    steps = [
        {JSON_LOOKUP: lookup},
        {
            JSON_READ_ALIKE: _read_alike(sql(":l IS NOT NULL", l=exp.column(JSON_LOOKUP))),
        },
        {
            JSON_ERROR_DETAILS: sql(
                "CASE WHEN NOT :r THEN :udf END",
                r=exp.column(JSON_READ_ALIKE),
                udf=exp.Anonymous(
                    this=UDF_JSON_ERROR, expressions=[exp.column("line"), query_id()]
                ),
            ),
            JSON_EXACT: sql("CASE WHEN :e THEN :f END", e=exp.or_(*exact), f=fields),
        },
    ]
    return steps, values


def json_hinted(keys: tuple[str, ...]) -> Parsed:
    """``| json`` producing only ``keys`` (``json_lookup``)."""
    steps, values = json_lookup(keys)
    items = [sql("{'key': :k, 'value': :v}", k=key, v=value) for key, value in values.items()]
    entries = (
        sql("list_filter(:items, x -> x.value IS NOT NULL)", items=exp.Array(expressions=items))
        if items
        else sql(_EMPTY_ENTRIES)
    )
    return Parsed(
        entries=entries,
        error=json_error(exp.column(JSON_ERROR_DETAILS)),
        details=exp.column(JSON_ERROR_DETAILS),
        steps=tuple(steps),
    )


def logfmt_hinted(keys: tuple[str, ...], *, keep_empty: bool) -> Parsed:
    """``| logfmt`` producing only ``keys``: the first good ``key=value`` of each."""
    steps, values = logfmt_lookup(list(keys), keep_empty=keep_empty)
    items = [sql("{'key': :k, 'value': :v}", k=key, v=value) for key, value in values.items()]
    entries = (
        sql("list_filter(:items, x -> x.value IS NOT NULL)", items=exp.Array(expressions=items))
        if items
        else sql(_EMPTY_ENTRIES)
    )
    return Parsed(entries=entries, error=sql(_NULL), details=sql(_NULL), steps=tuple(steps))
