"""Drain-style log template mining: lines in, patterns with ``<_>`` wildcards out.

The miner follows the published Drain algorithm (He et al., ICWS 2017): lines are split
into tokens, routed through a fixed-depth prefix tree (first by token count, then by
their leading tokens, tokens holding digits taking the wildcard branch), and at the leaf
joined to the most similar cluster when at least ``sim_threshold`` of the tokens agree;
the cluster's template then turns every disagreeing position into ``<_>``. Clusters are
kept in least-recently-used order and the oldest is forgotten past ``max_clusters``.

Before tokenising, values that are variable by nature (timestamps, UUIDs, IP addresses,
hex literals) are masked, and tokens that are numbers (with an optional unit such as
``12ms`` or ``5%``) or long hex strings become ``<_>`` at once, so a template needs no
second line to generalise them.

A pattern uses the syntax of the LogQL pattern filter: literal text with ``<_>`` for a
wildcard, never two wildcards in a row, so ``{app="x"} |> "<pattern>"`` finds the lines.

>>> miner = DrainMiner()
>>> for n, user in enumerate(["ann", "bob", "cy"]):
...     _ = miner.train(f"login after {n + 1}ms by user {user}", bucket=0)
>>> [(c.pattern, c.size) for c in miner.clusters()]
[('login after <_> by user <_>', 3)]

Leading tokens are assumed constant (they pick the tree branch), so lines that differ
early without digits stay apart until ``max_children`` siblings exist, as in Drain.
"""

from __future__ import annotations

import json
import re
from collections import Counter, OrderedDict
from dataclasses import dataclass, field

__all__ = ["PARAM", "Cluster", "DrainConfig", "DrainMiner", "tokenize"]

PARAM = "<_>"
_MASK = "\x00"
# Alternatives are tried left to right at each position: longer shapes first.
_MASKED = re.compile(
    "|".join(
        [
            r"\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}:\d{2}(?:[.,]\d+)?(?:Z|[+-]\d{2}:?\d{2})?",
            r"\b[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}\b",
            r"\b\d{1,2}:\d{2}:\d{2}(?:[.,]\d+)?\b",
            r"\b\d{1,3}(?:\.\d{1,3}){3}(?::\d{1,5})?\b",
            r"\b(?:[0-9a-fA-F]{1,4}:){2,7}[0-9a-fA-F]{1,4}\b",
            r"\b0[xX][0-9a-fA-F]+\b",
        ]
    )
)
_DELIMITERS = '=:,;()[]{}"/' + _MASK
_TOKENS = re.compile(
    r"(\s*)([^\s" + re.escape(_DELIMITERS) + r"]+|[" + re.escape(_DELIMITERS) + "])"
)
_VARIABLE_WORD = re.compile(
    r"[-+]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][-+]?\d+)?[A-Za-zµ%]{0,3}|(?=[A-Za-z]*\d)[0-9a-fA-F]{12,}"
)
_JSON_MESSAGE_FIELDS = ("log", "message", "msg", "msg_", "_msg", "content")


@dataclass(frozen=True)
class DrainConfig:
    """Tuning of the miner (defaults as the reference's pattern ingester uses them)."""

    depth: int = 30
    """Prefix tree depth including the root and token-count layers."""
    sim_threshold: float = 0.3
    """Share of equal tokens a line needs to join a cluster."""
    max_children: int = 15
    """Children per tree node before new tokens share the wildcard branch."""
    max_clusters: int = 300
    """Clusters kept; the least recently matched one is dropped beyond this."""
    min_tokens: int = 4
    """Lines with fewer tokens are not mined."""
    max_line_length: int = 3000
    """Longer lines are not mined (0: no limit)."""


@dataclass
class Cluster:
    """One template and the number of lines it matched per time bucket."""

    id: int
    tokens: list[str]
    separators: list[str]
    counts: Counter[int] = field(default_factory=Counter)

    @property
    def size(self) -> int:
        """Lines matched."""
        return sum(self.counts.values())

    @property
    def pattern(self) -> str:
        """The template as pattern text; ``""`` when it holds no literal text."""
        text = "".join(sep + token for sep, token in zip(self.separators, self.tokens, strict=True))
        while PARAM + PARAM in text:
            text = text.replace(PARAM + PARAM, PARAM)
        return "" if not text.replace(PARAM, "").strip() else text


@dataclass
class _Node:
    children: dict[str, _Node] = field(default_factory=dict)
    cluster_ids: list[int] = field(default_factory=list)


def tokenize(line: str) -> tuple[list[str], list[str]]:
    """Tokens of a line and the whitespace before each, variable values already ``<_>``.

    >>> tokenize('GET /items/42 took=12ms from 10.0.0.1:80')[0]
    ['GET', '/', 'items', '/', '<_>', 'took', '=', '<_>', 'from', '<_>']
    """
    tokens: list[str] = []
    separators: list[str] = []
    # Trailing whitespace ends no token; left in, each of its positions would rescan the
    # rest of the run before failing (quadratic in the run's length).
    for match in _TOKENS.finditer(_MASKED.sub(_MASK, line).rstrip()):
        sep, token = match.groups()
        if token == _MASK or _VARIABLE_WORD.fullmatch(token):
            token = PARAM
        tokens.append(token)
        separators.append(sep)
    return tokens, separators


def _message_of(line: str) -> str:
    """The message field of a JSON object line (as escaped in the line), else the line."""
    if not line.startswith("{"):
        return line
    try:
        document = json.loads(line)
    except ValueError:
        return line
    if isinstance(document, dict):
        for name in _JSON_MESSAGE_FIELDS:
            value = document.get(name)
            if isinstance(value, str):
                return json.dumps(value, ensure_ascii=False)[1:-1]
    return line


class DrainMiner:
    """Clusters lines into templates; feed it with ``train``, read ``clusters``."""

    def __init__(self, config: DrainConfig | None = None) -> None:
        self.config = config or DrainConfig()
        self._root = _Node()
        self._clusters: OrderedDict[int, Cluster] = OrderedDict()
        self._next_id = 0

    def train(self, line: str, bucket: int) -> Cluster | None:
        """Add one line seen in time ``bucket``; the cluster it joined, None if skipped."""
        limit = self.config.max_line_length
        if limit and len(line) > limit:
            return None
        tokens, separators = tokenize(_message_of(line))
        if len(tokens) < self.config.min_tokens:
            return None
        cluster = self._search(tokens)
        if cluster is None:
            self._next_id += 1
            cluster = Cluster(self._next_id, tokens, separators)
            self._clusters[cluster.id] = cluster
            self._insert(cluster)
            if len(self._clusters) > self.config.max_clusters:
                self._clusters.popitem(last=False)
        else:
            cluster.tokens = [
                t if t == u else PARAM for t, u in zip(cluster.tokens, tokens, strict=True)
            ]
            self._clusters.move_to_end(cluster.id)
        cluster.counts[bucket] += 1
        return cluster

    def clusters(self) -> list[Cluster]:
        """Live clusters, least recently matched first."""
        return list(self._clusters.values())

    @property
    def _max_node_depth(self) -> int:
        return self.config.depth - 2

    def _search(self, tokens: list[str]) -> Cluster | None:
        node = self._root.children.get(str(len(tokens)))
        if node is None:
            return None
        for depth, token in enumerate(tokens, start=1):
            if depth >= self._max_node_depth or depth == len(tokens):
                break
            child = node.children.get(token) or node.children.get(PARAM)
            if child is None:
                return None
            node = child
        return self._best_match(node.cluster_ids, tokens)

    def _best_match(self, ids: list[int], tokens: list[str]) -> Cluster | None:
        best: Cluster | None = None
        best_key = (-1.0, -1)
        for cluster_id in ids:
            cluster = self._clusters.get(cluster_id)
            if cluster is None:
                continue
            same = sum(1 for t, u in zip(cluster.tokens, tokens, strict=True) if t == u)
            params = cluster.tokens.count(PARAM)
            key = (same / len(tokens), params)
            if key > best_key:
                best, best_key = cluster, key
        return best if best is not None and best_key[0] >= self.config.sim_threshold else None

    def _insert(self, cluster: Cluster) -> None:
        tokens = cluster.tokens
        node = self._root.children.setdefault(str(len(tokens)), _Node())
        for depth, token in enumerate(tokens, start=1):
            if depth >= self._max_node_depth or depth == len(tokens):
                break
            node = self._child_for(node, token)
        node.cluster_ids = [i for i in node.cluster_ids if i in self._clusters]
        node.cluster_ids.append(cluster.id)

    def _child_for(self, node: _Node, token: str) -> _Node:
        """The child a new template token descends to, creating it while there is room."""
        children = node.children
        if token in children:
            return children[token]
        if any(c.isdigit() for c in token):
            return children.setdefault(PARAM, _Node())
        room = self.config.max_children - (0 if PARAM in children else 1)
        if len(children) < room:
            return children.setdefault(token, _Node())
        return children.setdefault(PARAM, _Node())
