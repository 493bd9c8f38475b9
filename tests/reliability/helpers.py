"""Helpers of the reliability suite: faults, metrics, and counting what survived."""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable
from typing import Any

import httpx

from tests.e2e.clients import push
from tests.e2e.server import Server, merge

__all__ = [
    "BASE",
    "FAULTS_FILE",
    "WINDOW",
    "assert_once",
    "base_config",
    "line_counts",
    "metric",
    "push_lines",
    "set_faults",
]

BASE = 1_700_000_000_000_000_000
WINDOW = {"start": str(BASE - 10**9), "end": str(BASE + 2 * 86_400 * 10**9)}
FAULTS_FILE = "faults.txt"
_MAX_LINES = 200_000


def base_config(overrides: dict[str, Any] | None = None) -> dict[str, Any]:
    """Config of the suite's servers: large query limits, so one query returns every line."""
    base = {
        "limits_config": {
            "max_entries_limit_per_query": _MAX_LINES,
            "max_query_length": "1000h",
        },
        "ingester": {"flush_check_period": "100ms"},
    }
    return merge(base, overrides or {})


def set_faults(srv: Server, *lines: str) -> None:
    """Arm the faults (lines of ``svc/storage/faults.py``); no lines clears them."""
    (srv.root / FAULTS_FILE).write_text("".join(f"{line}\n" for line in lines))


def metric(srv: Server, name: str) -> float:
    """The value of an unlabelled metric (0 when absent)."""
    text = httpx.get(srv.url + "/metrics", timeout=10).text
    found = re.search(rf"^{re.escape(name)} (\S+)$", text, re.MULTILINE)
    return float(found.group(1)) if found else 0.0


def push_lines(
    client: httpx.Client, lines: list[str], *, app: str = "r", offset: int = 0
) -> httpx.Response:
    """Push ``lines`` as one stream, timestamps ``BASE + offset + i``."""
    entries = [(BASE + offset + i, line) for i, line in enumerate(lines)]
    return push(client, [({"app": app}, entries)])  # type: ignore[list-item]


def line_counts(client: httpx.Client, query: str = '{app=~".+"}') -> Counter[str]:
    """How many times each line is stored."""
    response = client.get(
        "/svc/api/v1/query_range",
        params={"query": query, "limit": str(_MAX_LINES), **WINDOW},
    )
    assert response.status_code == 200, response.text
    found: Counter[str] = Counter()
    for stream in response.json()["data"]["result"]:
        found.update(line for _, line in stream["values"])
    return found


def assert_once(found: Counter[str], acknowledged: Iterable[str]) -> None:
    """Every acknowledged line is stored exactly once, and no line twice."""
    acknowledged = list(acknowledged)
    missing = [line for line in acknowledged if found[line] == 0]
    assert not missing, (
        f"{len(missing)} of {len(acknowledged)} acknowledged lines lost: {missing[:5]}"
    )
    twice = [line for line, count in found.items() if count > 1]
    assert not twice, f"{len(twice)} lines stored more than once: {twice[:5]}"
