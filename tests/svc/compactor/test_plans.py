"""Which retention period a stream gets, and which files a compaction pass merges."""

from __future__ import annotations

import pytest

from svc.compactor.compaction_pass import compaction_jobs
from svc.compactor.config import StreamRetention
from svc.compactor.retention import choose_periods, max_retention
from svc.storage.catalog import FileEntry

DAY = 86_400.0


def _rule(priority: int, days: float) -> StreamRetention:
    return StreamRetention(selector="{}", priority=priority, period=days * DAY)


@pytest.mark.parametrize(
    ("rules", "matched", "period"),
    [
        pytest.param([_rule(1, 7), _rule(2, 30)], [{1}, {1}], 30 * DAY, id="highest-priority"),
        pytest.param([_rule(1, 30), _rule(1, 7)], [{1}, {1}], 7 * DAY, id="then-shortest"),
        pytest.param([_rule(1, 7), _rule(1, 7)], [{1}, {1}], 7 * DAY, id="then-first-in-order"),
        pytest.param([_rule(5, 1), _rule(1, 30)], [set(), {1}], 30 * DAY, id="only-matching"),
        pytest.param([_rule(1, 7)], [set()], None, id="no-rule-matches"),
    ],
)
def test_stream_rule_choice(
    rules: list[StreamRetention], matched: list[set[int]], period: float | None
) -> None:
    assert choose_periods(rules, matched, [1]).get(1) == period


def test_equal_rules_pick_the_first_in_list_order() -> None:
    first = StreamRetention(selector='{a="1"}', priority=1, period=7 * DAY)
    second = StreamRetention(selector='{b="1"}', priority=1, period=7 * DAY)
    chosen = choose_periods([first, second], [{1}, {1}], [1])
    assert chosen == {1: 7 * DAY}


@pytest.mark.parametrize(
    ("default", "rules", "longest"),
    [
        (30 * DAY, [_rule(1, 7)], 30 * DAY),
        (7 * DAY, [_rule(1, 90)], 90 * DAY),
        (0.0, [_rule(1, 7)], None),
        (30 * DAY, [StreamRetention(selector="{}", priority=1, period=0.0)], None),
    ],
)
def test_max_retention(default: float, rules: list[StreamRetention], longest: float | None) -> None:
    assert max_retention(default, rules) == longest


NOW = 1_700_000_000 * 10**9  # 2023-11-14 22:13:20


def _file(name: str, day: str, size: int, tenant: str = "t") -> FileEntry:
    return FileEntry(f"tenant={tenant}/day={day}/{name}.parquet", tenant, day, 0, 0, 1, 1, size, 1)


def _jobs(files: list[FileEntry]) -> list[list[str]]:
    jobs = compaction_jobs(files, target_bytes=1000, min_files=3, now_ns=NOW)
    return [sorted(f.path.rsplit("/", 1)[1] for f in job.inputs) for job in jobs]


def test_closed_days_merge_every_small_file_from_two() -> None:
    files = [
        _file("a", "2023-11-13", 10),
        _file("b", "2023-11-13", 20),
        _file("big", "2023-11-13", 900),
    ]
    assert _jobs(files) == [["a.parquet", "b.parquet"]]
    assert _jobs(files[:1]) == [["a.parquet"]]  # a lone flushed file takes the layout too
    assert _jobs([_file("compacted-x", "2023-11-13", 10)]) == []


def test_open_days_wait_for_enough_flushed_files() -> None:
    today = "2023-11-14"
    two = [_file("a", today, 10), _file("b", today, 10)]
    assert _jobs(two) == []
    three = [*two, _file("compacted-feed", today, 10)]  # a compacted file does not count
    assert _jobs(three) == []
    assert _jobs([*two, _file("c", today, 10)]) == [["a.parquet", "b.parquet", "c.parquet"]]


def test_partitions_are_separate_per_tenant() -> None:
    day = "2023-11-14"
    files = [_file(name, day, 1, tenant) for tenant in "xy" for name in "abc"]
    assert _jobs(files[:2] + files[3:5]) == []  # two of each: not enough for either
    assert len(_jobs(files)) == 2
