"""Ingest throughput of a real server: MB of log lines per server CPU-second, wall MB/s,
peak RSS and bytes on disk, for JSON and protobuf+snappy pushes of a fixed corpus.

Baseline, measured in the same run on the same corpus: the bare minimum work in-process
(msgspec decode of the JSON bodies + one pyarrow Parquet write of the rows), so the report
says how much the service costs over its two unavoidable steps.

    python -m benchmarks.ingest --mb 300
"""

from __future__ import annotations

import argparse
import json
import os
import tempfile
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import httpx
import msgspec
import pyarrow as pa
import pyarrow.parquet as pq

from benchmarks.corpus import Batch, batches
from tests.e2e.clients import json_body, protobuf_body
from tests.e2e.server import DISCOVERY, Server

START_NS = 1_764_000_000_000_000_000
CLOCK_TICKS = os.sysconf("SC_CLK_TCK")


def _cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / CLOCK_TICKS


def _status_kb(pid: int, key: str) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith(key + ":"):
            return int(line.split()[1])
    return 0


def _peak_rss_sampler(pid: int, stop: threading.Event, peak: list[int]) -> None:
    while not stop.wait(0.05):
        try:
            peak[0] = max(peak[0], _status_kb(pid, "VmRSS"))
        except OSError:
            return


def _encode(corpus: list[Batch], encoding: str) -> list[bytes]:
    encode = json_body if encoding == "json" else protobuf_body
    return [encode(batch.streams) for batch in corpus]  # type: ignore[arg-type]


def run_server(corpus: list[Batch], encoding: str, clients: int) -> dict[str, Any]:
    """Push the corpus to a fresh server; measure its CPU, memory and disk."""
    bodies = _encode(corpus, encoding)
    line_bytes = sum(b.line_bytes for b in corpus)
    content_type = "application/json" if encoding == "json" else "application/x-protobuf"
    with tempfile.TemporaryDirectory() as tmp:
        # The service's default configuration, with the discovery the test config turns off.
        server = Server(Path(tmp), {"limits_config": DISCOVERY}).start()
        assert server.process is not None
        pid = server.process.pid
        cpu_before = _cpu_seconds(pid)
        stop, peak = threading.Event(), [0]
        sampler = threading.Thread(target=_peak_rss_sampler, args=(pid, stop, peak))
        sampler.start()
        started = time.perf_counter()
        with httpx.Client(
            base_url=server.url,
            timeout=120,
            headers={"X-Scope-OrgID": "bench", "Content-Type": content_type},
        ) as c:

            def send(body: bytes) -> None:
                response = c.post("/svc/api/v1/push", content=body)
                assert response.status_code == 204, response.text

            with ThreadPoolExecutor(clients) as pool:
                list(pool.map(send, bodies))
            # Writing the head to Parquet is part of ingesting: count it.
            assert c.post("/flush").status_code < 300
        wall = time.perf_counter() - started
        cpu = _cpu_seconds(pid) - cpu_before
        stop.set()
        sampler.join()
        server.stop()
        lake = Path(tmp) / "data" / "lake"
        disk = sum(p.stat().st_size for p in lake.rglob("*.parquet"))
    mb = line_bytes / 1e6
    return {
        "encoding": encoding,
        "line_mb": round(mb, 1),
        "body_mb": round(sum(map(len, bodies)) / 1e6, 1),
        "server_cpu_s": round(cpu, 2),
        "mb_per_cpu_s": round(mb / cpu, 1),
        "wall_mb_per_s": round(mb / wall, 1),
        "peak_rss_mb": round(peak[0] / 1024, 1),
        "disk_bytes_per_gb_ingested": round(disk / line_bytes * 1e9),
        "compression_ratio": round(line_bytes / disk, 2),
    }


class _Entry(msgspec.Struct, array_like=True):
    ts: str
    line: str


class _Stream(msgspec.Struct):
    stream: dict[str, str]
    values: list[_Entry]


class _Push(msgspec.Struct):
    streams: list[_Stream]


def run_baseline(corpus: list[Batch]) -> dict[str, Any]:
    """Decode every JSON body with msgspec and write all rows to one Parquet file."""
    bodies = _encode(corpus, "json")
    decoder = msgspec.json.Decoder(_Push)
    line_bytes = sum(b.line_bytes for b in corpus)
    started = time.process_time()
    ts: list[int] = []
    lines: list[str] = []
    for body in bodies:
        for stream in decoder.decode(body).streams:
            ts += [int(e.ts) for e in stream.values]
            lines += [e.line for e in stream.values]
    table = pa.table({"ts": pa.array(ts, pa.int64()), "line": pa.array(lines, pa.string())})
    with tempfile.TemporaryDirectory() as tmp:
        pq.write_table(table, Path(tmp) / "x.parquet", compression="zstd")
    cpu = time.process_time() - started
    return {"mb_per_cpu_s": round(line_bytes / 1e6 / cpu, 1), "cpu_s": round(cpu, 2)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--mb", type=float, default=300, help="MB of log lines to push")
    parser.add_argument("--clients", type=int, default=2, help="concurrent pushers")
    parser.add_argument("--encoding", choices=["json", "protobuf", "both"], default="both")
    parser.add_argument("--out", type=Path, default=Path("benchmarks/out/ingest.json"))
    args = parser.parse_args()
    corpus = list(batches(int(args.mb * 1e6), start_ns=START_NS))
    report: dict[str, Any] = {"baseline_msgspec_plus_parquet": run_baseline(corpus)}
    encodings = ["json", "protobuf"] if args.encoding == "both" else [args.encoding]
    for encoding in encodings:
        result = run_server(corpus, encoding, args.clients)
        result["ratio_to_baseline"] = round(
            report["baseline_msgspec_plus_parquet"]["mb_per_cpu_s"] / result["mb_per_cpu_s"], 2
        )
        report[encoding] = result
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(report, indent=2))
    print(json.dumps(report, indent=2))


if __name__ == "__main__":
    main()
