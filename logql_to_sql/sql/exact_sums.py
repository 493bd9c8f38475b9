"""Sums of DOUBLE values whose result does not depend on the order they are added in.

A DOUBLE sum rounds at every addition, so its last bits depend on the order of the
values: DuckDB's parallel aggregation adds them in a different order from run to run,
and a query split by groups of files adds each group apart and then the groups. Here
each value ``w`` (``|w| < 2**63``) is cut into three integers, its bits at and above
``2**0``, from ``2**-52``, and from ``2**-104``::

    w = a0 + a1 * 2**-52 + a2 * 2**-104  (+ what lies below 2**-104, rounded off)

Every step of the cut is exact in DOUBLE (rounding to an integer, scaling by a power of
two, subtracting the part taken), and each ``a`` fits a BIGINT. Sums of integers are
exact (HUGEINT), so they are the same in any order and any grouping; they are turned
into one DOUBLE once, at the end, the same way every time. A value is kept whole when
``|w| >= 2**-51``; a smaller one is rounded to a multiple of ``2**-104`` (about
``4.9e-32``). Values outside the cut (``|v| >= 2**63``, infinities, NaN) are summed as
DOUBLE apart and added last: infinities and NaN give what a plain sum gives, whatever the
order; only several huge finite values may still differ in their last bits.

A sum is carried as partial sums of the parts (``partial_fields``), which sum again when
merged (``merged_sum``); ``exact_sum`` is the one-level aggregate.
"""

from __future__ import annotations

__all__ = ["exact_sum", "merged_sum", "partial_fields"]


def _double(value: float) -> str:
    """``value`` as a DOUBLE literal (exponent form: DuckDB reads ``1.0`` as a DECIMAL)."""
    return format(value, ".17e")


_BOUND = _double(2.0**63)
_UP = _double(2.0**52)
_DOWN = _double(2.0**-52)
_DOWN2 = _double(2.0**-104)


def _parts(value: str) -> list[str]:
    """The three integer parts of ``value`` and its remainder that is not cut (SQL)."""
    w = f"(CASE WHEN abs({value}) < {_BOUND} THEN {value} ELSE 0 END)"
    below = f"(({w} - round({w})) * {_UP})"
    below2 = f"(({below} - round({below})) * {_UP})"
    return [
        f"CAST(round({w}) AS BIGINT)",
        f"CAST(round({below}) AS BIGINT)",
        f"CAST(round({below2}) AS BIGINT)",
        f"(CASE WHEN abs({value}) < {_BOUND} THEN 0 ELSE {value} END)",
    ]


def _combined(sums: list[str]) -> str:
    """One DOUBLE from the sums of the parts (``_parts``' order)."""
    a0, a1, a2, rest = sums
    return (
        f"(CAST({a0} AS DOUBLE) + CAST({a1} AS DOUBLE) * {_DOWN} "
        f"+ CAST({a2} AS DOUBLE) * {_DOWN2} + {rest})"
    )


def partial_fields(name: str, value: str) -> str:
    """Struct fields (``'<name>0': ..., ...``, SQL text to put between braces) holding the
    partial sums of ``value`` over a group of rows, merged by ``merged_sum``."""
    return ", ".join(f"'{name}{number}': sum({part})" for number, part in enumerate(_parts(value)))


def merged_sum(name: str, struct: str = "p") -> str:
    """The sum of the partial sums ``partial_fields(name, ...)`` in the struct column
    ``struct`` over the rows of a group, as one DOUBLE (an aggregate, SQL text)."""
    return _combined([f"sum({struct}.{name}{number})" for number in range(4)])


def exact_sum(value: str, over: str = "") -> str:
    """The sum of ``value`` over the rows of a group, as one DOUBLE whatever their order
    (an aggregate, SQL text); with ``over`` (``PARTITION BY ...``), the window function
    over each row's partition."""
    window = f" OVER ({over})" if over else ""
    return _combined([f"sum({part}){window}" for part in _parts(value)])
