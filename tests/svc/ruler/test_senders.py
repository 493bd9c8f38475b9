"""Alertmanager and remote-write requests on the wire, against a local HTTP receiver."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
import snappy

from schemas import remote_write_pb2
from svc.ruler.alerting import Alert, AlertState, OutputSample
from svc.ruler.config import (
    QueueConfig,
    RelabelConfig,
    RemoteWriteClientConfig,
    RemoteWriteConfig,
    RulerConfig,
)
from svc.ruler.notifier import Notifier
from svc.ruler.remote_write import RemoteWriter


@dataclass
class Receiver:
    """Records every request (header names lower-cased); answers with the next queued
    status (then 200)."""

    statuses: list[int] = field(default_factory=list)
    requests: list[tuple[str, dict[str, str], bytes]] = field(default_factory=list)
    url: str = ""

    def wait(self, count: int, timeout: float = 10) -> None:
        deadline = time.monotonic() + timeout
        while len(self.requests) < count:
            assert time.monotonic() < deadline, f"{len(self.requests)} of {count} requests"
            time.sleep(0.01)


@pytest.fixture
def receiver() -> Iterator[Receiver]:
    found = Receiver()

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            body = self.rfile.read(int(self.headers["Content-Length"]))
            found.requests.append(
                (self.path, {k.lower(): v for k, v in self.headers.items()}, body)
            )
            status = found.statuses.pop(0) if found.statuses else 200
            self.send_response(status)
            self.send_header("Content-Length", "0")
            self.end_headers()

        def log_message(self, *args: Any) -> None:
            return None

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    found.url = f"http://127.0.0.1:{server.server_address[1]}"
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield found
    server.shutdown()


def alert(i: int) -> Alert:
    return Alert(
        (("alertname", f"A{i}"),), (), AlertState.FIRING, 0, 1.0, fired_at_ns=1, valid_until_ns=2
    )


def test_alertmanager_requests(receiver: Receiver) -> None:
    outcomes: list[tuple[str, str, int]] = []
    cfg = RulerConfig(alertmanager_url=f"{receiver.url.replace('//', '//u:pw@')}/am")
    notifier = Notifier(cfg, lambda *args: outcomes.append(args))
    receiver.statuses = [500]
    notifier.send("team-a", "vector(1)", [alert(0)])
    receiver.wait(1)
    notifier.send("team-a", "vector(1)", [alert(i) for i in range(1, 301)])
    receiver.wait(3)
    notifier.stop()
    paths = [path for path, _, _ in receiver.requests]
    assert set(paths) == {"/am/api/v2/alerts"}
    headers = receiver.requests[0][1]
    assert headers["x-scope-orgid"] == "team-a"
    assert headers["content-type"] == "application/json"
    assert headers["authorization"] == "Basic dTpwdw=="
    total = sum(count for tenant, outcome, count in outcomes)
    assert total == 301 and ("team-a", "failed", 1) in outcomes
    assert sorted(count for _, outcome, count in outcomes if outcome == "sent") == [44, 256]


def test_alert_queue_drops_the_oldest(receiver: Receiver) -> None:
    outcomes: list[tuple[str, str, int]] = []
    cfg = RulerConfig(alertmanager_url=receiver.url, notification_queue_capacity=3)
    notifier = Notifier(cfg, lambda *args: outcomes.append(args))
    gate = threading.Event()
    post = notifier.post

    def slow_post(tenant: str, batch: list[dict[str, Any]]) -> None:
        gate.wait(5)
        post(tenant, batch)

    notifier.post = slow_post  # type: ignore[method-assign]
    notifier.send("t", "x", [alert(0)])  # taken by the sender, which then waits
    time.sleep(0.2)
    notifier.send("t", "x", [alert(i) for i in range(1, 6)])
    gate.set()
    notifier.stop()
    assert ("t", "dropped", 2) in outcomes
    sent = [a["labels"]["alertname"] for _, _, body in receiver.requests for a in json.loads(body)]
    assert sent == ["A0", "A3", "A4", "A5"]


def sample(i: int) -> OutputSample:
    return OutputSample((("__name__", "m"), ("i", str(i))), 1000 + i, float(i))


def writer_for(tmp_path: Path, client: RemoteWriteClientConfig) -> RemoteWriter:
    cfg = RemoteWriteConfig(enabled=True, clients={"c1": client})
    outcomes: list[tuple[str, str, str, int]] = []
    writer = RemoteWriter(
        cfg,
        tmp_path,
        max_age_s=3600,
        truncate_every_s=3600,
        disabled=lambda t: t == "off",
        observe=lambda *args: outcomes.append(args),
    )
    writer.outcomes = outcomes  # type: ignore[attr-defined]
    return writer


def client_for(receiver: Receiver, **kwargs: Any) -> RemoteWriteClientConfig:
    queue = QueueConfig(
        batch_send_deadline=0.05, min_backoff=0.01, max_backoff=0.05, max_samples_per_send=3
    )
    return RemoteWriteClientConfig(url=receiver.url + "/api/v1/write", queue_config=queue, **kwargs)


def decode(body: bytes) -> list[tuple[list[tuple[str, str]], float, int]]:
    request = remote_write_pb2.WriteRequest.FromString(snappy.decompress(body))
    return [
        ([(lb.name, lb.value) for lb in ts.labels], s.value, s.timestamp)
        for ts in request.timeseries
        for s in ts.samples
    ]


def test_remote_write_wire_format_retries_and_drops(receiver: Receiver, tmp_path: Path) -> None:
    client = client_for(receiver, headers={"x-scope-orgid": "spoofed", "X-Extra": "1"})
    writer = writer_for(tmp_path, client)
    writer.start()
    receiver.statuses = [500, 429, 200, 400]
    assert writer.append("t1", [sample(0), sample(1), sample(2)]) == 3
    receiver.wait(3)
    assert writer.append("t1", [sample(3)]) == 1
    receiver.wait(4)
    assert writer.append("t1", [sample(4)]) == 1
    receiver.wait(5)
    writer.stop()
    path, headers, body = receiver.requests[0]
    assert path == "/api/v1/write"
    assert headers["content-encoding"] == "snappy"
    assert headers["content-type"] == "application/x-protobuf"
    assert headers["x-prometheus-remote-write-version"] == "0.1.0"
    assert headers["x-scope-orgid"] == "t1" and headers["x-extra"] == "1"
    assert "retry-attempt" not in headers
    assert [r[1].get("retry-attempt") for r in receiver.requests[:3]] == [None, "1", "2"]
    assert decode(body) == [
        ([("__name__", "m"), ("i", str(i))], float(i), 1000 + i) for i in range(3)
    ]
    assert all(r[2] == body for r in receiver.requests[:3])  # the same batch, retried
    outcomes = writer.outcomes  # type: ignore[attr-defined]
    assert ("t1", "c1", "sent", 3) in outcomes
    assert ("t1", "c1", "failed", 1) in outcomes  # the 400 drops its batch
    assert decode(receiver.requests[4][2])[0][1] == 4.0
    assert writer.append("off", [sample(9)]) == 0


def test_remote_write_relabels_and_resumes_after_restart(
    receiver: Receiver, tmp_path: Path
) -> None:
    client = client_for(
        receiver,
        write_relabel_configs=[RelabelConfig(source_labels=["i"], regex="1", action="drop")],
    )
    writer = writer_for(tmp_path, client)
    receiver.statuses = [503] * 1000  # down for the whole first run
    writer.start()
    writer.append("t1", [sample(0), sample(1), sample(2)])
    receiver.wait(2)
    writer.stop()
    receiver.statuses = []
    receiver.requests.clear()
    again = writer_for(tmp_path, client)
    again.start()  # picks up the buffered samples of the first run
    receiver.wait(1)
    again.stop()
    assert [labels[1][1] for labels, _, _ in decode(receiver.requests[0][2])] == ["0", "2"]
    assert again.pending() == {("t1", "c1"): 0}


def test_cleaner_removes_idle_buffers_of_tenants_without_rules(
    receiver: Receiver, tmp_path: Path
) -> None:
    writer = writer_for(tmp_path, client_for(receiver))
    writer.start()
    writer.append("gone", [sample(0)])
    writer.append("kept", [sample(0)])
    receiver.wait(2)
    assert writer.clean(3600, set()) == []  # written just now
    assert writer.clean(0, {"kept"}) == ["gone"]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["kept"]
    writer.stop()
