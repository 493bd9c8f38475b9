"""Where a query is cut into sub-queries (LIMITS.md §2.1), as pure functions.

A metric range query's value at a step depends only on the data in that step's window, so
the step grid is cut into consecutive runs of steps: each sub-query evaluates the same
expression on its own steps, and the sub-results side by side are the whole result. Every
run has the same number of steps (the last one is padded and its extra steps dropped), so
all sub-queries share one compiled plan.

Log queries and metadata requests are cut into time windows on multiples of the interval.
"""

from __future__ import annotations

from logql_to_sql import Grid

__all__ = ["grid_runs", "time_windows"]


def grid_runs(grid: Grid, interval_ns: int) -> tuple[int, list[Grid]]:
    """``(steps per run, runs)``: the grid cut into runs of ``interval_ns`` worth of steps
    (at least one step each); a single run when there is nothing to cut."""
    if interval_ns <= 0 or grid.steps <= 1:
        return grid.steps, [grid]
    per_run = max(1, interval_ns // grid.step_ns)
    if grid.steps <= per_run:
        return grid.steps, [grid]
    runs = -(-grid.steps // per_run)
    return per_run, [
        Grid(
            start_ns=grid.start_ns + index * per_run * grid.step_ns,
            step_ns=grid.step_ns,
            steps=per_run,
        )
        for index in range(runs)
    ]


def time_windows(start_ns: int, end_ns: int, interval_ns: int) -> list[tuple[int, int]]:
    """``[start_ns, end_ns)`` cut at the multiples of ``interval_ns``, oldest first."""
    if interval_ns <= 0 or end_ns - start_ns <= 0:
        return [(start_ns, end_ns)]
    windows = []
    begin = start_ns
    while begin < end_ns:
        stop = min((begin // interval_ns + 1) * interval_ns, end_ns)
        windows.append((begin, stop))
        begin = stop
    return windows
