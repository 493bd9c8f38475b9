"""``svc export``: every entry of a log query, from a running server's
``GET /svc/api/v1/export``, into a Parquet, JSON lines or CSV file (or a Hive-partitioned
directory of one file per day).

The answer is written as it arrives (bounded memory whatever its size), with progress on
stderr. It asks a server (``-url``) rather than reading the data directory: the server
owns it, and only the server knows the entries still in memory.
"""

from __future__ import annotations

import csv
import json
import sys
import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import BinaryIO

__all__ = ["USAGE", "export_command"]

USAGE = """usage: svc export -query='<log query>' -from=TIME -to=TIME -o=PATH [flags]
Writes every entry of a log query (no entry limit) from a running server to a file.
TIME: RFC 3339, Unix seconds (float allowed) or nanoseconds.
  -url=URL            the server (default http://localhost:3100)
  -tenant=ID          tenant (X-Scope-OrgID); omit for a server without auth
  -query=LOGQL        a log query, e.g. '{app="web"} |= "error"'
  -from=TIME -to=TIME the range [from, to)
  -o=PATH             output file (directory with -split-by=day)
  -format=F           parquet|jsonl|csv (default: from -o's extension, else parquet)
  -split-by=day       one file per UTC day, under PATH/day=YYYY-MM-DD/ (Hive layout)
"""

_FLAGS = {"url", "tenant", "query", "from", "to", "o", "format", "split-by"}
_PARQUET = "application/vnd.columnar.parquet"
_DAY_NS = 86_400 * 1_000_000_000
_CHUNK = 1 << 20


def _parse(argv: Sequence[str]) -> dict[str, str]:
    flags: dict[str, str] = {}
    args = list(argv)
    while args:
        arg = args.pop(0)
        name, equals, value = arg.lstrip("-").partition("=")
        if not arg.startswith("-") or name not in _FLAGS:
            if name in ("h", "help"):
                raise SystemExit(USAGE)
            raise ValueError(f"flag provided but not defined: {arg}")
        if not equals:
            if not args:
                raise ValueError(f"flag needs an argument: -{name}")
            value = args.pop(0)
        flags[name] = value
    for required in ("query", "from", "to", "o"):
        if required not in flags:
            raise ValueError(f"-{required} is required")
    return flags


def _format(flags: dict[str, str]) -> str:
    fmt = flags.get("format") or {".jsonl": "jsonl", ".ndjson": "jsonl", ".csv": "csv"}.get(
        Path(flags["o"]).suffix.lower(), "parquet"
    )
    if fmt not in ("parquet", "jsonl", "csv"):
        raise ValueError(f"unknown -format {fmt!r}: parquet, jsonl or csv")
    return fmt


class _Progress:
    def __init__(self) -> None:
        self.started = time.monotonic()
        self.received = 0
        self._last = 0.0
        self.terminal = sys.stderr.isatty()

    def add(self, count: int) -> None:
        self.received += count
        now = time.monotonic()
        if now - self._last < (0.2 if self.terminal else 10.0):
            return
        self._last = now
        rate = self.received / max(now - self.started, 1e-9) / 1e6
        text = f"export: {self.received / 1e6:.1f} MB received, {rate:.1f} MB/s"
        sys.stderr.write(f"\r{text}\x1b[K" if self.terminal else text + "\n")
        sys.stderr.flush()

    def finish(self) -> None:
        if self.terminal:
            sys.stderr.write("\n")


def _request(flags: dict[str, str], start: str, end: str, fmt: str) -> urllib.request.Request:
    query = urllib.parse.urlencode({"query": flags["query"], "start": start, "end": end})
    headers = {"Accept": _PARQUET if fmt == "parquet" else "application/x-ndjson"}
    if flags.get("tenant"):
        headers["X-Scope-OrgID"] = flags["tenant"]
    url = flags.get("url", "http://localhost:3100").rstrip("/")
    return urllib.request.Request(f"{url}/svc/api/v1/export?{query}", headers=headers)


def _download(request: urllib.request.Request, out: Path, fmt: str, progress: _Progress) -> int:
    """Write one export answer to ``out``; returns the bytes received."""
    out.parent.mkdir(parents=True, exist_ok=True)
    received = 0
    with urllib.request.urlopen(request) as response, out.open("wb") as file:
        if fmt == "csv":
            return _to_csv(response, file, progress)
        while chunk := response.read(_CHUNK):
            file.write(chunk)
            received += len(chunk)
            progress.add(len(chunk))
    return received


def _to_csv(response: BinaryIO, file: BinaryIO, progress: _Progress) -> int:
    """JSON lines in, CSV out (``timestamp`` ns, ``labels`` as JSON, ``line``)."""
    received = 0
    with open(file.fileno(), "w", newline="", closefd=False) as text:
        writer = csv.writer(text)
        writer.writerow(["timestamp", "labels", "line"])
        for raw in response:
            received += len(raw)
            progress.add(len(raw))
            entry = json.loads(raw)
            writer.writerow([entry["timestamp"], json.dumps(entry["labels"]), entry["line"]])
    return received


def _days(start_ns: int, end_ns: int) -> list[tuple[str, str, str]]:
    """(day name, start, end) of each UTC day the range touches."""
    days = []
    day = start_ns // _DAY_NS
    while day * _DAY_NS < end_ns:
        low, high = max(day * _DAY_NS, start_ns), min((day + 1) * _DAY_NS, end_ns)
        name = datetime.fromtimestamp(day * 86_400, UTC).strftime("%Y-%m-%d")
        days.append((name, str(low), str(high)))
        day += 1
    return days


def export_command(argv: Sequence[str]) -> int:
    """Run ``svc export``; returns the exit code (2: usage, 1: the server refused)."""
    from svc.timestamps import parse_timestamp_ns

    try:
        flags = _parse(argv)
        fmt = _format(flags)
        start_ns = parse_timestamp_ns(flags["from"])
        end_ns = parse_timestamp_ns(flags["to"])
        if flags.get("split-by", "day") != "day":
            raise ValueError("-split-by takes only day")
    except ValueError as exc:
        print(f"error: {exc}\n{USAGE}", file=sys.stderr)
        return 2
    progress = _Progress()
    out = Path(flags["o"])
    try:
        if "split-by" not in flags:
            _download(_request(flags, flags["from"], flags["to"], fmt), out, fmt, progress)
            written = [out]
        else:
            written = []
            for name, low, high in _days(start_ns, end_ns):
                target = out / f"day={name}" / f"part-0.{fmt}"
                if _download(_request(flags, low, high, fmt), target, fmt, progress) == 0 or (
                    fmt == "parquet" and _empty_parquet(target)
                ):
                    target.unlink()
                    target.parent.rmdir()
                else:
                    written.append(target)
    except urllib.error.HTTPError as exc:
        progress.finish()
        print(f"error: {exc.code} {exc.read().decode(errors='replace')}", file=sys.stderr)
        return 1
    except OSError as exc:
        progress.finish()
        print(f"error: {exc}", file=sys.stderr)
        return 1
    progress.finish()
    seconds = time.monotonic() - progress.started
    print(f"files: {len(written)}\nbytes: {progress.received}\nseconds: {seconds:.2f}")
    return 0


def _empty_parquet(path: Path) -> bool:
    import pyarrow.parquet as pq

    return bool(pq.read_metadata(path).num_rows == 0)
