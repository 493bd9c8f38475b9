"""How much a busy Python thread slows a DuckDB statement of the same process.

DuckDB's Python client takes the interpreter lock between the tasks of a statement (to
check for signals), so a statement waits up to the switch interval (1 ms in the server)
each time another thread of the process is running Python. Thread priorities do not help:
the lock has no notion of them. Reported for a light statement (a filter and a count over
150,000 rows, as a light tenant's query) on a DuckDB table, a registered Arrow table of one
chunk and one of 3,000 chunks (a head of small pushes): the median alone, the median
next to one and two threads running Python (at nice 10, as a lowered tenant's), and the
ratios to alone, all in the same run.

    python -m benchmarks.gil_statements
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import threading
import time
from collections.abc import Callable
from typing import Any

import duckdb
import pyarrow as pa

ROWS = 150_000
QUERY = "SELECT stream_id, count(*) FROM {} WHERE line LIKE '%status=4%' GROUP BY 1"


def _python_work(stop: threading.Event) -> None:
    os.setpriority(os.PRIO_PROCESS, threading.get_native_id(), 10)
    total = 0
    while not stop.is_set():
        total += sum(range(1000))


def _median_ms(run: Callable[[], None], repeat: int) -> float:
    seconds = []
    for _ in range(repeat):
        began = time.perf_counter()
        run()
        seconds.append(time.perf_counter() - began)
    return statistics.median(seconds) * 1000


def run(repeat: int) -> dict[str, Any]:
    sys.setswitchinterval(0.001)  # as the server sets it
    table = pa.table(
        {
            "ts": pa.array(range(ROWS), pa.int64()),
            "stream_id": pa.array([n % 4 for n in range(ROWS)], pa.int64()),
            "line": pa.array([f"level=info status={n % 5} seq={n}" for n in range(ROWS)]),
        }
    )
    chunked = pa.Table.from_batches(table.to_batches(max_chunksize=50))
    db = duckdb.connect(config={"threads": 2})
    db.register("source", table)
    db.execute("CREATE TABLE native AS SELECT * FROM source")

    def registered(arrow: pa.Table) -> Callable[[duckdb.DuckDBPyConnection], str]:
        def source(cursor: duckdb.DuckDBPyConnection) -> str:
            cursor.register("t", arrow)
            return "t"

        return source

    sources: dict[str, Callable[[duckdb.DuckDBPyConnection], str]] = {
        "duckdb table": lambda cursor: "native",
        "arrow, 1 chunk": registered(table),
        "arrow, 3000 chunks": registered(chunked),
    }
    report: dict[str, Any] = {"rows": ROWS, "repeat": repeat}
    for name, source in sources.items():

        def statement(source: Callable[[duckdb.DuckDBPyConnection], str] = source) -> None:
            cursor = db.cursor()
            cursor.execute(QUERY.format(source(cursor))).fetchall()
            cursor.close()

        row: dict[str, float] = {}
        for busy in (0, 1, 2):
            stop = threading.Event()
            threads = [threading.Thread(target=_python_work, args=(stop,)) for _ in range(busy)]
            for thread in threads:
                thread.start()
            row[f"python_threads_{busy}_ms"] = round(_median_ms(statement, repeat), 1)
            stop.set()
            for thread in threads:
                thread.join()
        alone = row["python_threads_0_ms"]
        for busy in (1, 2):
            row[f"ratio_{busy}"] = round(row[f"python_threads_{busy}_ms"] / alone, 2)
        report[name] = row
    return report


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--repeat", type=int, default=60)
    args = parser.parse_args()
    print(json.dumps(run(args.repeat), indent=1))


if __name__ == "__main__":
    main()
