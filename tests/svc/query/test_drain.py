"""The Drain miner, one rule of the reference (pkg/pattern/drain/drain.go) per test."""

from __future__ import annotations

import pytest

from svc.query.drain import Drain, DrainConfig
from svc.query.pattern_tokens import PlainTokenizer

MINUTE = 60 * 1_000_000_000


def _miner(**settings: int | float) -> Drain:
    return Drain(PlainTokenizer(3000), DrainConfig(**settings))  # type: ignore[arg-type]


def _mine(lines: list[str], **settings: int | float) -> list[tuple[str, int]]:
    miner = _miner(**settings)
    for index, line in enumerate(lines):
        miner.train(line, index)
    return sorted((miner.pattern(c), len(c.times)) for c in miner.clusters())


def test_token_count_limits() -> None:
    # Fewer than 4 or more than 80 tokens: not mined.
    miner = _miner()
    assert miner.train("a b c", 0) is None
    assert miner.train(" ".join(["w"] * 81), 0) is None
    assert miner.train("a b c d", 0) is not None
    assert miner.train(" ".join(["w"] * 80), 0) is not None


def test_digits_route_to_the_wildcard_branch_and_differences_become_wildcards() -> None:
    # "42" and "43" hold digits: both lines take the <_> child and meet at one leaf,
    # where 3 of 4 tokens agree (>= 0.3); the differing position becomes <_>.
    assert _mine(["user 42 logged in", "user 43 logged in"]) == [("user <_> logged in", 2)]


def test_leading_words_are_assumed_constant() -> None:
    # "bob" and "tom" hold no digit: each gets its own child, so the lines never meet,
    # however similar (Drain's assumption that leading tokens are constants).
    assert _mine(["user bob logged in", "user tom logged in"]) == [
        ("user bob logged in", 1),
        ("user tom logged in", 1),
    ]
    assert _mine(["alpha beta gamma delta", "omega beta gamma delta"]) == [
        ("alpha beta gamma delta", 1),
        ("omega beta gamma delta", 1),
    ]


def test_the_last_token_is_never_routed() -> None:
    # Only the first n-1 tokens pick the path; the last differs freely.
    assert _mine(["job finished with ok", "job finished with failure"]) == [
        ("job finished with <_>", 2)
    ]


def test_similarity_threshold_is_inclusive() -> None:
    # Ten tokens, the nine after "x" hold digits: every line reaches the same leaf.
    # The second line shares 3 of 10 tokens (0.3): it joins. The third shares only "x"
    # with the first template's literal tokens... and 1/10 < 0.3: a new cluster.
    lines = ["x 1 2 3 4 5 6 7 8 9", "x 1 2 0 0 0 0 0 0 0", "x 8 8 8 8 8 8 8 8 8"]
    assert _mine(lines) == [("x 1 2 <_> <_> <_> <_> <_> <_> <_>", 2), ("x 8 8 8 8 8 8 8 8 8", 1)]


def test_ties_go_to_the_template_with_more_wildcards() -> None:
    # Q = "k 1 2 z" and P = "k 3 4 w" share a leaf (digits route to <_>) but not a
    # cluster (1 of 4 tokens alike). "k 5 4 w" joins P: P = "k <_> 4 w". "k 9 2 w"
    # then matches Q on k and 2, P on k and w: equal shares (P's <_> is no match),
    # and P has more wildcards, so P takes it although Q was compared first.
    lines = ["k 1 2 z", "k 3 4 w", "k 5 4 w", "k 9 2 w"]
    assert _mine(lines) == [("k 1 2 z", 1), ("k <_> <_> w", 3)]


def test_a_wildcard_in_the_line_is_no_match_for_a_template_wildcard() -> None:
    # depth 3: no token is routed, all 4-token lines share one leaf. "q <_> x d" agrees
    # with "a <_> c d" on d only, as a template's <_> never counts as alike: 1/4 < 0.3.
    lines = ["a 1 c d", "a 2 c d", "q <_> x d"]
    assert _mine(lines, depth=3) == [("a <_> c d", 2), ("q <_> x d", 1)]


def test_depth_limits_the_routed_tokens() -> None:
    # depth 4 routes one token: "finished" and "failed" no longer split the lines.
    lines = ["job finished ok now", "job failed ok now"]
    assert _mine(lines) == [("job failed ok now", 1), ("job finished ok now", 1)]
    assert _mine(lines, depth=4) == [("job <_> ok now", 2)]
    with pytest.raises(ValueError, match="depth argument must be at least 3"):
        _miner(depth=2)


def test_max_children_gives_the_last_place_to_the_wildcard() -> None:
    # max 3 children: "aa" and "bb" get children; "cc" finds room for one more only,
    # which goes to <_>; "dd" and "ee" then search through <_> and join "cc".
    lines = [f"user {w} signed out" for w in ("aa", "bb", "cc", "dd", "ee")]
    assert _mine(lines, max_children=3) == [
        ("user <_> signed out", 3),
        ("user aa signed out", 1),
        ("user bb signed out", 1),
    ]


def test_with_a_wildcard_child_words_get_children_while_there_is_room() -> None:
    # "1x" holds a digit: it creates the <_> child. "aa" and "bb" do not match the
    # cluster there (1 of 4 alike) and, with room left, get children of their own; "cc"
    # finds the node full and is hung under <_>, where "dd" then joins it.
    lines = ["user 1x signed out"] + [f"user {w} zz yy" for w in ("aa", "bb", "cc", "dd", "aa")]
    assert _mine(lines, max_children=3) == [
        ("user 1x signed out", 1),
        ("user <_> zz yy", 2),
        ("user aa zz yy", 2),
        ("user bb zz yy", 1),
    ]


def test_least_recently_used_cluster_is_evicted() -> None:
    lines = [f"{w} event was recorded" for w in ("alpha", "bravo", "alpha", "charlie")]
    assert _mine(lines, max_clusters=2) == [
        ("alpha event was recorded", 2),
        ("charlie event was recorded", 1),
    ]


def test_hanging_a_cluster_refreshes_its_leaf_neighbours() -> None:
    # X and Y share a leaf; Z does not. Hanging Y at the leaf marks X as used, so when
    # W makes a fourth cluster the oldest is Z, not X.
    lines = ["k 1 2 z", "other 1 2 z", "k 5 6 w", "third 1 2 z"]
    assert _mine(lines, max_clusters=3) == [("k 1 2 z", 1), ("k 5 6 w", 1), ("third 1 2 z", 1)]


def test_comparing_a_line_with_a_cluster_refreshes_it() -> None:
    # After X, Y (same leaf) and Z, X is the oldest. "k 5 6 v" is compared with X and
    # Y and joins Y: X counts as used too, so W's arrival evicts Z.
    lines = ["k 1 2 z", "k 5 6 w", "other 1 2 z", "k 5 6 v", "third 1 2 z"]
    assert _mine(lines, max_clusters=3) == [
        ("k 1 2 z", 1),
        ("k 5 6 <_>", 2),
        ("third 1 2 z", 1),
    ]


def test_too_many_evictions_pause_the_miner_for_ten_minutes() -> None:
    miner = _miner(max_clusters=1)
    assert miner.train("alpha one two three", 0) is not None  # accepted 1, evicted 0
    assert miner.train("bravo one two three", 1) is not None  # accepted 2, evicted 1
    # 1/2 > 0.25: refused, and so is everything for ten minutes of log time.
    assert miner.train("charlie one two three", 2) is None
    assert miner.train("delta one two three", 2 + 5 * MINUTE) is None
    # Then the counts start afresh.
    cluster = miner.train("echo one two three", 2 + 10 * MINUTE)
    assert cluster is not None
    assert [miner.pattern(c) for c in miner.clusters()] == ["echo one two three"]


def test_tokens_opening_with_nul_must_match_exactly() -> None:
    # Same leaf, 3 of 4 alike, but the template's last token is marked: no match.
    assert _mine(["a b c \x00d", "a b c \x00e"]) == [("a b c \x00d", 1), ("a b c \x00e", 1)]
    assert _mine(["a b c d", "a b c e"]) == [("a b c <_>", 2)]


def test_a_template_of_wildcards_keeps_its_spaces() -> None:
    # Only an empty template is dropped. (Joining never turns more than 70% of a
    # template into <_>, since a line must agree on 30% of it; a line of <_> can.)
    assert _mine(["<_> <_> <_> <_>"]) == [("<_> <_> <_> <_>", 1)]


def test_times_are_kept_per_cluster() -> None:
    miner = _miner()
    for ts in (5, 7, 11):
        miner.train("worker pool drained queue", ts)
    (cluster,) = miner.clusters()
    assert cluster.times == [5, 7, 11]
