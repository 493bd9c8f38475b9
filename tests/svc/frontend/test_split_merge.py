"""Where queries are cut, and how sub-results are put back together."""

from __future__ import annotations

from logql_to_sql import Grid
from svc.frontend.merge import merge_metric_runs, merge_streams
from svc.frontend.split import (
    DataSpans,
    grid_runs,
    runs_around_files,
    time_windows,
    windows_around_files,
)
from svc.query.metric_queries import MetricResult, Series
from svc.query.streams import ResultStream

SEC = 10**9
HOUR = 3600 * SEC


def test_grid_runs_have_equal_steps_and_cover_the_grid() -> None:
    grid = Grid(start_ns=7 * SEC, step_ns=60 * SEC, steps=130)
    runs = grid_runs(grid, HOUR)
    assert [run.start_ns for run in runs] == [7 * SEC, 7 * SEC + HOUR, 7 * SEC + 2 * HOUR]
    assert {run.steps for run in runs} == {60}
    assert {run.step_ns for run in runs} == {60 * SEC}


def test_grid_not_split() -> None:
    grid = Grid(start_ns=0, step_ns=60 * SEC, steps=30)
    assert grid_runs(grid, HOUR) == [grid]
    assert grid_runs(grid, 0) == [grid]


def test_step_longer_than_the_interval_runs_step_by_step() -> None:
    grid = Grid(start_ns=0, step_ns=2 * HOUR, steps=3)
    runs = grid_runs(grid, HOUR)
    assert [run.steps for run in runs] == [1, 1, 1]


def test_time_windows_cut_on_multiples() -> None:
    assert time_windows(30 * 60 * SEC, 3 * HOUR + 5, HOUR) == [
        (30 * 60 * SEC, HOUR),
        (HOUR, 2 * HOUR),
        (2 * HOUR, 3 * HOUR),
        (3 * HOUR, 3 * HOUR + 5),
    ]
    assert time_windows(5, 10, 0) == [(5, 10)]


def test_overlapping_file_spans_merge() -> None:
    spans = DataSpans.of([(50, 60), (0, 10), (5, 20), (21, 30)])
    assert (spans.starts, spans.ends) == ((0, 21, 50), (20, 30, 60))
    assert spans.spanning(9, 10) == 0  # data at or before 9 and at or after 10: (0, 20)
    assert spans.spanning(20, 21) is None  # (0, 20) ends where (21, 30) starts
    assert spans.spanning(40, 45) is None  # nothing there
    assert spans.spanning(25, 12) == 21  # a lookback reaching back over a span's start


def test_log_cuts_inside_a_file_move_to_where_its_data_starts() -> None:
    windows = time_windows(0, 5 * HOUR, HOUR)
    # one file over [0.5h, 1.5h], one over [2h, 3.9h]; nothing flushed after 4h
    spans = DataSpans.of([(HOUR // 2, 3 * HOUR // 2), (2 * HOUR, 4 * HOUR - 1)])
    assert windows_around_files(windows, spans) == [
        (0, HOUR // 2),
        (HOUR // 2, 2 * HOUR),
        (2 * HOUR, 4 * HOUR),
        (4 * HOUR, 5 * HOUR),
    ]
    # a file from the start on: its cut merges into the first window
    assert windows_around_files(windows, DataSpans.of([(0, 3 * HOUR // 2)])) == [
        (0, 2 * HOUR),
        (2 * HOUR, 3 * HOUR),
        (3 * HOUR, 4 * HOUR),
        (4 * HOUR, 5 * HOUR),
    ]
    assert windows_around_files(windows, DataSpans.of([])) == windows


def test_metric_runs_join_where_both_would_read_a_file() -> None:
    grid = Grid(start_ns=0, step_ns=60 * SEC, steps=300)
    runs = grid_runs(grid, HOUR)  # five runs of an hour
    # a file over [0.5h, 1.2h]; a 5m lookback: the cut at 1h is joined, the one at 2h kept
    # (the run from 2h reads from 1h55m, after the file), and at 3h and 4h nothing is flushed
    joined = runs_around_files(grid, runs, 300 * SEC, DataSpans.of([(HOUR // 2, 6 * HOUR // 5)]))
    assert [(run.start_ns // HOUR, run.steps) for run in joined] == [
        (0, 120),
        (2, 60),
        (3, 60),
        (4, 60),
    ]
    # a file in the last minute before 2h: the run up to 1h59m does not read it
    late = DataSpans.of([(2 * HOUR - 30 * SEC, 2 * HOUR)])
    assert runs_around_files(grid, runs, 300 * SEC, late) == runs
    # one from 1h58m: both runs read it (the second for its lookback alone)
    early = DataSpans.of([(2 * HOUR - 120 * SEC, 2 * HOUR - 110 * SEC)])
    assert [run.steps for run in runs_around_files(grid, runs, 300 * SEC, early)] == [
        60,
        120,
        60,
        60,
    ]
    # a file under every cut: the grid runs whole
    assert runs_around_files(grid, runs, 0, DataSpans.of([(0, 5 * HOUR)])) == [grid]


def test_metric_runs_of_several_lengths_merge_at_their_offsets() -> None:
    grid = Grid(start_ns=0, step_ns=SEC, steps=4)
    a = (("app", "a"),)
    runs = [Grid(start_ns=0, step_ns=SEC, steps=3), Grid(start_ns=3 * SEC, step_ns=SEC, steps=3)]
    first = _result(runs[0], [Series(a, [(0, 1.0), (2, 3.0)])])
    second = _result(runs[1], [Series(a, [(0, 4.0), (1, 5.0)])])
    merged = merge_metric_runs(grid, runs, [first, second])
    assert [s.points for s in merged.series] == [[(0, 1.0), (2, 3.0), (3, 4.0)]]


def _result(grid: Grid, series: list[Series], order: str | None = None) -> MetricResult:
    return MetricResult(grid, series, False, order)


def test_metric_runs_merge_side_by_side_and_padding_is_dropped() -> None:
    grid = Grid(start_ns=0, step_ns=SEC, steps=5)
    a, b = (("app", "a"),), (("app", "b"),)
    first = _result(grid, [Series(a, [(0, 1.0), (1, 2.0)]), Series(b, [(2, 5.0)])])
    second = _result(grid, [Series(a, [(0, 3.0), (1, 9.0)])])
    third = _result(grid, [Series(a, [(0, 4.0), (1, 7.0)]), Series(b, [(2, 8.0)])])
    runs = grid_runs(grid, 2 * SEC)
    merged = merge_metric_runs(grid, runs, [first, second, third])
    assert [(s.labels, s.points) for s in merged.series] == [
        (a, [(0, 1.0), (1, 2.0), (2, 3.0), (3, 9.0), (4, 4.0)]),
        (b, [(2, 5.0)]),  # b's point at 6 is past the grid
    ]


def test_metric_runs_keep_sort_order_by_the_last_value() -> None:
    grid = Grid(start_ns=0, step_ns=SEC, steps=2)
    a, b = (("app", "a"),), (("app", "b"),)
    first = _result(grid, [Series(a, [(0, 9.0)]), Series(b, [(0, 1.0)])], "desc")
    second = _result(grid, [Series(a, [(0, 1.0)]), Series(b, [(0, 5.0)])], "desc")
    merged = merge_metric_runs(grid, grid_runs(grid, SEC), [first, second])
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
