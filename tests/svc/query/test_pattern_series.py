"""Pattern samples, read and pruned as the reference's chunks and querier answer them."""

from __future__ import annotations

from svc.query.pattern_series import (
    MAX_PATTERNS,
    PatternSeries,
    SampleWindow,
    cluster_samples,
    merge_tenants,
    prune,
)

S = 1_000_000_000
HOUR_MS = 3_600_000


def _window(start_s: int, end_s: int, step_s: int, interval_s: int = 10) -> SampleWindow:
    return SampleWindow(interval_s * 1000, HOUR_MS, start_s * 1000, end_s * 1000, step_s * 1000)


def test_lines_count_in_their_sample_interval() -> None:
    # 10 s samples; the step equals the interval, so samples come back as they are,
    # with no zero samples for the empty intervals.
    times = [0, 3 * S, 9 * S, 10 * S, 45 * S]
    assert cluster_samples(times, _window(0, 60, 10)) == [(0, 3), (10_000, 1), (40_000, 1)]


def test_wider_steps_sum_and_zero_fill() -> None:
    times = [0, 3 * S, 10 * S, 95 * S]
    assert cluster_samples(times, _window(0, 120, 30)) == [
        (0, 3),
        (30_000, 0),
        (60_000, 0),
        (90_000, 1),
    ]


def test_zero_fill_stays_inside_a_chunk() -> None:
    # A chunk spans at most an hour from its first sample; no zeros bridge two chunks.
    times = [0, 3_700 * S]
    assert cluster_samples(times, _window(0, 7_200, 1_200)) == [(0, 1), (3_600_000, 1)]
    times = [0, 1_300 * S]
    assert cluster_samples(times, _window(0, 7_200, 600)) == [(0, 1), (600_000, 0), (1_200_000, 1)]


def test_a_sample_before_start_is_not_read() -> None:
    # The query starts at 15 s: the line at 17 s counts in the sample at 10 s, which
    # lies before the start.
    times = [17 * S, 22 * S]
    assert cluster_samples(times, _window(15, 60, 10)) == [(20_000, 1)]


def test_a_chunks_last_sample_at_the_end_is_read() -> None:
    # The range search lets the last sample through when it sits exactly at the end.
    assert cluster_samples([0, 60 * S], _window(0, 60, 10)) == [(0, 1), (60_000, 1)]
    assert cluster_samples([0, 60 * S, 70 * S], _window(0, 60, 10)) == [(0, 1)]


def test_empty_windows() -> None:
    assert cluster_samples([100 * S], _window(0, 60, 10)) == []
    assert cluster_samples([0], _window(30, 60, 10)) == []


def _series(pattern: str, total: int, level: str = "info") -> PatternSeries:
    return PatternSeries(pattern, level, [(0, total)])


def test_prune_keeps_thirty_lines_and_more_most_first() -> None:
    found = prune([_series("a", 29), _series("b", 30), _series("c", 31), _series("d", 100)])
    assert [(s.pattern, s.total) for s in found] == [("d", 100), ("c", 31), ("b", 30)]


def test_prune_keeps_at_most_three_hundred() -> None:
    found = prune([_series(f"p{i:03d}", 30 + i) for i in range(MAX_PATTERNS + 5)])
    assert len(found) == MAX_PATTERNS
    assert found[-1].total == 35


def test_tenants_merge_by_pattern_alone() -> None:
    first = [PatternSeries("p", "info", [(0, 30), (10, 5)]), _series("q", 40)]
    second = [PatternSeries("p", "error", [(10, 7), (20, 1)])]
    merged = merge_tenants([first, second])
    assert [(s.pattern, s.level, s.samples) for s in merged] == [
        ("p", "info", [(0, 30), (10, 5), (10, 7), (20, 1)]),
        ("q", "info", [(0, 40)]),
    ]
    assert merge_tenants([first]) is first
