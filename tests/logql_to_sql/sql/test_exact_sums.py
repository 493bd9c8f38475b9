"""Exact sums: the same DOUBLE in any order and any grouping, close to the true sum."""

from __future__ import annotations

import math
import random
from collections.abc import Iterator

import duckdb
import pytest

from logql_to_sql.sql.exact_sums import exact_sum, merged_sum, partial_fields


@pytest.fixture
def db() -> Iterator[duckdb.DuckDBPyConnection]:
    # One thread: rows are read in the order they were inserted.
    connection = duckdb.connect(config={"threads": 1})
    yield connection
    connection.close()


def _values() -> list[float]:
    rng = random.Random(23)
    values = [rng.uniform(0, 1000) for _ in range(400)]
    values += [rng.uniform(-1, 1) * 10.0 ** rng.randint(-15, 15) for _ in range(400)]
    values += [float(rng.randint(0, 1 << 40)) for _ in range(100)] + [3e-16, -2.5e-12, 0.1]
    return values


def _table(db: duckdb.DuckDBPyConnection, name: str, values: list[float]) -> None:
    db.execute(f"CREATE TABLE {name} (g INTEGER, v DOUBLE)")
    db.executemany(f"INSERT INTO {name} VALUES (?, ?)", [(i % 3, v) for i, v in enumerate(values)])


def _sum(db: duckdb.DuckDBPyConnection, table: str) -> float:
    found = db.execute(f"SELECT {exact_sum('v')} FROM {table}").fetchone()
    assert found is not None
    return float(found[0])


def test_any_order_and_grouping_gives_the_same_double(db: duckdb.DuckDBPyConnection) -> None:
    values = _values()
    shuffled = values[:]
    random.Random(5).shuffle(shuffled)
    _table(db, "forward", values)
    _table(db, "backward", values[::-1])
    _table(db, "shuffled", shuffled)
    plain = {
        db.execute(f"SELECT sum(v) FROM {t}").fetchall()[0][0] for t in ("forward", "shuffled")
    }
    assert len(plain) == 2, "a plain sum of these values depends on their order"
    whole = _sum(db, "forward")
    assert _sum(db, "backward") == whole
    assert _sum(db, "shuffled") == whole
    # Partial sums per group (``g``), merged: the split of a query by groups of files.
    merged = db.execute(
        f"SELECT {merged_sum('s')} FROM "
        f"(SELECT g, {{{partial_fields('s', 'v')}}} AS p FROM shuffled GROUP BY g)"
    ).fetchone()
    assert merged is not None and merged[0] == whole
    assert math.isclose(whole, math.fsum(values), rel_tol=4 * 2.0**-52)


def test_where_a_compensated_sum_depends_on_the_order(db: duckdb.DuckDBPyConnection) -> None:
    """DuckDB's ``fsum`` (compensated) rounds its compensation when the values' errors span
    more than a DOUBLE: 1.0 or 1 + 2**-52 by order. The exact sum is the rounded true sum."""
    tiny, tinier, huge = 2.0**-53, 2.0**-80, 2.0**100
    orders = [[huge, 1.0, tiny, tinier, -huge], [1.0, tiny, tinier, huge, -huge]]
    compensated, exact = set(), set()
    for number, values in enumerate(orders):
        _table(db, f"t{number}", values)
        found = db.execute(f"SELECT fsum(v), {exact_sum('v')} FROM t{number}").fetchone()
        assert found is not None
        compensated.add(found[0])
        exact.add(found[1])
    assert len(compensated) == 2
    assert exact == {math.fsum(orders[0])} == {1.0 + 2.0**-52}


def test_squares_and_a_fraction_of_small_values(db: duckdb.DuckDBPyConnection) -> None:
    values = [1e-6 + i * 1e-9 for i in range(100)]
    _table(db, "t", values)
    found = db.execute(f"SELECT {exact_sum('v * v')}, {exact_sum('v')} FROM t").fetchone()
    assert found is not None
    assert math.isclose(found[0], math.fsum(v * v for v in values), rel_tol=1e-13)
    assert math.isclose(found[1], math.fsum(values), rel_tol=4 * 2.0**-52)


@pytest.mark.parametrize(
    ("values", "expected"),
    [
        ([1.5, float("nan"), 2.0], "nan"),
        ([1.5, float("inf"), 2.0], "inf"),
        ([-1.5, float("-inf")], "-inf"),
        ([float("inf"), 1.0, float("-inf")], "nan"),
        ([1e19, 0.25], "1.0000000000000000025e19"),
        ([-4e20, 1.0, 4e20], "1.0"),
        ([1e-40, 2.0], "2.0"),
        ([-0.75], "-0.75"),
    ],
)
def test_values_outside_the_integer_parts(
    db: duckdb.DuckDBPyConnection, values: list[float], expected: str
) -> None:
    """Infinities and NaN as in a plain sum; huge values summed apart; values far below
    2**-104 are rounded off."""
    _table(db, "t", values)
    found = _sum(db, "t")
    if expected == "nan":
        assert math.isnan(found)
    else:
        assert found == float(expected)
