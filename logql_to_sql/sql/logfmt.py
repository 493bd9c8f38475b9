"""``| logfmt`` -> SQL, token for token as the reference's decoder reads a line.

The decoder skips bytes <= space, then reads one token: a key (bytes up to ``=``, ``"``
or a byte <= space) and, after ``=``, a bare value (up to a byte <= space; ``=`` or ``"``
inside it is an error) or a quoted one (up to the first unescaped ``"``; the next token
may follow at once; no closing quote: an error that ends the line). An error token is
skipped up to the next byte <= space (``--strict`` stops there). ``TOKEN`` is that
grammar as one RE2 pattern whose alternatives, tried in order, are the token kinds;
``regexp_extract_all`` then cuts a line into the decoder's tokens in one pass.

Quoted values are unescaped as the decoder does (``\\" \\\\ \\/ \\' \\b \\f \\n \\r \\t``,
``\\uXXXX`` with surrogate pairs; any other escape makes the pair an error).

Looking up a few keys (``logfmt_lookup``) first looks at the key's first ``key=``: at a
token start before the line's first ``"``, where tokens are plain space-separated words,
it decides; the other lines are tokenized.
"""

from __future__ import annotations

import re

from sqlglot import exp

from logql_to_sql.sql.dialect import sql
from logql_to_sql.sql.frame import (
    LOGFMT_QUOTE,
    LOGFMT_TOKENS,
    logfmt_after,
    logfmt_position,
    logfmt_quick,
)
from logql_to_sql.sql.label_keys import sanitize_sql
from logql_to_sql.syntax import ast

__all__ = ["TOKEN", "logfmt_lookup", "logfmt_pairs", "unquote"]

_K = r'[^\x00-\x20="]'
_WS = r"[\x00-\x20]"
_BAD_KEY = _K + r"*\x{FFFD}" + _K + "*"
TOKEN = (
    r"(?s)(?P<tok>(?P<ws>" + _WS + r"*)(?:"
    rf"(?P<xk>{_BAD_KEY})=[^\x00-\x20]*"  # a key with U+FFFD: invalid, skipped with its value
    rf'|(?P<qk>{_K}+)="(?P<qv>(?:[^"\\]|\\.)*)"'  # key="value"
    rf'|(?P<uk>{_K}+)=".*'  # key="... without its closing quote: the rest of the line
    rf'|(?P<ck>{_K}+={_K}*)(?P<cc>[="])[^\x00-\x20]*'  # key=va"lue or key=va=lue
    rf"|(?P<bk>{_K}+)=(?P<bv>{_K}*)"  # key=value, key=
    rf'|(?P<ek>{_K}*)"[^\x00-\x20]*'  # a quote inside the key
    r"|(?P<fk>)=[^\x00-\x20]*"  # no key before "="
    rf"|(?P<yk>{_BAD_KEY})"  # a bare invalid key
    rf"|(?P<kk>{_K}+)"  # a bare key
    r"))"
)
_GROUPS = ["tok", "ws", "xk", "qk", "qv", "uk", "ck", "cc", "bk", "bv", "ek", "fk", "yk", "kk"]
_VALID_QUOTED = r'(?:[^\\]|\\["\\/\'bfnrt]|\\u[0-9a-fA-F]{4})*'
_ESCAPE_PIECE = r"\\u[0-9a-fA-F]{4}(?:\\u[dD][c-fC-F][0-9a-fA-F]{2})?|\\.|[^\\]+"
_SIMPLE_ESCAPES: dict[str, exp.Expr] = {
    **{f"\\{c}": exp.Literal.string(c) for c in "\"\\/'"},
    **{
        f"\\{c}": sql("chr(:n)", n=n)
        for c, n in (("b", 8), ("f", 12), ("n", 10), ("r", 13), ("t", 9))
    },
}


def tokens(line: exp.Expr) -> exp.Expr:
    """The decoder's tokens of ``line``: ``LIST(STRUCT(tok, ws, qk, ...))`` where a group
    of another kind than the token's is NULL."""
    return sql("regexp_extract_all(:l, :re, :names)", l=line, re=TOKEN, names=_GROUPS)


def unquote(content: exp.Expr) -> exp.Expr:
    """The text of a quoted value's ``content`` (between the quotes); NULL when one of its
    escapes is invalid. Escapes are decoded piece by piece: ``\\uXXXX`` (a surrogate pair
    as one piece) by the JSON reader, a lone or broken surrogate as U+FFFD."""
    piece = exp.Case(
        ifs=[
            exp.If(this=exp.Literal.string(escape), true=text)
            for escape, text in _SIMPLE_ESCAPES.items()
        ],
        default=sql(
            "coalesce(TRY(json_extract_string('\"' || p || '\"', '$')), chr(65533) || "
            "coalesce(TRY(json_extract_string('\"' || substr(p, 7) || '\"', '$')), chr(65533)))"
        ),
    )
    piece.set("this", exp.column("p"))
    decoded = sql("CASE WHEN NOT starts_with(p, '\\') THEN p ELSE :piece END", piece=piece)
    return sql(
        "CASE WHEN NOT contains(:c, '\\') THEN :c WHEN regexp_full_match(:c, :valid) THEN "
        "array_to_string(list_transform(regexp_extract_all(:c, :pieces), p -> :d), '') END",
        c=content,
        valid=_VALID_QUOTED,
        pieces=_ESCAPE_PIECE,
        d=decoded,
    )


def _pairs(toks: exp.Expr) -> exp.Expr:
    """``{key, value}`` per token: key NULL for an error token, value NULL for a quoted
    value with an invalid escape (also an error); keys as written."""
    return sql(
        "list_transform(:t, t -> {'key': coalesce(t.qk, t.bk, t.kk), 'value': "
        "CASE WHEN t.qk IS NOT NULL THEN :unquoted ELSE coalesce(t.bv, '') END})",
        t=toks,
        unquoted=unquote(sql("t.qv")),
    )


def _usable(pairs: exp.Expr, keep_empty: bool) -> exp.Expr:
    """The good pairs, keys sanitised (an empty result is skipped), U+FFFD in values as a
    space (the reference's replacement of invalid UTF-8), empty values dropped unless
    ``keep_empty``."""
    cleaned = sql(
        "list_transform(list_filter(:p, x -> x.key IS NOT NULL AND x.value IS NOT NULL), "
        "x -> {'key': :key, 'value': replace(x.value, chr(65533), ' ')})",
        p=pairs,
        key=sanitize_sql(sql("x.key")),
    )
    keep = "x.key <> ''" + ("" if keep_empty else " AND x.value <> ''")
    return sql("list_filter(:c, x -> " + keep + ")", c=cleaned)


def _strict_error(toks: exp.Expr, bad: exp.Expr) -> exp.Expr:
    """The decoder's message for token ``bad`` (1-based), positions in bytes as it counts."""
    before = sql(
        "strlen(array_to_string(list_transform(:t[1 : :b - 1], t -> t.tok), ''))",
        t=toks.copy(),
        b=bad.copy(),
    )
    start = sql("(:before + strlen(:t[:b].ws))", before=before.copy(), t=toks.copy(), b=bad.copy())
    token = sql(":t[:b]", t=toks.copy(), b=bad.copy())
    return sql(
        "'logfmt syntax error at pos ' || CASE "
        "WHEN coalesce((:x).xk, (:x).yk) IS NOT NULL THEN "
        "(:start + strlen(coalesce((:x).xk, (:x).yk)) + 1) || ' : invalid key' "
        "WHEN (:x).qk IS NOT NULL THEN (:before + strlen((:x).tok) + 1) "
        "|| ' : invalid quoted value' "
        "WHEN (:x).uk IS NOT NULL THEN (strlen(line) + 1) || ' : unterminated quoted value' "
        "WHEN (:x).ck IS NOT NULL THEN (:start + strlen((:x).ck) + 1) || ' : unexpected ' "
        "|| chr(39) || (:x).cc || chr(39) "
        "WHEN (:x).ek IS NOT NULL THEN (:start + strlen((:x).ek) + 1) || ' : unexpected ' "
        "|| chr(39) || '\"' || chr(39) "
        "ELSE (:start + 1) || ' : unexpected ' || chr(39) || '=' || chr(39) END",
        x=token,
        before=before,
        start=start,
    )


def logfmt_pairs(node: ast.LogfmtParser) -> tuple[exp.Expr, exp.Expr, exp.Expr]:
    """``| logfmt``'s pairs over column ``line`` in line order (duplicates kept: the first
    wins later), with the ``--strict`` error and details (NULL when none)."""
    toks = tokens(exp.column("line"))
    pairs = _pairs(toks)
    if not node.strict:
        none = sql("CAST(NULL AS VARCHAR)")
        return _usable(pairs, node.keep_empty), none, none.copy()
    bad = sql(
        "coalesce(list_position(list_transform(:p, x -> x.key IS NOT NULL AND "
        "x.value IS NOT NULL), false), 0)",
        p=pairs.copy(),
    )
    kept = sql("CASE WHEN :b > 0 THEN :p[1 : :b - 1] ELSE :p END", b=bad, p=pairs)
    error = sql("CASE WHEN :b > 0 THEN 'LogfmtParserErr' END", b=bad.copy())
    details = sql("CASE WHEN :b > 0 THEN :d END", b=bad.copy(), d=_strict_error(toks, bad))
    return _usable(kept, node.keep_empty), error, details


def _raw_key(key: str) -> str:
    """A regex for the keys as written that the parser sanitises to ``key``."""

    def written(name: str) -> str:
        return "".join(
            '[^A-Za-z0-9\\x00-\\x20="\\x{FFFD}]' if c == "_" else re.escape(c) for c in name
        )

    if len(key) > 1 and key[0] == "_" and key[1].isdigit():
        return f"(?:{written(key[1:])}|{written(key)})"
    return written(key)


def _quick(
    key: str, keep_empty: bool, index: int
) -> tuple[list[dict[str, exp.Expr]], exp.Expr, exp.Expr]:
    """A look for ``key``, the ``index``-th wanted key, without tokenizing: its columns
    (per step), whether they decide the value, and the value they give then."""
    at, found = exp.column(logfmt_position(index)), exp.column(logfmt_quick(index))
    if not keep_empty and "_" not in key:
        # Only "key" itself sanitises to such a name; without "key=" anywhere in the line
        # there is no such pair (a bare "key" has an empty value). Otherwise the first
        # "key=" decides when it starts a token (after a blank; a rarer blank byte is left
        # to the tokenizer) before any quote and has a good value, up to a blank or the
        # line's end: when another "key=" follows, an "=" stands for it, which no value
        # may hold. Byte-based functions only: DuckDB's character positions (strpos,
        # substr) rescan the text from its start unless it knows the column is ASCII.
        token = key + "="
        after = exp.column(logfmt_after(index))
        whole = sql(
            "strlen(:b) + :n + strlen(:a) = strlen(line)", b=at.copy(), n=len(token), a=after
        )
        quick = sql(
            "CASE WHEN strlen(:b) < strlen(line) AND (:b = '' OR suffix(:b, ' ') OR "
            "suffix(:b, chr(9))) AND NOT contains(:b, '\"') THEN regexp_extract("
            "CASE WHEN :whole THEN :a ELSE :a || '=' END, :value, 1) END",
            b=at.copy(),
            whole=whole,
            a=after.copy(),
            value='^([^\\x00-\\x20="]+)(?:[\\x00-\\x20]|$)',
        )
        return (
            [
                {
                    logfmt_position(index): sql("split_part(line, :k, 1)", k=token),
                    logfmt_after(index): sql("split_part(line, :k, 2)", k=token),
                },
                {logfmt_quick(index): quick},
            ],
            sql(
                "coalesce(strlen(:b) = strlen(line), true) OR coalesce(:v, '') <> ''",
                b=at.copy(),
                v=found,
            ),
            sql("CASE WHEN :v <> '' THEN replace(:v, chr(65533), ' ') END", v=found.copy()),
        )
    value = '[^\\x00-\\x20="]' + ("*" if keep_empty else "+")
    pair = f"=(?P<v>{value})" if not keep_empty else f"(?:=(?P<v>{value}))?"
    match = sql(
        "regexp_extract(line, :re, ['tok', 'v'])",
        re=f"(?P<tok>(?:^|[\\x00-\\x20]){_raw_key(key)}{pair}(?:[\\x00-\\x20]|$))",
    )
    # Without a quote the words are the tokens; with one, a match ending before it is.
    decided = sql(
        ":m IS NULL OR :q = 0 OR ((:m).tok <> '' AND "
        "strpos(line, (:m).tok) + length((:m).tok) <= :q)",
        m=at,
        q=exp.column(LOGFMT_QUOTE),
    )
    return (
        [{logfmt_position(index): match}],
        decided,
        sql("CASE WHEN (:m).tok <> '' THEN replace((:m).v, chr(65533), ' ') END", m=at.copy()),
    )


def logfmt_lookup(
    keys: list[str],
    *,
    keep_empty: bool,
    wanted: dict[str, exp.Expr] | None = None,
) -> tuple[list[dict[str, exp.Expr]], dict[str, exp.Expr]]:
    """How ``| logfmt`` finds the labels ``keys`` (sanitised names) on column ``line``:
    columns to compute first (``logfmt_position``, ``logfmt_quick``, ``LOGFMT_TOKENS``,
    one frame per dict), then each key's
    value over them, the first good pair of that key (with a non-empty value unless
    ``keep_empty``), NULL when there is none. Lines where ``wanted[key]`` is false are
    not searched for that key (its value is then NULL).

    Lines are tokenized (once, for all keys) only when a quick look cannot decide: a
    key's first ``key=`` comes after a ``"`` (it may be inside a quoted value) or has no
    good value.
    """
    steps: list[dict[str, exp.Expr]] = [{}, {}]
    decided: list[exp.Expr] = []
    quick: list[exp.Expr] = []
    for index, key in enumerate(keys):
        columns, is_decided, value = _quick(key, keep_empty, index)
        for depth, named in enumerate(columns):
            for name, expression in named.items():
                if depth == 0 and wanted is not None and key in wanted:
                    expression = sql("CASE WHEN :w THEN :e END", w=wanted[key], e=expression)
                steps[depth][name] = expression
        decided.append(is_decided)
        quick.append(value)
    if not keys:
        return [], {}
    if keep_empty or any("_" in key for key in keys):  # the regex looks read it
        steps[0][LOGFMT_QUOTE] = sql("strpos(line, '\"')")
    pairs = logfmt_pairs(ast.LogfmtParser(keep_empty=keep_empty))[0]
    tokenized = LOGFMT_TOKENS
    steps.append({tokenized: sql("CASE WHEN NOT (:d) THEN :p END", d=exp.and_(*decided), p=pairs)})
    values = {
        key: sql(
            "CASE WHEN :d THEN :q ELSE list_filter(:x, x -> x.key = :k)[1].value END",
            d=is_decided.copy(),
            q=value,
            x=exp.column(tokenized),
            k=key,
        )
        for key, is_decided, value in zip(keys, decided, quick, strict=True)
    }
    return [step for step in steps if step], values
