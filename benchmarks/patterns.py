"""Pattern mining throughput, as lines per second and as a ratio to same-run baselines.

Generates ``--lines`` lines of each of five formats (an nginx access log, a key=value
ticker, JSON, logfmt and Java stack traces), deterministic for a given seed.

- Miner: one stream per format through ``mine_stream`` (tokenizer, level detection,
  Drain), against the floor of any per-line Python work, splitting every line with the
  plain tokenizer's regex.
- End to end: the same streams pushed into a store (timed within the last hour) and
  flushed to Parquet, then ``query_patterns`` over them, against the plain log query
  that reads the same lines.

    .venv/bin/python -m benchmarks.patterns --lines 60000
"""

from __future__ import annotations

import argparse
import asyncio
import json
import random
import statistics
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from logql_to_sql import Direction, ast, compile_log_query
from svc.config import LimitsConfig, PatternIngesterConfig
from svc.ingest.labels import label_key
from svc.model import PushStream
from svc.query.engine import QueryEngine
from svc.query.pattern_tokens import PlainTokenizer, detect_formats
from svc.query.patterns import Entry, MiningSettings, PatternsRequest, mine_stream, query_patterns
from svc.storage.store import Store, StoreSettings

TENANT = "bench"
_METHODS = ["GET", "GET", "POST", "PUT", "DELETE"]
_PATHS = ["/", "/api/v1/users", "/api/v1/orders", "/login", "/healthz", "/api/v1/items/{}"]
_AGENTS = [
    "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/120.0",
    "curl/8.4.0",
    "Go-http-client/1.1",
    "kube-probe/1.29",
]
_MESSAGES = [
    "request served in {}ms",
    "user {} logged in",
    "cache miss for key k{}",
    "payment {} failed: card declined",
    "retrying upstream call attempt {}",
]


def _nginx(rng: random.Random, i: int) -> str:
    path = rng.choice(_PATHS).format(rng.randint(1, 5000))
    return (
        f"{rng.randint(10, 250)}.{rng.randint(0, 255)}.{rng.randint(0, 255)}.{rng.randint(1, 254)}"
        f' - - [12/Mar/2025:10:{i // 600 % 60:02d}:{i // 10 % 60:02d} +0000] "'
        f'{rng.choice(_METHODS)} {path} HTTP/1.1" {rng.choice([200, 200, 201, 304, 404, 500])} '
        f'{rng.randint(0, 90000)} "-" "{rng.choice(_AGENTS)}"'
    )


def _ticker(rng: random.Random, i: int) -> str:
    symbol = rng.choice(["AAPL", "MSFT", "GOOG", "AMZN"])
    price, volume = rng.uniform(10, 500), rng.randint(1, 9999)
    return f"tick={i} symbol={symbol} price={price:.2f} volume={volume}"


def _json(rng: random.Random, i: int) -> str:
    return json.dumps(
        {
            "ts": f"2025-03-12T10:00:{i % 60:02d}Z",
            "level": rng.choice(["info", "warn", "error"]),
            "msg": rng.choice(_MESSAGES).format(rng.randint(1, 999)),
            "caller": f"server.go:{rng.randint(10, 400)}",
        }
    )


def _logfmt(rng: random.Random, i: int) -> str:
    msg = rng.choice(["flushing chunk", "query done", "compacting table"])
    return (
        f"ts=2025-03-12T10:00:{i % 60:02d}.{rng.randint(0, 999):03d}Z "
        f'level={rng.choice(["info", "debug", "warn"])} msg="{msg}" '
        f"duration={rng.randint(1, 900)}ms user=u{rng.randint(1, 50)} "
        f"traceID={rng.getrandbits(64):016x}"
    )


def _java(rng: random.Random, i: int) -> str:
    kind = i % 4
    if kind == 0:
        return (
            f"2025-03-12 10:00:{i % 60:02d}.{rng.randint(0, 999):03d} ERROR "
            f"[main-{rng.randint(1, 9)}] c.e.OrderService - Failed to process order "
            f"{rng.randint(1, 99999)}"
        )
    if kind == 1:
        return f"java.lang.IllegalStateException: order {rng.randint(1, 99999)} is already closed"
    if kind == 2:
        return f"\tat com.example.OrderService.process(OrderService.java:{rng.randint(10, 500)})"
    return f"\tat com.example.Handler.handle(Handler.java:{rng.randint(10, 500)})"


FORMATS: dict[str, Callable[[random.Random, int], str]] = {
    "nginx": _nginx,
    "ticker": _ticker,
    "json": _json,
    "logfmt": _logfmt,
    "java": _java,
}


def corpus(lines: int, seed: int = 1) -> dict[str, list[str]]:
    """``lines`` lines of each format."""
    rng = random.Random(seed)
    return {name: [make(rng, i) for i in range(lines)] for name, make in FORMATS.items()}


def _median_seconds(run: Callable[[], object], repeat: int) -> float:
    times = []
    for _ in range(repeat):
        started = time.perf_counter()
        run()
        times.append(time.perf_counter() - started)
    return statistics.median(times)


def miner(streams: dict[str, list[str]], repeat: int) -> dict[str, dict[str, float]]:
    """Lines per second of ``mine_stream`` per format, and the ratio to the split floor."""
    settings = MiningSettings.from_config(PatternIngesterConfig(), LimitsConfig())
    splitter = PlainTokenizer(1 << 30)
    results: dict[str, dict[str, float]] = {}
    total = {"lines": 0.0, "mined": 0.0, "floor": 0.0}
    for name, lines in streams.items():
        entries: list[Entry] = [(i * 10_000_000, line, ()) for i, line in enumerate(lines)]
        fmt = detect_formats([lines[0]])[0]

        def mine(entries: list[Entry] = entries, fmt: str = fmt) -> object:
            return mine_stream((), entries, fmt, settings)

        def split(lines: list[str] = lines) -> object:
            return [splitter.tokenize(line) for line in lines]

        mined = _median_seconds(mine, repeat)
        floor = _median_seconds(split, repeat)
        results[name] = {
            "lines": len(lines),
            "lines_per_s": round(len(lines) / mined),
            "ratio_to_split": round(mined / floor, 1),
        }
        total["lines"] += len(lines)
        total["mined"] += mined
        total["floor"] += floor
    results["total"] = {
        "lines": total["lines"],
        "lines_per_s": round(total["lines"] / total["mined"]),
        "ratio_to_split": round(total["mined"] / total["floor"], 1),
    }
    return results


def end_to_end(streams: dict[str, list[str]], repeat: int) -> dict[str, float]:
    """``query_patterns`` over a flushed store against the log query reading its lines."""
    now = time.time_ns()
    start = now - 3_000 * 1_000_000_000
    total = sum(len(v) for v in streams.values())
    with tempfile.TemporaryDirectory() as tmp:
        store = Store(StoreSettings(Path(tmp), 1 << 40, 1e9, 1e9, 256 << 20, 131072))
        store.open()
        pushed = []
        for name, lines in streams.items():
            pairs = (("app", name),)
            step = (now - start) // (len(lines) + 1)
            times = [start + (i + 1) * step for i in range(len(lines))]
            pushed.append(PushStream(pairs, label_key(pairs), times, lines, None))
        asyncio.run(store.push(TENANT, pushed))
        store.flush()
        engine = QueryEngine(store, timeout_seconds=600)
        matchers = (ast.Matcher("app", ast.MatchOp.RE, ".+"),)
        config = PatternIngesterConfig(query_line_limit=total)
        request = PatternsRequest(matchers, start, now, 60_000_000_000)

        def patterns() -> object:
            return query_patterns(engine, (TENANT,), request, config, LimitsConfig(), now)

        def read() -> object:
            plan = compile_log_query(
                ast.LogQuery(selector=ast.StreamSelector(matchers=matchers), stages=()),
                start_ns=start,
                end_ns=now + 10_000_000_000,
                limit=total,
                direction=Direction.BACKWARD,
            )
            return engine.run_log_query(TENANT, plan, start, now).__len__()

        mined = _median_seconds(patterns, repeat)
        floor = _median_seconds(read, repeat)
        store.close(flush=False)
    return {
        "lines": total,
        "seconds": round(mined, 2),
        "lines_per_s": round(total / mined),
        "ratio_to_read": round(mined / floor, 1),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--lines", type=int, default=60_000, help="lines per format")
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    streams = corpus(args.lines)
    report = {"miner": miner(streams, args.repeat), "end_to_end": end_to_end(streams, args.repeat)}
    print(json.dumps(report, indent=2))


if __name__ == "__main__":
    main()
