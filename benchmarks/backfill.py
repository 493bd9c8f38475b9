"""Backfill throughput: MB of log lines per CPU-second of ``svc backfill`` (read, parse,
sort, write Parquet, register) and its peak RSS, on the ingest corpus written as JSON
lines and as plain text; next to the push path's figure (a real server, JSON pushes,
flushed), measured in the same run on the same corpus. Then a server exports the whole
backfilled corpus as Parquet (``GET /svc/api/v1/export``): its CPU and peak RSS.

    python -m benchmarks.backfill --mb 300
"""

from __future__ import annotations

import argparse
import contextlib
import json
import resource
import subprocess
import sys
import tempfile
import threading
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import httpx

from benchmarks.corpus import Batch, batches
from benchmarks.ingest import (
    START_NS,
    _cpu_seconds,
    _peak_rss_sampler,
    _status_kb,
    run_server,
)
from tests.e2e.server import Server

LABELS = ("app", "env", "pod", "format")


def write_inputs(corpus: list[Batch], directory: Path) -> tuple[Path, Path]:
    """The corpus as JSON lines (time and label fields, the line as ``msg``) and as plain
    text (an RFC 3339 time, then the line)."""
    jsonl = directory / "corpus.jsonl"
    text = directory / "corpus.log"
    encode = json.JSONEncoder(ensure_ascii=False).encode
    with jsonl.open("w") as j, text.open("w") as t:
        for batch in corpus:
            for labels, entries in batch.streams:
                for ts, line in entries:
                    j.write(encode({"ts": ts, **labels, "msg": line}) + "\n")
                    stamp = datetime.fromtimestamp(ts // 1_000_000_000, UTC)
                    t.write(f"{stamp:%Y-%m-%dT%H:%M:%S}.{ts % 1_000_000_000:09d}Z {line}\n")
    return jsonl, text


def run_backfill(source: Path, line_bytes: int, root: Path, *flags: str) -> dict[str, Any]:
    """One ``svc backfill`` process into ``root/data``: its CPU and peak RSS."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    children_cpu_before = before.ru_utime + before.ru_stime
    command = [sys.executable, "-m", "svc", "backfill", f"-common.path-prefix={root}/data"]
    started = time.perf_counter()
    process = subprocess.Popen(
        [*command, "-tenant=bench", *flags, str(source)],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
    )
    # ru_maxrss would carry this (corpus-holding) parent's size over the fork: sample
    # the child's own high-water mark instead.
    peak = 0
    while process.poll() is None:
        with contextlib.suppress(OSError):
            peak = max(peak, _status_kb(process.pid, "VmHWM"))
        time.sleep(0.02)
    status, usage = process.returncode, resource.getrusage(resource.RUSAGE_CHILDREN)
    wall = time.perf_counter() - started
    summary = process.stdout.read().decode() if process.stdout else ""
    if process.stdout:
        process.stdout.close()
    assert status == 0, summary
    disk = sum(p.stat().st_size for p in Path(root, "data", "lake").rglob("*.parquet"))
    cpu = usage.ru_utime + usage.ru_stime - children_cpu_before
    mb = line_bytes / 1e6
    return {
        "input_mb": round(source.stat().st_size / 1e6, 1),
        "cpu_s": round(cpu, 2),
        "mb_per_cpu_s": round(mb / cpu, 1),
        "wall_mb_per_s": round(mb / wall, 1),
        "peak_rss_mb": round(peak / 1024, 1),
        "disk_mb": round(disk / 1e6, 1),
        "summary": summary.strip().splitlines(),
    }


def _wait_idle(pid: int, timeout: float = 300) -> None:
    """Until the process has used less than a fiftieth of a core for three seconds (its
    background work, running at a lower priority, may get little CPU at a time)."""
    deadline = time.monotonic() + timeout
    quiet = 0
    while quiet < 3 and time.monotonic() < deadline:
        before = _cpu_seconds(pid)
        time.sleep(1)
        quiet = quiet + 1 if _cpu_seconds(pid) - before < 0.02 else 0


def run_export(root: Path, line_bytes: int, start_ns: int, end_ns: int) -> dict[str, Any]:
    """A server on ``root/data`` exports the whole corpus as Parquet: its CPU and memory."""
    server = Server(root).start()
    assert server.process is not None
    pid = server.process.pid
    _wait_idle(pid)  # the skipping indexes of the backfilled files are built at start
    stop, peak = threading.Event(), [0]
    sampler = threading.Thread(target=_peak_rss_sampler, args=(pid, stop, peak))
    sampler.start()
    cpu_before = _cpu_seconds(pid)
    started = time.perf_counter()
    received = 0
    params = {"query": '{job="bench"}', "start": str(start_ns), "end": str(end_ns)}
    headers = {"X-Scope-OrgID": "bench", "Accept": "application/vnd.columnar.parquet"}
    with httpx.stream(
        "GET", server.url + "/svc/api/v1/export", params=params, headers=headers, timeout=600
    ) as response:
        assert response.status_code == 200, response.read()
        for chunk in response.iter_bytes():
            received += len(chunk)
    wall = time.perf_counter() - started
    cpu = _cpu_seconds(pid) - cpu_before
    stop.set()
    sampler.join()
    server.stop()
    mb = line_bytes / 1e6
    return {
        "parquet_mb": round(received / 1e6, 1),
        "server_cpu_s": round(cpu, 2),
        "mb_per_cpu_s": round(mb / cpu, 1),
        "wall_mb_per_s": round(mb / wall, 1),
        "peak_rss_mb": round(peak[0] / 1024, 1),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--mb", type=float, default=300, help="MB of log lines")
    parser.add_argument("--out", type=Path, default=Path("benchmarks/out/backfill.json"))
    parser.add_argument("--skip-push", action="store_true", help="leave out the push run")
    args = parser.parse_args()
    corpus = list(batches(int(args.mb * 1e6), start_ns=START_NS))
    line_bytes = sum(b.line_bytes for b in corpus)
    report: dict[str, Any] = {"line_mb": round(line_bytes / 1e6, 1)}
    with tempfile.TemporaryDirectory() as tmp:
        jsonl, text = write_inputs(corpus, Path(tmp))
        fields = f"-label-fields={','.join(LABELS)}"
        report["backfill_jsonl"] = run_backfill(jsonl, line_bytes, Path(tmp, "j"), fields)
        labels = '-labels={job="bench"}'
        report["backfill_text"] = run_backfill(text, line_bytes, Path(tmp, "t"), labels)
        # The whole corpus (its entries are 1 ms apart from START_NS) out again.
        end_ns = START_NS + 86_400 * 1_000_000_000
        report["export_parquet"] = run_export(Path(tmp, "t"), line_bytes, START_NS, end_ns)
    if not args.skip_push:
        push = run_server(corpus, "json", 2)
        report["push_json"] = push
        for name in ("backfill_jsonl", "backfill_text"):
            report[name]["ratio_to_push"] = round(
                report[name]["mb_per_cpu_s"] / push["mb_per_cpu_s"], 2
            )
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(report, indent=2))
    print(json.dumps(report, indent=2))


if __name__ == "__main__":
    main()
