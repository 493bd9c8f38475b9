"""A fixed, generated log corpus: about 100 streams of logfmt, JSON and access-log lines.

Deterministic for a given seed, so every run of a benchmark pushes the same bytes.
"""

from __future__ import annotations

import json
import random
from collections.abc import Iterator
from dataclasses import dataclass

__all__ = ["STREAMS", "Batch", "batches"]

APPS = ["api", "web", "auth", "billing", "search", "worker", "gateway", "db", "cache", "mailer"]
ENVS = ["prod", "staging"]
FORMATS = ["logfmt", "json", "access"]
LEVELS = ["debug", "info", "info", "info", "warn", "error"]
PATHS = ["/", "/api/v1/users", "/api/v1/orders", "/login", "/static/app.js", "/healthz"]
METHODS = ["GET", "GET", "GET", "POST", "PUT", "DELETE"]
WORDS = [
    "request",
    "served",
    "cache",
    "miss",
    "upstream",
    "timeout",
    "retry",
    "user",
    "order",
    "payment",
    "token",
]


def _streams() -> list[dict[str, str]]:
    streams = []
    for app in APPS:
        for env in ENVS:
            for pod in range(5):
                streams.append(
                    {
                        "app": app,
                        "env": env,
                        "pod": f"{app}-{pod}",
                        "format": FORMATS[(len(streams)) % 3],
                    }
                )
    return streams


STREAMS = _streams()
"""The corpus's 100 label sets."""


@dataclass
class Batch:
    """One push: entries per stream index, with their byte count."""

    streams: list[tuple[dict[str, str], list[tuple[int, str]]]]
    line_bytes: int


def _line(rng: random.Random, fmt: str, ts_ns: int) -> str:
    level = rng.choice(LEVELS)
    status = rng.choice([200, 200, 200, 201, 204, 301, 404, 500, 503])
    took = rng.randint(1, 5000)
    path = rng.choice(PATHS)
    if fmt == "logfmt":
        msg = " ".join(rng.choices(WORDS, k=rng.randint(2, 6)))
        return (
            f"level={level} ts={ts_ns // 1_000_000} caller=handler.go:{rng.randint(10, 999)} "
            f"method={rng.choice(METHODS)} path={path} status={status} duration={took}ms "
            f'user_id={rng.randint(1, 100_000)} msg="{msg}"'
        )
    if fmt == "json":
        return json.dumps(
            {
                "level": level,
                "ts": ts_ns // 1_000_000,
                "msg": " ".join(rng.choices(WORDS, k=rng.randint(2, 6))),
                "status": status,
                "latency_ms": took,
                "path": path,
                "trace_id": f"{rng.getrandbits(64):016x}",
            }
        )
    ip = f"10.{rng.randint(0, 255)}.{rng.randint(0, 255)}.{rng.randint(1, 254)}"
    return (
        f'{ip} - - [25/Nov/2026:10:00:00 +0000] "{rng.choice(METHODS)} {path} HTTP/1.1" '
        f'{status} {rng.randint(100, 50_000)} "-" "Mozilla/5.0 (X11; Linux x86_64)" {took}'
    )


def batches(
    total_bytes: int,
    *,
    batch_bytes: int = 1 << 20,
    start_ns: int,
    step_ns: int = 1_000_000,
    seed: int = 7,
) -> Iterator[Batch]:
    """Batches of about ``batch_bytes`` of lines until ``total_bytes`` have been produced."""
    rng = random.Random(seed)
    ts = start_ns
    produced = 0
    while produced < total_bytes:
        per_stream: dict[int, list[tuple[int, str]]] = {}
        size = 0
        while size < batch_bytes:
            index = rng.randrange(len(STREAMS))
            line = _line(rng, STREAMS[index]["format"], ts)
            per_stream.setdefault(index, []).append((ts, line))
            size += len(line)
            ts += step_ns
        produced += size
        yield Batch([(STREAMS[i], entries) for i, entries in sorted(per_stream.items())], size)
