"""The reference's configuration key tree (``loki_keys.txt``), for accepting its keys.

A stock Loki configuration must load: every key of the reference's schema is known here,
whether svc uses it or not. The tree comes from the reference's Go sources (see the
generator ``tests/svc/config/regen_loki_keys.py``); each node is a struct (with its Go type
name, used in unknown-key errors), a list or map (with its item), a leaf, ``any`` (free
content) or a secret (with the token the reference prints instead of its value).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import cache
from importlib import resources

__all__ = ["RefNode", "reference_tree"]


@dataclass
class RefNode:
    """One node of the reference's key tree."""

    kind: str
    go_type: str = ""
    children: dict[str, RefNode] = field(default_factory=dict)
    item: RefNode | None = None

    @property
    def is_struct(self) -> bool:
        """A mapping with fixed keys."""
        return self.kind == "struct"

    @property
    def secret_token(self) -> str | None:
        """What the reference prints instead of a set value, for a secret."""
        return self.go_type if self.kind == "secret" else None

    def child(self, key: str) -> RefNode | None:
        """The node of ``key`` under a struct (``*``: an inline map takes any key)."""
        return self.children.get(key) or self.children.get("*")


_TOKEN = re.compile(r"\[\]|\{\}|[^.\[\]{}]+")


def _attach(root: RefNode, path: str, node: RefNode) -> None:
    """Place ``node`` at ``path`` (``a.b``, ``a.b[]`` list item, ``a.b{}`` map value)."""
    *steps, last = _TOKEN.findall(path)
    parent = root
    for step in steps:
        nxt = parent.item if step in ("[]", "{}") else parent.children.get(step)
        if nxt is None:
            raise ValueError(f"key path {path} has no parent")
        parent = nxt
    if last in ("[]", "{}"):
        parent.item = node
    else:
        parent.children[last] = node


@cache
def reference_tree() -> RefNode:
    """The whole tree, read once."""
    text = resources.files(__package__).joinpath("loki_keys.txt").read_text()
    root = RefNode("struct")
    for line in text.splitlines():
        if not line or line.startswith("#"):
            continue
        path, kind, *rest = line.split("\t")
        node = RefNode(kind, rest[0] if rest else "")
        if path == ".":
            root = node
        else:
            _attach(root, path, node)
    return root
