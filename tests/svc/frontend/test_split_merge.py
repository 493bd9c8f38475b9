"""Where queries are cut, and how sub-results are put back together."""

from __future__ import annotations

from logql_to_sql import Grid
from svc.frontend.merge import merge_metric_runs, merge_streams
from svc.frontend.split import grid_runs, time_windows
from svc.query.metric_queries import MetricResult, Series
from svc.query.streams import ResultStream

SEC = 10**9
HOUR = 3600 * SEC


def test_grid_runs_have_equal_steps_and_cover_the_grid() -> None:
    grid = Grid(start_ns=7 * SEC, step_ns=60 * SEC, steps=130)
    per_run, runs = grid_runs(grid, HOUR)
    assert per_run == 60
    assert [run.start_ns for run in runs] == [7 * SEC, 7 * SEC + HOUR, 7 * SEC + 2 * HOUR]
    assert {run.steps for run in runs} == {60}
    assert {run.step_ns for run in runs} == {60 * SEC}


def test_grid_not_split() -> None:
    grid = Grid(start_ns=0, step_ns=60 * SEC, steps=30)
    assert grid_runs(grid, HOUR) == (30, [grid])
    assert grid_runs(grid, 0) == (30, [grid])


def test_step_longer_than_the_interval_runs_step_by_step() -> None:
    grid = Grid(start_ns=0, step_ns=2 * HOUR, steps=3)
    per_run, runs = grid_runs(grid, HOUR)
    assert per_run == 1 and len(runs) == 3


def test_time_windows_cut_on_multiples() -> None:
    assert time_windows(30 * 60 * SEC, 3 * HOUR + 5, HOUR) == [
        (30 * 60 * SEC, HOUR),
        (HOUR, 2 * HOUR),
        (2 * HOUR, 3 * HOUR),
        (3 * HOUR, 3 * HOUR + 5),
    ]
    assert time_windows(5, 10, 0) == [(5, 10)]


def _result(grid: Grid, series: list[Series], order: str | None = None) -> MetricResult:
    return MetricResult(grid, series, False, order)


def test_metric_runs_merge_side_by_side_and_padding_is_dropped() -> None:
    grid = Grid(start_ns=0, step_ns=SEC, steps=5)
    a, b = (("app", "a"),), (("app", "b"),)
    first = _result(grid, [Series(a, [(0, 1.0), (1, 2.0)]), Series(b, [(2, 5.0)])])
    second = _result(grid, [Series(a, [(0, 3.0), (1, 9.0)])])
    third = _result(grid, [Series(a, [(0, 4.0), (1, 7.0)]), Series(b, [(2, 8.0)])])
    merged = merge_metric_runs(grid, 2, [first, second, third])
    assert [(s.labels, s.points) for s in merged.series] == [
        (a, [(0, 1.0), (1, 2.0), (2, 3.0), (3, 9.0), (4, 4.0)]),
        (b, [(2, 5.0)]),  # b's point at 6 is past the grid
    ]


def test_metric_runs_keep_sort_order_by_the_last_value() -> None:
    grid = Grid(start_ns=0, step_ns=SEC, steps=2)
    a, b = (("app", "a"),), (("app", "b"),)
    first = _result(grid, [Series(a, [(0, 9.0)]), Series(b, [(0, 1.0)])], "desc")
    second = _result(grid, [Series(a, [(0, 1.0)]), Series(b, [(0, 5.0)])], "desc")
    merged = merge_metric_runs(grid, 1, [first, second])
    assert [s.labels for s in merged.series] == [b, a]


def test_log_windows_merge_in_order_up_to_the_limit() -> None:
    a, b = (("app", "a"),), (("app", "b"),)
    newest = [ResultStream(a, [(90, "a90"), (80, "a80")]), ResultStream(b, [(85, "b85")])]
    older = [ResultStream(a, [(50, "a50")]), ResultStream(b, [(60, "b60"), (40, "b40")])]
    streams, taken = merge_streams([newest, older], 5, backward=True)
    assert taken == 5
    assert [(s.labels, s.values) for s in streams] == [
        (a, [(90, "a90"), (80, "a80"), (50, "a50")]),
        (b, [(85, "b85"), (60, "b60")]),
    ]


def test_log_windows_forward() -> None:
    a = (("app", "a"),)
    first = [ResultStream(a, [(1, "1"), (2, "2")])]
    second = [ResultStream(a, [(3, "3"), (4, "4")])]
    streams, taken = merge_streams([first, second], 3, backward=False)
    assert (taken, streams[0].values) == (3, [(1, "1"), (2, "2"), (3, "3")])
