"""Label values as numbers, durations and byte sizes, with Go's rules (LOGQL.md 5.4, 6.3).

``unwrap x`` and number filters read ``strconv.ParseFloat``; ``unwrap duration(x)`` and
duration filters ``time.ParseDuration``; ``unwrap bytes(x)`` and bytes filters go-humanize
``ParseBytes``, a whole number of bytes. Each conversion is SQL for the texts it reads
exactly (all the usual shapes: ``12.5``, ``1e3``, ``250ms``, ``1h30m``, ``19.27MB``) and
the engine's ``UDF_PARSE_VALUE`` (a vectorized function over the rows the SQL leaves to
it) for the rest; the error text, Go's message, comes from that function too, and is only
asked for values that failed.
"""

from __future__ import annotations

from dataclasses import dataclass

from sqlglot import exp

from logql_to_sql.sql.dialect import UDF_PARSE_VALUE, query_id, sql

__all__ = [
    "Conversion",
    "bytes_of",
    "duration_unit_ns",
    "float_of",
    "nanoseconds_of",
    "seconds_from_nanoseconds",
    "seconds_of",
]


@dataclass(frozen=True)
class Conversion:
    """A converted value (NULL when the text does not convert) and, for such a text,
    the reference's error message."""

    value: exp.Expr
    error: exp.Expr


def _fallback(kind: str, text: exp.Expr, field: str) -> exp.Expr:
    call = exp.Anonymous(
        this=UDF_PARSE_VALUE, expressions=[exp.Literal.string(kind), text, query_id()]
    )
    return exp.Dot(this=exp.paren(call), expression=exp.to_identifier(field))


# ParseFloat's decimal syntax without "_" (which DuckDB's cast reads by other rules).
_DECIMAL = r"[-+]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][-+]?[0-9]+)?"


def float_of(text: exp.Expr) -> Conversion:
    """``strconv.ParseFloat(text, 64)``; out of range is an error, as there."""
    value = sql(
        "CASE WHEN regexp_full_match(:t, :re) AND isfinite(TRY_CAST(:t AS DOUBLE)) "
        "THEN TRY_CAST(:t AS DOUBLE) ELSE :slow END",
        t=text,
        re=_DECIMAL,
        slow=_fallback("float", text.copy(), "value"),
    )
    return Conversion(value, _fallback("float", text.copy(), "error"))


_UNITS_NS = {
    "ns": 1,
    "us": 1_000,
    "µs": 1_000,
    "μs": 1_000,
    "ms": 1_000_000,
    "s": 1_000_000_000,
    "m": 60_000_000_000,
    "h": 3_600_000_000_000,
}
_UNIT = "(?:ns|us|µs|μs|ms|s|m|h)"
# With at most 18 digits per group Go's digit loops cannot overflow, and a fraction is
# read whole: the SQL below then computes exactly what ParseDuration does.
_NUMBER = r"(?:[0-9]{1,18}(?:\.[0-9]{0,18})?|\.[0-9]{1,18})"
_TERMS = r"[-+]?(?:" + _NUMBER + _UNIT + ")+"
_TERM_PARTS = r"([0-9]*)(?:\.([0-9]*))?(ns|us|µs|μs|ms|s|m|h)"
# One term small enough for BIGINT arithmetic: 999999h and a fraction of an hour fit.
_SMALL_TERM = r"[-+]?(?:[0-9]{1,6}(?:\.[0-9]{0,9})?|\.[0-9]{1,9})" + _UNIT


def _unit_ns(unit: exp.Expr) -> exp.Expr:
    cases = " ".join(f"WHEN '{name}' THEN {ns}" for name, ns in _UNITS_NS.items())
    return sql(f"CAST(CASE :u {cases} END AS HUGEINT)", u=unit)


def _fraction_ns(fraction: exp.Expr, unit_ns: exp.Expr) -> exp.Expr:
    """``uint64(float64(fraction) * (float64(unit) / 10^digits))``: what Go adds for the
    digits after the point (``10^digits`` is exact in a double up to 10^22)."""
    return sql(
        "coalesce(CAST(trunc(CAST(nullif(:f, '') AS DOUBLE) * (CAST(:u AS DOUBLE) / "
        "pow(10, length(:f)))) AS BIGINT), 0)",
        f=fraction,
        u=unit_ns,
    )


def _term_ns(whole: exp.Expr, fraction: exp.Expr, unit_ns: exp.Expr) -> exp.Expr:
    """One ``<whole>.<fraction><unit>`` in nanoseconds, as Go adds it up (HUGEINT: 18
    digits of hours overflow BIGINT, which Go reports as an invalid duration)."""
    return sql(
        "coalesce(TRY_CAST(:w AS HUGEINT), 0) * :u + :f",
        w=whole,
        u=unit_ns,
        f=_fraction_ns(sql("coalesce(:f, '')", f=fraction), unit_ns.copy()),
    )


def duration_unit_ns(text: exp.Expr) -> exp.Expr:
    """Nanoseconds of the unit a text of ``_SMALL_TERM``'s shape ends with (two-character
    units first: ``ms`` before ``s``); NULL when it ends with none. Comparing the last
    characters is much cheaper than a chain of suffix tests."""
    two = " ".join(f"WHEN '{name}' THEN {ns}" for name, ns in _UNITS_NS.items() if len(name) == 2)
    one = " ".join(f"WHEN '{name}' THEN {ns}" for name, ns in _UNITS_NS.items() if len(name) == 1)
    return sql(f"CASE right(:t, 2) {two} ELSE CASE right(:t, 1) {one} END END", t=text)


def _small_term_ns(text: exp.Expr, unit: exp.Expr) -> exp.Expr:
    """A single ``[sign]<number><unit>`` within ``_SMALL_TERM`` (the usual shape) in
    nanoseconds, cut with string functions: cheaper than a regex that extracts groups.
    ``unit`` is ``duration_unit_ns(text)`` (a column when the caller computed it before).
    Every unit below a second has two characters, the others one."""
    number = sql(
        "left(:t, CASE WHEN :u < 1000000000 THEN -2 ELSE -1 END)", t=text.copy(), u=unit.copy()
    )
    digits = sql("ltrim(:n, '+-')", n=number.copy())
    fractional = sql(
        "CASE WHEN starts_with(:t, '-') THEN -1 ELSE 1 END * (coalesce(TRY_CAST("
        "split_part(:d, '.', 1) AS BIGINT), 0) * :u + :f)",
        t=text.copy(),
        d=digits,
        u=unit.copy(),
        f=_fraction_ns(sql("split_part(:d, '.', 2)", d=digits.copy()), unit.copy()),
    )
    return sql(
        "CASE WHEN NOT contains(:t, '.') THEN CAST(:n AS BIGINT) * :u ELSE :f END",
        t=text.copy(),
        n=number,
        u=unit.copy(),
        f=fractional,
    )


def nanoseconds_of(text: exp.Expr, unit: exp.Expr | None = None) -> Conversion:
    """``time.ParseDuration(text)`` in nanoseconds (BIGINT). ``unit``: a column holding
    ``duration_unit_ns(text)``, when the caller computed it in an earlier frame."""
    terms = sql(
        "CASE WHEN starts_with(:t, '-') THEN -1 ELSE 1 END * list_sum(list_transform("
        "regexp_extract_all(:t, :re, ['w', 'f', 'u']), x -> :term))",
        t=text.copy(),
        re=_TERM_PARTS,
        term=_term_ns(sql("x.w"), sql("x.f"), _unit_ns(sql("x.u"))),
    )
    value = sql(
        "CASE WHEN regexp_full_match(:t, :one) THEN :single "
        "WHEN regexp_full_match(:t, :many) THEN :several "
        "WHEN :t IN ('0', '+0', '-0') THEN 0 END",
        t=text.copy(),
        one=_SMALL_TERM,
        single=_small_term_ns(text.copy(), duration_unit_ns(text.copy()) if unit is None else unit),
        many=_TERMS,
        several=terms,
    )
    # Out of int64 (Go's "invalid duration") the cast fails: the engine's function then
    # gives the error.
    checked = sql(
        "coalesce(TRY_CAST(:v AS BIGINT), :slow)",
        v=value,
        slow=_fallback("duration", text.copy(), "nanos"),
    )
    return Conversion(checked, _fallback("duration", text, "error"))


def seconds_from_nanoseconds(nanos: exp.Expr) -> exp.Expr:
    """``Duration.Seconds()``: whole seconds plus the nanoseconds left, each converted to
    a float, as Go computes it (``nanos`` is read twice: pass a column)."""
    return sql("CAST(:n // 1000000000 AS DOUBLE) + CAST(:n % 1000000000 AS DOUBLE) / 1e9", n=nanos)


def seconds_of(text: exp.Expr) -> Conversion:
    """``time.ParseDuration(text).Seconds()``."""
    nanos = nanoseconds_of(text)
    return Conversion(seconds_from_nanoseconds(nanos.value), nanos.error)


_BYTE_UNITS = {"": 1.0, "b": 1.0}
for _power, _prefix in enumerate("kmgtpe", start=1):
    _BYTE_UNITS[_prefix] = _BYTE_UNITS[_prefix + "b"] = 1000.0**_power
    _BYTE_UNITS[_prefix + "i"] = _BYTE_UNITS[_prefix + "ib"] = 1024.0**_power
# ASCII texts only: ParseBytes counts Unicode digits and spaces too, which the function
# of the engine handles. No commas either (they are dropped, but cut the unit search).
_SIZE = r"^([0-9]+(?:\.[0-9]*)?|\.[0-9]+)[ \t\n\v\f\r]*([A-Za-z]{0,3})[ \t\n\v\f\r]*$"


def bytes_of(text: exp.Expr) -> Conversion:
    """go-humanize ``ParseBytes(text)``: the number times the unit, truncated to a whole
    number of bytes (``1.5B`` is 1, ``2.3KB`` is 2299 as float64 gives it)."""
    parts = sql("regexp_extract(:t, :re, ['n', 'u'])", t=text, re=_SIZE)
    cases = " ".join(f"WHEN '{unit}' THEN {factor!r}" for unit, factor in _BYTE_UNITS.items())
    product = sql(f"TRY_CAST((:p).n AS DOUBLE) * CASE lower((:p).u) {cases} END", p=parts)
    general = sql(
        "CASE WHEN :x < 18446744073709551616.0 THEN floor(:x) ELSE :slow END",
        x=product,
        slow=_fallback("bytes", text.copy(), "value"),
    )
    # A plain count of bytes (an access log's size field) is read as it is: no units, no
    # groups to extract, and 15 digits are exact in a double.
    value = sql(
        "CASE WHEN regexp_full_match(:t, '[0-9]{1,15}') THEN CAST(:t AS DOUBLE) ELSE :g END",
        t=text.copy(),
        g=general,
    )
    return Conversion(value, _fallback("bytes", text.copy(), "error"))
