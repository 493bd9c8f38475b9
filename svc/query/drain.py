"""Drain log template mining, with the reference pattern ingester's rules and limits.

Lines are tokenised (``svc.query.pattern_tokens``); lines of fewer than 4 or more than 80
tokens are not mined. A line is routed through a prefix tree: first by its token count,
then by its leading tokens (at most ``depth - 3`` of them, never the last), each taking
the child of the same text or else the ``<_>`` child. At the leaf, the line joins the
live cluster with the largest share of positions holding the same token (a template's
``<_>`` never counts as the same), ties going to the one with more ``<_>``, when that
share is at least ``sim_threshold``; every position where the line differs then becomes
``<_>``. Otherwise the line starts a cluster, which is hung in the tree by its own
tokens: a token holding a digit always takes the ``<_>`` child, and a node creates
children for new tokens until it has ``max_children``, the last place going to ``<_>``.

Clusters are kept in least-recently-used order, and the oldest goes when there are more
than ``max_clusters``; every cluster a search compares the line with counts as used, as
do those a new cluster joins at its leaf. A miner that keeps losing clusters stops for a
while: once more than ``max_eviction_ratio`` of the lines it accepted have cost a
cluster, it refuses lines for ten minutes of log time, then starts counting afresh.

>>> from svc.query.pattern_tokens import PlainTokenizer
>>> miner = Drain(PlainTokenizer(3000))
>>> for n, user in enumerate(["ann", "bob", "cy"]):
...     _ = miner.train(f"login after {n + 1}ms by user {user}", n)
>>> [(miner.pattern(c), len(c.times)) for c in miner.clusters()]
[('login after <_> by user <_>', 3)]
"""

from __future__ import annotations

from collections import OrderedDict
from dataclasses import dataclass
from operator import eq

from svc.query.pattern_tokens import (
    PARAM,
    Tokenizer,
    collapse_params,
    has_number,
    pattern_text,
)

__all__ = ["Cluster", "Drain", "DrainConfig"]

MIN_TOKENS = 4
MAX_TOKENS = 80
BLOCK_NS = 10 * 60 * 1_000_000_000


@dataclass(frozen=True)
class DrainConfig:
    """Tuning of one miner (the reference pattern ingester's defaults)."""

    depth: int = 30
    """Prefix tree depth counting the root and the token-count layer (at least 3)."""
    sim_threshold: float = 0.3
    """Share of equal tokens a line needs to join a cluster."""
    max_children: int = 15
    """Children of a tree node, the ``<_>`` child included."""
    max_clusters: int = 300
    """Clusters kept (0: no limit)."""
    max_eviction_ratio: float = 0.25
    """Share of accepted lines that may cost a cluster before the miner pauses."""


class Cluster:
    """One template: its tokens, how to write them back, and the times of its lines."""

    __slots__ = ("id", "marked", "state", "times", "tokens")

    def __init__(self, cluster_id: int, tokens: list[str], state: object, ts: int) -> None:
        self.id = cluster_id
        self.tokens = tokens
        self.state = state
        self.times = [ts]
        # A token opening with NUL must match exactly (the reference's marked tokens).
        self.marked = any(token[:1] == "\x00" for token in tokens)


class _Node:
    __slots__ = ("children", "cluster_ids")

    def __init__(self) -> None:
        self.children: dict[str | int, _Node] = {}
        self.cluster_ids: list[int] = []


class Drain:
    """One miner: feed lines oldest first with ``train``, read ``clusters``."""

    def __init__(self, tokenizer: Tokenizer, config: DrainConfig | None = None) -> None:
        self.tokenizer = tokenizer
        self.config = config or DrainConfig()
        if self.config.depth < 3:
            raise ValueError("depth argument must be at least 3")
        self._walk = self.config.depth - 3
        self._root = _Node()
        self._clusters: OrderedDict[int, Cluster] = OrderedDict()
        self._next_id = 0
        self._added = 0
        self._evicted = 0
        self._blocked_until: int | None = None

    def clusters(self) -> list[Cluster]:
        """Live clusters, least recently used first."""
        return list(self._clusters.values())

    def pattern(self, cluster: Cluster) -> str:
        """A cluster's template as pattern text (``""``: none)."""
        return pattern_text(collapse_params(self.tokenizer.join(cluster.tokens, cluster.state)))

    def train(self, line: str, ts: int) -> Cluster | None:
        """Mine one line logged at ``ts`` (ns); the cluster it joined, None if skipped."""
        if not self._allow(ts):
            return None
        tokens = self.tokenizer.tokenize(line)
        if tokens is None or not MIN_TOKENS <= len(tokens) <= MAX_TOKENS:
            return None
        cluster = self._search(tokens)
        if cluster is None:
            self._next_id += 1
            cluster = Cluster(self._next_id, tokens, self.tokenizer.state(line), ts)
            self._clusters[cluster.id] = cluster
            limit = self.config.max_clusters
            if limit and len(self._clusters) > limit:
                self._clusters.popitem(last=False)
                self._evicted += 1
            self._insert(cluster)
            return cluster
        template = cluster.tokens
        if template != tokens:
            cluster.tokens = [t if t == u else PARAM for t, u in zip(template, tokens, strict=True)]
        cluster.times.append(ts)
        self._clusters.move_to_end(cluster.id)
        return cluster

    def _allow(self, ts: int) -> bool:
        """The eviction limiter: whether the miner takes a line logged at ``ts``."""
        if self._blocked_until is not None:
            if ts < self._blocked_until:
                return False
            self._added = self._evicted = 0
            self._blocked_until = None
        if self._added and self._evicted / self._added > self.config.max_eviction_ratio:
            self._blocked_until = ts + BLOCK_NS
            return False
        self._added += 1
        return True

    def _search(self, tokens: list[str]) -> Cluster | None:
        node = self._root.children.get(len(tokens))
        if node is None:
            return None
        for token in tokens[: min(len(tokens) - 1, self._walk)]:
            children = node.children
            found = children.get(token) or children.get(PARAM)
            if found is None:
                return None
            node = found
        return self._best_match(node.cluster_ids, tokens)

    def _best_match(self, ids: list[int], tokens: list[str]) -> Cluster | None:
        """The most similar live cluster at a leaf (each one compared counts as used)."""
        best: Cluster | None = None
        best_same, best_params = -1, -1
        line_has_param = PARAM in tokens
        clusters = self._clusters
        for cluster_id in ids:
            cluster = clusters.get(cluster_id)
            if cluster is None:
                continue
            clusters.move_to_end(cluster_id)
            template = cluster.tokens
            if cluster.marked and _marked_mismatch(template, tokens):
                continue
            same = sum(map(eq, template, tokens))
            params = template.count(PARAM)
            if params and line_has_param:
                same -= sum(1 for t, u in zip(template, tokens, strict=True) if t == u == PARAM)
            if same > best_same or (same == best_same and params > best_params):
                best, best_same, best_params = cluster, same, params
        if best is None or best_same / len(tokens) < self.config.sim_threshold:
            return None
        return best

    def _insert(self, cluster: Cluster) -> None:
        tokens = cluster.tokens
        node = self._root.children.get(len(tokens))
        if node is None:
            node = self._root.children[len(tokens)] = _Node()
        limit = self.config.max_children
        for token in tokens[: min(len(tokens) - 1, self._walk)]:
            children = node.children
            child = children.get(token)
            if child is None:
                wildcard = children.get(PARAM)
                if has_number(token):
                    child = wildcard or children.setdefault(PARAM, _Node())
                elif wildcard is not None:
                    if len(children) < limit:
                        child = children[token] = _Node()
                    else:
                        child = wildcard
                elif len(children) + 1 < limit:
                    child = children[token] = _Node()
                else:
                    child = children[PARAM] = _Node()
            node = child
        clusters = self._clusters
        alive = []
        for cluster_id in node.cluster_ids:
            if cluster_id in clusters:
                clusters.move_to_end(cluster_id)
                alive.append(cluster_id)
        alive.append(cluster.id)
        node.cluster_ids = alive


def _marked_mismatch(template: list[str], tokens: list[str]) -> bool:
    return any(t[:1] == "\x00" and t != u for t, u in zip(template, tokens, strict=True))
