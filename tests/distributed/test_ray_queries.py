"""Queries on Ray answer as single-node svc does, Ray listens on loopback only, a timed-out
query stops its Ray work, and no Ray process outlives the service.

One real server runs with ``querier.execution: ray`` (a local Ray with two actors) in a
network namespace that has only ``lo`` (Ray 2.60 binds beyond its node address), served on
a Unix socket. Its tenant ``t`` runs queries split by groups of files (two, one per actor,
merged), ``s`` split by 10 minutes; an in-process single-node app holds the same data. The
corpus and queries are the split-equivalence suite's: three bands flushed to files, the
rest in memory.
"""

from __future__ import annotations

import contextlib
import os
import re
import signal
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from svc.distributed.netns import loopback_only, namespace_of, namespace_processes
from tests.conftest import UNSPLIT
from tests.distributed.test_file_groups import BANDS, FLOAT_SUMS, _tenant_u
from tests.e2e.app import InProcessApp
from tests.e2e.clients import push
from tests.e2e.server import Server, merge
from tests.e2e.test_split_equivalence import (
    LOG_QUERIES,
    METRIC_QUERIES,
    MINUTE,
    SPAN,
    SPLIT,
    START,
    WINDOW,
    _corpus,
    _values_by_step,
)

RAY = {"querier": {"execution": "ray", "ray": {"workers": 2}}}
MULTI_TENANT = {"querier": {"multi_tenant_queries_enabled": True}}
SLOW_TIMEOUT = 1.0
OVERRIDES = {
    "s": SPLIT["limits_config"],
    "slow": {"query_timeout": f"{SLOW_TIMEOUT}s"},
}


@pytest.fixture(scope="module")
def ray_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    root = tmp_path_factory.mktemp("ray")
    runtime = root / "runtime.yaml"
    runtime.write_text(yaml.safe_dump({"overrides": OVERRIDES}))
    extra = {"runtime_config": {"file": str(runtime), "period": "1h"}}
    srv = Server(
        root,
        merge(merge(merge(RAY, UNSPLIT), MULTI_TENANT), extra),
        unix_socket=root / "svc.sock",
        launcher=loopback_only(),
    )
    srv.start(wait=False)
    assert srv.process is not None
    namespace = _own_namespace(srv.process.pid)
    try:
        srv.wait_ready(timeout=120)
        yield srv
    finally:
        if srv.process is not None:
            srv.stop()
        left = _outliving(namespace)
        for pid in left:
            with contextlib.suppress(OSError):
                os.kill(pid, signal.SIGKILL)
        assert not left, f"processes outlived the service: {left}"


def _own_namespace(pid: int) -> str:
    """The network namespace ``pid`` enters (once ``unshare`` has made it)."""
    host = namespace_of(os.getpid())
    deadline = time.monotonic() + 10
    while (namespace := namespace_of(pid)) == host and time.monotonic() < deadline:
        time.sleep(0.01)
    assert namespace is not None and namespace != host
    return namespace


def _outliving(namespace: str, wait: float = 10.0) -> list[int]:
    """The namespace's processes still alive after ``wait`` seconds."""
    deadline = time.monotonic() + wait
    while (left := namespace_processes(namespace)) and time.monotonic() < deadline:
        time.sleep(0.1)
    return left


@pytest.fixture(scope="module")
def single(tmp_path_factory: pytest.TempPathFactory) -> Iterator[InProcessApp]:
    app = InProcessApp(tmp_path_factory.mktemp("single"), merge(UNSPLIT, MULTI_TENANT)).start()
    yield app
    app.stop()


@pytest.fixture(scope="module")
def loaded(ray_server: Server, single: InProcessApp) -> tuple[Server, InProcessApp]:
    """Both deployments with the corpus: three bands flushed to files, the rest in memory;
    tenant ``u`` holds its ``api`` and ``web`` streams (``_tenant_u``)."""
    corpus = _corpus()
    for low, high in zip([0, *BANDS], [*BANDS, 2 * START], strict=True):
        band = [(labels, [e for e in entries if low <= e[0] < high]) for labels, entries in corpus]
        clients = [single.client("t"), *(ray_server.client(t) for t in ("t", "s", "slow"))]
        for client in clients:
            with client:
                assert push(client, band).status_code == 204
        for client in (single.client("u"), ray_server.client("u")):
            with client:
                assert push(client, _tenant_u(band)).status_code == 204
        if high != 2 * START:
            for client in (single.client(), ray_server.client()):
                with client:
                    assert client.post("/flush").status_code == 204
    return ray_server, single


def _answer(client_of: Any, tenant: str, path: str, params: dict[str, Any]) -> Any:
    with client_of(tenant) as client:
        response = client.get(path, params=params)
    assert response.status_code == 200, response.text
    body = response.json()
    body["data"].pop("stats", None)
    return body


def test_a_metric_query_is_split_by_files_on_ray(loaded: tuple[Server, InProcessApp]) -> None:
    """Tenant ``t``'s metric queries run as two groups of files (``shards`` in the stats)."""
    srv, single = loaded
    params = {**WINDOW, "query": METRIC_QUERIES[1], "step": "60"}
    with srv.client("t") as client:
        response = client.get("/loki/api/v1/query_range", params=params)
    assert response.status_code == 200, response.text
    body = response.json()
    assert body["data"]["stats"]["summary"]["shards"] == RAY["querier"]["ray"]["workers"]
    body["data"].pop("stats")
    assert body == _answer(single.client, "t", "/loki/api/v1/query_range", params)


def test_a_two_tenant_query_is_split_by_files_on_ray(
    loaded: tuple[Server, InProcessApp],
) -> None:
    """``t|u`` runs as two groups of files across both tenants, answering as single-node."""
    srv, single = loaded
    query = 'sum by (__tenant_id__, level) (rate({app=~".+"} |= "status=500" [10m]))'
    params = {**WINDOW, "query": query, "step": "60"}
    with srv.client("t|u") as client:
        response = client.get("/loki/api/v1/query_range", params=params)
    assert response.status_code == 200, response.text
    body = response.json()
    assert body["data"]["stats"]["summary"]["shards"] == RAY["querier"]["ray"]["workers"]
    body["data"].pop("stats")
    assert body == _answer(single.client, "t|u", "/loki/api/v1/query_range", params)
    assert {s["metric"]["__tenant_id__"] for s in body["data"]["result"]} == {"t", "u"}


def _answers(
    loaded: tuple[Server, InProcessApp], path: str, params: dict[str, Any]
) -> tuple[Any, Any, Any]:
    """Single-node, on Ray split by files, on Ray split by time."""
    srv, single = loaded
    return (
        _answer(single.client, "t", path, params),
        _answer(srv.client, "t", path, params),
        _answer(srv.client, "s", path, params),
    )


@pytest.mark.parametrize(("query", "params"), LOG_QUERIES, ids=range(len(LOG_QUERIES)))
def test_log_queries(
    loaded: tuple[Server, InProcessApp], query: str, params: dict[str, str]
) -> None:
    expected, by_files, split = _answers(
        loaded, "/loki/api/v1/query_range", {**WINDOW, "query": query, **params}
    )
    assert expected["data"]["result"], "the query must find something"
    assert by_files == expected
    assert split == expected


@pytest.mark.parametrize("step", ["60", "45m"])
@pytest.mark.parametrize("query", METRIC_QUERIES, ids=range(len(METRIC_QUERIES)))
def test_metric_range_queries(loaded: tuple[Server, InProcessApp], query: str, step: str) -> None:
    arguments = {**WINDOW, "query": query, "step": step}
    expected, by_files, split = _answers(loaded, "/loki/api/v1/query_range", arguments)
    if query.startswith("topk"):  # ties are broken arbitrarily: compare values per step
        assert _values_by_step(by_files) == _values_by_step(expected)
        assert _values_by_step(split) == _values_by_step(expected)
    else:
        assert by_files == expected
        assert split == expected


@pytest.mark.parametrize("query", FLOAT_SUMS[::2], ids=range(0, len(FLOAT_SUMS), 2))
def test_sums_of_fractional_values(loaded: tuple[Server, InProcessApp], query: str) -> None:
    """Added per group of files on the actors, then merged: the same to the bit."""
    arguments = {**WINDOW, "query": query, "step": "60"}
    expected, by_files, split = _answers(loaded, "/loki/api/v1/query_range", arguments)
    assert expected["data"]["result"]
    assert by_files == expected
    assert split == expected


@pytest.mark.parametrize("at", [START + 100 * MINUTE, START + SPAN - 10 * MINUTE])
@pytest.mark.parametrize("query", METRIC_QUERIES, ids=range(len(METRIC_QUERIES)))
def test_metric_instant_queries(loaded: tuple[Server, InProcessApp], query: str, at: int) -> None:
    expected, by_files, split = _answers(
        loaded, "/loki/api/v1/query", {"query": query, "time": str(at)}
    )
    if query.startswith("topk"):  # ties are broken arbitrarily: compare the values chosen
        assert _instant_values(by_files) == _instant_values(expected)
        assert _instant_values(split) == _instant_values(expected)
    else:
        assert by_files == expected
        assert split == expected


def _instant_values(answer: Any) -> list[str]:
    return sorted(sample["value"][1] for sample in answer["data"]["result"])


HEAVY = (
    'sum by (app) (quantile_over_time(0.5, {app=~".+"} | logfmt | unwrap duration(latency) [6h])'
    ' by (app)) + sum by (app) (quantile_over_time(0.9, {app=~".+"} | logfmt | unwrap '
    "duration(latency) [6h]) by (app))"
)
"""A query of several seconds on this corpus (each entry reaches every step of a 2 s grid)."""


def test_a_timed_out_query_stops_its_ray_work(loaded: tuple[Server, InProcessApp]) -> None:
    srv, _ = loaded
    assert srv.process is not None
    namespace = namespace_of(srv.process.pid)
    assert namespace is not None
    workers = _statement_workers(namespace)
    assert len(workers) == RAY["querier"]["ray"]["workers"]
    before = _cpu_seconds(workers)
    started = time.monotonic()
    with srv.client("slow") as client:
        response = client.get(
            "/loki/api/v1/query_range", params={**WINDOW, "query": HEAVY, "step": "2"}
        )
    answered = time.monotonic() - started
    assert response.status_code == 504, response.text
    assert answered < SLOW_TIMEOUT + 2
    at_timeout = _cpu_seconds(workers)
    assert at_timeout - before > 0.2, "the query's work ran on the Ray actors"
    time.sleep(1.5)
    # Uncancelled, the statement would keep an actor busy for seconds more.
    assert _cpu_seconds(workers) - at_timeout < 0.3
    with srv.client("t") as client:  # the actors still answer
        response = client.get(
            "/loki/api/v1/query",
            params={"query": 'count_over_time({app="db"}[5m])', "time": str(START + SPAN)},
        )
    assert response.status_code == 200, response.text
    assert response.json()["data"]["result"]


def _statement_workers(namespace: str) -> list[int]:
    return [
        pid
        for pid in namespace_processes(namespace)
        if Path(f"/proc/{pid}/comm").read_text().startswith("ray::StatementW")
    ]


def _cpu_seconds(pids: list[int]) -> float:
    """User and system CPU time of the processes."""
    ticks = os.sysconf("SC_CLK_TCK")
    total = 0
    for pid in pids:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        total += int(fields[11]) + int(fields[12])
    return total / ticks


def test_ray_listens_on_loopback_only(loaded: tuple[Server, InProcessApp]) -> None:
    """Every socket Ray (and the service) listens on is in the service's own namespace, on
    127.0.0.1; none is in the machine's namespace."""
    srv, _ = loaded
    assert srv.process is not None
    namespace = namespace_of(srv.process.pid)
    assert namespace is not None
    ours = set(namespace_processes(namespace))
    names = {Path(f"/proc/{pid}/comm").read_text().strip() for pid in ours}
    assert {"gcs_server", "raylet"} <= names, names
    host = subprocess.run(["ss", "-ltnpH"], capture_output=True, text=True, check=True).stdout
    host_pids = {int(pid) for pid in re.findall(r"pid=(\d+)", host)}
    assert not host_pids & ours, host
    inside = subprocess.run(
        ["nsenter", "-t", str(srv.process.pid), "-n", "ss", "-ltnH"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    addresses = [line.split()[3] for line in inside.splitlines()]
    assert len(addresses) >= 4, inside  # GCS, raylet, the actors, ...
    loopback = re.compile(r"^(127\.\d+\.\d+\.\d+|\[::ffff:127\.\d+\.\d+\.\d+\]|\[::1\]):\d+$")
    assert all(loopback.match(address) for address in addresses), inside
