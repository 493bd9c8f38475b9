"""The Drain miner: tokens, masking, clustering and pattern text."""

from __future__ import annotations

import time

import pytest

from svc.query.drain import PARAM, DrainConfig, DrainMiner, tokenize


@pytest.mark.parametrize(
    ("line", "tokens"),
    [
        pytest.param("a b c", ["a", "b", "c"], id="words"),
        pytest.param("took=12ms size=1.5KB", ["took", "=", PARAM, "size", "=", PARAM], id="units"),
        pytest.param("at 2024-01-02T03:04:05.123Z ok", ["at", PARAM, "ok"], id="timestamp"),
        pytest.param("id 123e4567-e89b-12d3-a456-426614174000", ["id", PARAM], id="uuid"),
        pytest.param("from 192.168.0.1:8080 x", ["from", PARAM, "x"], id="ipv4-port"),
        pytest.param("addr 0xdeadBEEF", ["addr", PARAM], id="hex-literal"),
        pytest.param("sha deadbeef00112233", ["sha", PARAM], id="long-hex"),
        pytest.param("caller=main.go:42", ["caller", "=", "main.go", ":", PARAM], id="caller"),
        pytest.param('msg="a b"', ["msg", "=", '"', "a", "b", '"'], id="quoted"),
        pytest.param("v2 http2", ["v2", "http2"], id="words-with-digits-kept"),
    ],
)
def test_tokenize(line: str, tokens: list[str]) -> None:
    assert tokenize(line)[0] == tokens


def test_separators_rebuild_the_line() -> None:
    tokens, separators = tokenize("  GET /a  200")
    assert "".join(s + t for s, t in zip(separators, tokens, strict=True)) == "  GET /a  <_>"


def _mine(lines: list[str], config: DrainConfig | None = None) -> list[tuple[str, int]]:
    miner = DrainMiner(config)
    for index, line in enumerate(lines):
        miner.train(line, bucket=index % 2)
    return sorted((c.pattern, c.size) for c in miner.clusters())


def test_three_templates_give_three_patterns() -> None:
    lines = []
    for i in range(20):
        lines.append(f"login succeeded for user {1000 + i} from 10.1.2.{i}")
        lines.append(f"GET /api/items/{i} returned 200 in {i * 7}ms")
        if i % 2:
            lines.append(f"cache miss for key {i:08x}a")
    assert _mine(lines) == [
        ("GET /api/items/<_> returned <_> in <_>", 20),
        ("cache miss for key <_>", 10),
        ("login succeeded for user <_> from <_>", 20),
    ]


def test_differing_tokens_past_the_tree_become_wildcards() -> None:
    # Tokens routed by the prefix tree must be equal; the last one never is routed.
    lines = [f"job finished with state {state}" for state in ("ok", "failed", "ok")]
    assert _mine(lines) == [("job finished with state <_>", 3)]
    shallow = DrainConfig(depth=4)
    lines = [f"job finished with state {state} now" for state in ("ok", "failed", "ok")]
    assert _mine(lines, shallow) == [("job finished with state <_> now", 3)]


def test_dissimilar_lines_stay_apart() -> None:
    assert len(_mine(["alpha beta gamma delta", "alpha one two three"])) == 2


def test_counts_per_bucket() -> None:
    miner = DrainMiner()
    for bucket in (0, 0, 10, 30):
        miner.train("worker pool drained queue", bucket)
    (cluster,) = miner.clusters()
    assert dict(cluster.counts) == {0: 2, 10: 1, 30: 1}


def test_short_and_long_lines_are_skipped() -> None:
    miner = DrainMiner(DrainConfig(max_line_length=50))
    assert miner.train("too short", 0) is None
    assert miner.train("x " * 40, 0) is None
    assert miner.clusters() == []


def test_adjacent_wildcards_collapse() -> None:
    lines = ['key (one) is "a"', 'key "two" is "b"']
    patterns = [p for p, _ in _mine(lines)]
    assert patterns == ["key <_>is <_>"] or all("<_><_>" not in p for p in patterns)


def test_all_wildcard_pattern_is_empty() -> None:
    miner = DrainMiner()
    miner.train("1 2 3 4", 0)
    assert [c.pattern for c in miner.clusters()] == [""]


def test_json_lines_mine_their_message() -> None:
    lines = [f'{{"level":"info","msg":"request {i} served from cache"}}' for i in range(3)]
    assert _mine(lines) == [("request <_> served from cache", 3)]


def test_least_recently_used_cluster_is_evicted() -> None:
    miner = DrainMiner(DrainConfig(max_clusters=2))
    for word in ("alpha", "bravo", "alpha", "charlie"):
        miner.train(f"{word} event was recorded", 0)
    assert [c.pattern for c in miner.clusters()] == [
        "alpha event was recorded",
        "charlie event was recorded",
    ]


def test_max_children_routes_new_tokens_to_wildcard_branch() -> None:
    miner = DrainMiner(DrainConfig(max_children=3))
    for word in ("aa", "bb", "cc", "dd", "ee"):
        miner.train(f"user {word} signed out", 0)
    patterns = sorted(c.pattern for c in miner.clusters())
    assert "user <_> signed out" in patterns
    assert len(patterns) == 3


def test_tokenize_is_linear_in_trailing_whitespace() -> None:
    """A long run of trailing blanks once cost time quadratic in its length."""
    started = time.perf_counter()
    tokens, _ = tokenize("a" + " " * 256 * 1024)
    assert tokens == ["a"]
    assert time.perf_counter() - started < 1.0
