"""The benchmark scripts still run: each on a tiny corpus, once (their figures are not
checked here, only that every shape was measured and the answers they compare agreed)."""

from __future__ import annotations

import benchmarks.compaction as compaction
import benchmarks.query as query
import benchmarks.sql as sql
import benchmarks.sum_determinism as sum_determinism


def test_query_benchmark_runs_every_shape() -> None:
    report = query.run(0.3, 1)
    cases = {**report["log"], **report["metric"]}
    assert len(cases) >= 10
    assert all(case["ours_s"] > 0 and case["handwritten_s"] > 0 for case in cases.values())


def test_sql_benchmark_runs_every_shape() -> None:
    report = sql.run(0.3, 1)
    assert set(report["cases"]) >= {"count", "logql() composition"}
    assert all(case["ours_s"] > 0 and case["direct_s"] > 0 for case in report["cases"].values())


def test_compaction_benchmark_compacts_and_compares_queries() -> None:
    report = compaction.run(0.3, 1, 3, 256 << 20)
    assert 0 < report["compacted_bytes"] <= report["flushed_bytes"]
    assert report["queries"]


def test_sum_determinism_benchmark_finds_one_answer_split_or_not() -> None:
    report = sum_determinism.run(2.2, 2, flush_bytes=64 << 10)
    assert report["files"] >= 3
    assert set(report["shapes"]) == set(sum_determinism.SHAPES)
    for shape in report["shapes"].values():
        assert shape["distinct_answers_ours"] == 1
        assert shape["2_groups_equal_whole"] and shape["4_groups_equal_whole"]
