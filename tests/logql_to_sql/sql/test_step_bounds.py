"""Which steps' windows an entry falls in, as the compiled SQL computes them (integer
arithmetic), against counting the windows one by one, at every nanosecond around the
step boundaries: ranges shorter than, equal to and longer than the step, with offsets.

The window of step ``k`` is ``(t_k - range - offset, t_k - offset]`` with
``t_k = start + k * step``; entries come from the range aggregation's time window.
"""

from __future__ import annotations

import dataclasses

import duckdb
import pytest
from sqlglot import exp

from logql_to_sql import Grid, ast, parse
from logql_to_sql.sql.range_aggregation import _bounds, _time_window

START, STEP, STEPS = 1_000_000, 60, 5


def _windows(ts: int, range_ns: int, offset_ns: int) -> list[int]:
    ends = [START + k * STEP - offset_ns for k in range(STEPS)]
    return [k for k, end in enumerate(ends) if end - range_ns < ts <= end]


@pytest.mark.parametrize("range_ns", [1, 23, STEP - 1, STEP, STEP + 1, 2 * STEP, 3 * STEP + 7])
@pytest.mark.parametrize("offset_ns", [0, 17, STEP, -11])
def test_steps_of_each_entry(range_ns: int, offset_ns: int) -> None:
    node = parse('count_over_time({a="b"}[1m])')
    assert isinstance(node, ast.RangeAggregation)
    log_range = dataclasses.replace(node.range, range_ns=range_ns, offset_ns=offset_ns)
    grid = Grid(start_ns=START, step_ns=STEP, steps=STEPS)
    kmin, kmax = _bounds(grid, log_range)
    low, high = _time_window(grid, log_range)
    query = (
        exp.select(exp.column("ts"), kmin.as_("kmin"), kmax.as_("kmax"))
        .from_("entries")
        .where(low)
        .where(high)
    )
    first = START - range_ns - offset_ns - 2 * STEP
    entries = list(range(first, START + STEPS * STEP + 2 * STEP))
    db = duckdb.connect()
    db.execute("CREATE TABLE entries AS SELECT unnest(?::BIGINT[]) AS ts", [entries])
    found = {ts: (a, b) for ts, a, b in db.execute(query.sql(dialect="duckdb")).fetchall()}
    for ts in entries:
        steps = _windows(ts, range_ns, offset_ns)
        if ts not in found:
            assert not steps, ts
            continue
        a, b = found[ts]
        assert list(range(a, b + 1)) == steps, (ts, a, b)
