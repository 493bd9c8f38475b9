"""svc as a small cluster on one machine, with plain processes (no Docker):

* PostgreSQL holds the catalog every process shares (``catalog.postgres.dsn``);
* an S3 server holds the Parquet lake (``storage_config.aws``, schema ``object_store: s3``);
* two writers (``-target=write``: distributor and ingester) take pushes, each with its own
  WAL and its own name in the catalog (``ingester.lifecycler.id``);
* one backend (``-target=backend``: compactor, ruler, index gateway, query scheduler);
* two readers (``-target=read``: query frontend and querier) answer queries, their
  statements executed by actors on a Ray head (``querier.execution: ray``).

Everything listens on 127.0.0.1, in a network namespace of its own that has only ``lo``
(the script runs itself there): Ray binds beyond its node address. With ``--keep``, reach
the processes from outside with ``nsenter -t <pid of the script> -n curl ...``.

The script pushes lines to both writers as an agent would (the push API with a tenant
header) and checks that both readers see every line, first while the lines are in the
writers' memory (readers ask the live writers for their unflushed entries), then once the
writers have flushed them into the lake::

    python examples/cluster/run.py           # start, push, query, check, stop
    python examples/cluster/run.py --keep    # ... then keep running until Ctrl-C
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import tempfile
import time
import urllib.parse
import urllib.request
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # run from anywhere

from examples.cluster.services import PostgresServer, RayHead, S3Server, SvcProcess
from svc.distributed.netns import rerun_in_loopback_namespace

TENANT = "team-a"
LINES_PER_WRITER = 20


def _request(url: str, *, data: bytes | None = None, tenant: str | None = TENANT) -> Any:
    headers = {"Content-Type": "application/json"} if data is not None else {}
    if tenant:
        headers["X-Scope-OrgID"] = tenant
    request = urllib.request.Request(url, data=data, headers=headers)
    with urllib.request.urlopen(request, timeout=30) as response:
        body = response.read()
    return json.loads(body) if body and body[:1] == b"{" else body


def push(writer: SvcProcess, name: str, start_ns: int) -> None:
    """Push lines as an agent does: one stream, nanosecond timestamps, JSON body."""
    values = [[str(start_ns + i * 1_000_000), f"{name} line {i}"] for i in range(LINES_PER_WRITER)]
    body = {"streams": [{"stream": {"app": "web", "writer": name}, "values": values}]}
    _request(writer.url + "/loki/api/v1/push", data=json.dumps(body).encode())


def lines_seen(reader: SvcProcess, start_ns: int) -> int:
    """How many lines of the tenant a reader returns."""
    query = urllib.parse.urlencode(
        {"query": '{app="web"}', "start": start_ns - 1, "end": time.time_ns(), "limit": 5000}
    )
    data = _request(f"{reader.url}/loki/api/v1/query_range?{query}")["data"]
    return sum(len(stream["values"]) for stream in data["result"])


def deployment(root: Path, s3: S3Server, dsn: str, ray: RayHead) -> list[SvcProcess]:
    """The svc processes: two writers, a backend and two readers, sharing lake and catalog;
    the readers run their statements on the Ray head, one actor each."""
    shared = {**s3.storage_config(s3.bucket("svc-lake")), "catalog": {"postgres": {"dsn": dsn}}}
    processes = []
    for number in (1, 2):
        name = f"writer-{number}"
        ingester = {"lifecycler": {"id": name}}
        processes.append(
            SvcProcess(root / name, {**shared, "target": "write", "ingester": ingester})
        )
    processes.append(SvcProcess(root / "backend", {**shared, "target": "backend"}))
    querier = {"execution": "ray", "ray": {"address": ray.address, "workers": 1}}
    for number in (1, 2):
        reader = {**shared, "target": "read", "querier": querier}
        processes.append(SvcProcess(root / f"reader-{number}", reader, env=ray.client_env))
    return processes


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--dir", type=Path, help="working directory (default: a temporary one)")
    parser.add_argument("--keep", action="store_true", help="keep running until Ctrl-C")
    args = parser.parse_args()
    rerun_in_loopback_namespace([sys.executable, *sys.argv])
    root = args.dir or Path(tempfile.mkdtemp(prefix="svc-cluster-"))
    s3 = S3Server(root / "s3").start()
    postgres = PostgresServer().start()
    ray = RayHead(root / "ray")
    processes: list[SvcProcess] = []
    try:
        ray.start()
        print(f"ray head: {ray.address}")
        processes = deployment(root, s3, postgres.database("svc"), ray)
        for process in processes:
            process.start(wait=False)
        for process in processes:
            process.wait_ready()
            print(f"{process.root.name}: {process.url} ({process.config['target']})")
        writers = [p for p in processes if p.config["target"] == "write"]
        readers = [p for p in processes if p.config["target"] == "read"]
        start_ns = time.time_ns() - 60_000_000_000
        for writer in writers:
            push(writer, writer.root.name, start_ns)
        expected = LINES_PER_WRITER * len(writers)
        seen = []
        for moment in ("before", "after"):
            if moment == "after":
                for writer in writers:
                    _request(writer.url + "/flush", data=b"", tenant=None)
            for reader in readers:
                seen.append(lines_seen(reader, start_ns))
                print(f"{moment} the flush, {reader.root.name} sees {seen[-1]} of {expected} lines")
        services = _request(readers[0].url + "/services", tenant=None).decode()
        print(
            "reader-1 runs: "
            + ", ".join(line.split(" => ")[0] for line in services.split("\n") if line)
        )
        if args.keep:
            print(f"running under {root}; Ctrl-C stops everything")
            while True:
                time.sleep(3600)
        return 0 if all(count == expected for count in seen) else 1
    except KeyboardInterrupt:
        return 0
    finally:
        for process in reversed(processes):
            process.stop()
        ray.stop()
        postgres.stop()
        s3.stop()
        if args.dir is None:
            shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
