"""The compactor through real traffic: physical deletion proved on the bytes under the data
directory, retention with overlapping stream rules, and compaction that changes no answer."""

from __future__ import annotations

import json
import logging
import re
import time
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import httpx
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from tests.e2e.app import InProcessApp
from tests.e2e.clients import push
from tests.e2e.waiting import wait_for

SECOND = 1_000_000_000
HOUR = 3_600 * SECOND
FAST = {
    "retention_enabled": True,
    "delete_request_store": "filesystem",
    "delete_request_cancel_period": "0s",
    "delete_request_grace_period": "0s",
    "retention_delete_delay": "0s",
    "compaction_interval": "200ms",
    "apply_retention_interval": "200ms",
}


def _stored_text(root: Path) -> dict[Path, str]:
    """Every file under ``root`` as text: Parquet files decoded (their string columns),
    every other file as its raw bytes."""
    found = {}
    for path in root.rglob("*"):
        if not path.is_file():
            continue
        if path.suffix == ".parquet":
            try:
                table = pq.read_table(path)
            except (OSError, pa.ArrowException):
                found[path] = path.read_bytes().decode("latin-1")  # damaged: the raw bytes
                continue
            found[path] = "\n".join(str(value) for value in table.to_pylist())
        else:
            found[path] = path.read_bytes().decode("latin-1")
    return found


class _Records(logging.Handler):
    """Messages logged by the in-process server (its root handler is its own)."""

    def __init__(self) -> None:
        super().__init__(logging.INFO)
        self.messages: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.messages.append(record.getMessage())


def _lines(client: httpx.Client, query: str, start: int, end: int) -> list[str]:
    body = client.get(
        "/loki/api/v1/query_range",
        params={"query": query, "start": str(start), "end": str(end), "limit": "5000"},
    ).json()
    return [line for s in body["data"]["result"] for _, line in s["values"]]


# physical deletion -------------------------------------------------------------------------


def test_deleted_text_leaves_every_file_of_the_data_directory(
    make_app: Callable[..., InProcessApp],
) -> None:
    app = make_app({"compactor": FAST})
    now = time.time_ns()
    t0 = now - 2 * HOUR
    secrets = [uuid.uuid4().hex for _ in range(6)]
    keeps = [uuid.uuid4().hex for _ in range(6)]

    def entries(part: int) -> list[tuple[int, str]]:
        found = []
        for i in range(3):
            k = part * 3 + i
            found.append((t0 + k * SECOND, f"secret-line {secrets[k]}"))
            found.append((t0 + k * SECOND + 1, f"kept-line {keeps[k]}"))
        return found

    with app.client("t") as client:
        assert push(client, [({"app": "a"}, entries(0))]).status_code == 204
        assert client.post("/flush").status_code == 204  # one half in a file
        assert push(client, [({"app": "a"}, entries(1))]).status_code == 204  # one in memory
        # Copies kept for inspection: a quarantined file of that day, a damaged WAL segment.
        data = app.data_dir
        lake_file = next((data / "lake").rglob("*.parquet"))
        quarantined = data / "quarantine" / lake_file.relative_to(data / "lake")
        quarantined.parent.mkdir(parents=True)
        quarantined.write_bytes(lake_file.read_bytes()[:200])
        corrupt = data / "wal" / "corrupt" / "0000000000000001.wal"
        corrupt.parent.mkdir(parents=True, exist_ok=True)
        corrupt.write_bytes(b"\x00damaged" + f"secret-line {secrets[0]}".encode())
        response = client.post(
            "/loki/api/v1/delete",
            params={"query": '{app="a"} |= "secret-line"', "start": str(t0 // SECOND - 60)},
        )
        assert response.status_code == 204
        wait_for(lambda: client.get("/loki/api/v1/delete").json()[0]["status"] == "processed")
        lines = _lines(client, '{app="a"}', t0 - SECOND, now)
        assert sorted(lines) == sorted(f"kept-line {k}" for k in keeps)
        metrics = client.get("/metrics").text
    assert 'svc_compactor_deleted_lines{user="t"} 6.0' in metrics
    assert 'svc_compactor_delete_requests_processed_total{user="t"} 1.0' in metrics
    # Replaced files leave once no query reads them: the compactor's next tick.
    wait_for(lambda: not any(s in t for t in _stored_text(app.data_dir).values() for s in secrets))
    stored = _stored_text(app.data_dir)
    assert not quarantined.exists() and not corrupt.exists()
    lake = "".join(text for p, text in stored.items() if p.suffix == ".parquet")
    assert all(k in lake for k in keeps)  # the kept lines are in files, not only memory


def test_pipeline_deletes_are_applied_to_the_files(make_app: Callable[..., InProcessApp]) -> None:
    app = make_app({"compactor": FAST})
    t0 = time.time_ns() - HOUR
    users = [json.dumps({"user": "bob" if i % 2 else "ann", "n": i}) for i in range(10)]
    with app.client("t") as client:
        push(client, [({"app": "a"}, [(t0 + i, line) for i, line in enumerate(users)])])
        client.post(
            "/loki/api/v1/delete",
            params={"query": '{app="a"} | json | user="bob"', "start": str(t0 // SECOND - 1)},
        )
        wait_for(lambda: client.get("/loki/api/v1/delete").json()[0]["status"] == "processed")
        assert sorted(_lines(client, '{app="a"}', t0 - SECOND, time.time_ns())) == sorted(
            users[::2]
        )
    # Replaced files leave once no query reads them: the compactor's next tick. (The
    # catalog keeps the request's own text, so the check is on the deleted lines.)
    wait_for(
        lambda: not any(u in t for t in _stored_text(app.data_dir).values() for u in users[1::2])
    )
    lake = "".join(_stored_text(app.data_dir / "lake").values())
    assert all(u in lake for u in users[::2])


def test_whole_stream_deletes_forget_the_stream(make_app: Callable[..., InProcessApp]) -> None:
    app = make_app({"compactor": FAST})
    t0 = time.time_ns() - HOUR
    window = {"start": str(t0 - SECOND), "end": str(time.time_ns())}
    with app.client("t") as client:
        push(client, [({"app": "a"}, [(t0, "a line")]), ({"app": "gone"}, [(t0, "b line")])])
        client.post("/flush")
        client.post(
            "/loki/api/v1/delete", params={"query": '{app="gone"}', "start": str(t0 // SECOND - 1)}
        )
        wait_for(lambda: client.get("/loki/api/v1/delete").json()[0]["status"] == "processed")
        assert client.get("/loki/api/v1/label/app/values", params=window).json()["data"] == ["a"]
    app.restart()  # from the catalog too
    with app.client("t") as client:
        assert client.get("/loki/api/v1/label/app/values", params=window).json()["data"] == ["a"]


# retention ---------------------------------------------------------------------------------


RULES = [
    {"selector": '{app="x"}', "priority": 1, "period": "24h"},
    {"selector": '{app="x", env="dev"}', "priority": 2, "period": "48h"},
    {"selector": '{env="dev"}', "priority": 2, "period": "72h"},  # same priority, longer
    {"selector": '{app="z"}', "priority": 1, "period": "24h"},
]


@pytest.fixture
def retention_log() -> Iterator[_Records]:
    """The retention pass's log messages (the in-process server leaves logging as pytest
    set it, so the logger is opened to INFO here)."""
    records = _Records()
    logger = logging.getLogger("svc.compactor.retention_pass")
    level = logger.level
    logger.addHandler(records)
    logger.setLevel(logging.INFO)
    yield records
    logger.removeHandler(records)
    logger.setLevel(level)


def test_retention_with_overlapping_stream_rules(
    make_app: Callable[..., InProcessApp], retention_log: _Records
) -> None:
    app = make_app(
        {
            "compactor": {**FAST, "compaction_interval": "1h", "apply_retention_interval": "1h"},
            "limits_config": {
                "reject_old_samples": False,
                "retention_period": "0s",
                "retention_stream": RULES,
            },
            "overrides": {"v": {"retention_period": "24h", "retention_stream": []}},
        }
    )
    now = time.time_ns()
    prod, dev, other, z = (
        {"app": "x", "env": "prod"},
        {"app": "x", "env": "dev"},
        {"app": "y"},
        {"app": "z"},
    )
    with app.client("t") as client:
        # One file per push: expiry is decided per stream and file. Each stream's entries
        # come oldest first: one far behind its stream's newest is refused (out of order).
        push(client, [(prod, [(now - 40 * HOUR, "prod older")]), (z, [(now - 30 * HOUR, "z old")])])
        client.post("/flush")
        push(client, [(prod, [(now - 30 * HOUR, "prod old")]), (dev, [(now - 50 * HOUR, "dev old")]),
                      (other, [(now - 100 * HOUR, "other old")])])  # fmt: skip
        client.post("/flush")
        push(client, [(prod, [(now - HOUR, "prod new")]), (dev, [(now - 30 * HOUR, "dev new")])])
        client.post("/flush")
    with app.client("v") as client:
        push(client, [(dev, [(now - 30 * HOUR, "v dev old")]), (dev, [(now - HOUR, "v dev new")])])
        client.post("/flush")
    app.overrides["compactor"] = FAST  # passes from now on
    app.restart()
    with app.client("t") as client:
        wait_for(lambda: "prod older" not in _lines(client, '{app=~".+"}', now - 200 * HOUR, now))
        lines = sorted(_lines(client, '{app=~".+"}', now - 200 * HOUR, now))
        assert lines == ["dev new", "other old", "prod new"]
        window = {"start": str(now - 200 * HOUR), "end": str(now)}
        assert client.get("/loki/api/v1/label/app/values", params=window).json()["data"] == [
            "x",
            "y",
        ]
        metrics = client.get("/metrics").text
    with app.client("v") as client:
        assert _lines(client, '{app=~".+"}', now - 200 * HOUR, now) == ["v dev new"]
    assert re.search(r'svc_compactor_retention_removed_entries_total\{user="t"\} 4.0', metrics)
    # Every pass logs its totals, also the ones that find nothing more to remove.
    wait_for(lambda: "entries_removed=0 " in "\n".join(retention_log.messages))
    totals = [m for m in retention_log.messages if m.startswith("retention pass done:")]
    removed = [int(re.findall(r"entries_removed=(\d+)", m)[0]) for m in totals]
    assert sum(removed) == 5  # 4 entries of tenant t, 1 of tenant v
    files = re.search(r'svc_compactor_retention_removed_files_total\{user="t"\} (\S+)', metrics)
    # Flushes cut files per (UTC) day: the first flush's two entries, then the second's two
    # removed ones, share a file when they fall on one day (at some hours of the day they do).
    days = [
        len({(now - hours * HOUR) // (24 * HOUR) for hours in pair})
        for pair in ((40, 30), (30, 50))
    ]
    assert files is not None and float(files.group(1)) >= sum(days)


def test_delete_requests_beyond_retention_need_no_work(
    make_app: Callable[..., InProcessApp],
) -> None:
    app = make_app(
        {
            "compactor": FAST,
            "limits_config": {"reject_old_samples": False, "retention_period": "24h"},
        }
    )
    old = time.time_ns() // SECOND - 10 * 86_400
    with app.client("t") as client:
        client.post(
            "/loki/api/v1/delete",
            params={"query": '{a="b"}', "start": str(old), "end": str(old + 60)},
        )
        wait_for(lambda: client.get("/loki/api/v1/delete").json()[0]["status"] == "processed")
        assert 'svc_compactor_jobs_total{kind="delete"' not in client.get("/metrics").text


# compaction --------------------------------------------------------------------------------


DAY_START = 1_700_006_400 * SECOND  # 2023-11-15 00:00 UTC, a day long past
QUERIES = [
    '{app=~".+"}',
    '{app="api"} |= "error"',
    '{app="web"} | json | status >= 500',
    '{app=~"api|db"} | logfmt | level="warn" | line_format "{{.msg}}"',
    'sum by (app) (count_over_time({app=~".+"}[5m]))',
    'sum(rate({app="api"} |= "timeout" [10m]))',
    'topk(2, sum by (pod) (bytes_over_time({app=~".+"}[15m])))',
    'quantile_over_time(0.9, {app="web"} | json | unwrap took [30m]) by (pod)',
    'count_over_time({app="db"} | logfmt | level="error" [1h])',
]


def _corpus() -> list[tuple[dict[str, str], list[tuple[int, str]]]]:
    streams = []
    for number, app_name in enumerate(("api", "web", "db")):
        for pod in range(3):
            # Streams differ in line length, so no two tie in topk (ties are ordered
            # arbitrarily, with or without compaction).
            padding = "p" * (5 * pod + 17 * number)
            entries = []
            for i in range(400):
                ts = DAY_START + (i * 97 + pod * 13) * SECOND
                level = ("info", "warn", "error")[(i + pod) % 3]
                if app_name == "web":
                    line = json.dumps(
                        {"status": 200 + (i % 4) * 100, "took": i % 50, "n": i, "pad": padding}
                    )
                else:
                    outcome = "timeout" if i % 7 == 0 else "ok"
                    line = f'level={level} msg="{app_name} {i}" took={i % 40}ms {outcome} {padding}'
                entries.append((ts, line))
            streams.append(({"app": app_name, "pod": f"{app_name}-{pod}"}, entries))
    return streams


def _answers(client: httpx.Client) -> list[Any]:
    window = {"start": str(DAY_START - SECOND), "end": str(DAY_START + 12 * HOUR)}
    answers: list[Any] = []
    for query in QUERIES:
        for direction in ("backward", "forward"):
            body = client.get(
                "/loki/api/v1/query_range",
                params={
                    "query": query,
                    "limit": "2000",
                    "step": "600",
                    "direction": direction,
                    **window,
                },
            ).json()
            answers.append((query, direction, body["data"]["result"]))
            assert body["status"] == "success"
    answers.append(
        client.get("/loki/api/v1/series", params={"match[]": '{app=~".+"}', **window}).json()
    )
    answers.append(client.get("/loki/api/v1/labels", params=window).json())
    stats = client.get("/loki/api/v1/index/stats", params={"query": '{app=~".+"}', **window}).json()
    answers.append({k: v for k, v in stats.items() if k != "chunks"})
    answers.append(
        client.get(
            "/loki/api/v1/index/volume_range",
            params={"query": '{app=~".+"}', "step": "3600", **window},
        ).json()["data"]
    )
    return answers


def _files(app: InProcessApp) -> list[str]:
    return sorted(p.name for p in (app.data_dir / "lake").rglob("*.parquet"))


def test_compaction_changes_no_answer(make_app: Callable[..., InProcessApp]) -> None:
    app = make_app({"compactor": {"compaction_interval": "1h"}})  # no pass while filling
    with app.client("t") as client:
        for part in _corpus():
            assert push(client, [part]).status_code == 204
            assert client.post("/flush").status_code == 204
        before = _answers(client)
    assert len(_files(app)) == 9
    app.overrides["compactor"] = {"compaction_interval": "300ms"}
    app.restart()
    wait_for(lambda: len(_files(app)) == 1)
    assert _files(app)[0].startswith("compacted-")
    with app.client("t") as client:
        after = _answers(client)
        metrics = client.get("/metrics").text
    for was, now in zip(before, after, strict=True):
        assert now == was
    assert 'svc_compactor_jobs_total{kind="compaction",outcome="done"} 1.0' in metrics


@pytest.mark.parametrize("target", ["compactor", "backend"])
def test_compactor_targets_run_it(make_app: Callable[..., InProcessApp], target: str) -> None:
    app = make_app(
        {"target": target, "compactor": {"retention_enabled": True, "delete_request_store": "s3"}}
    )
    with app.client("t") as client:
        assert "compactor => Running" in client.get("/services").text
        ring = client.get("/compactor/ring").text
        assert "ACTIVE" in ring and "HEALTHY" in ring
        assert client.get("/loki/api/v1/delete").status_code == 200


def test_other_targets_have_an_empty_compactor_ring(make_app: Callable[..., InProcessApp]) -> None:
    app = make_app({"target": "querier", "common": {"compactor_address": "http://c:3100"},
                    "compactor": {"retention_enabled": True, "delete_request_store": "s3"}})  # fmt: skip
    with app.client("t") as client:
        assert "compactor" not in client.get("/services").text
        assert "The ring is empty." in client.get("/compactor/ring").text
        assert client.get("/loki/api/v1/delete").status_code == 404


def test_catalog_rebuild_keeps_the_delete_requests(make_server: Callable[..., Any]) -> None:
    srv = make_server(
        {"compactor": {"retention_enabled": True, "delete_request_store": "filesystem"}}
    )
    t0 = time.time_ns() - HOUR
    with srv.client("t") as client:
        push(client, [({"app": "a"}, [(t0, "secret one"), (t0 + 1, "kept one")])])
        client.post("/flush")
        assert (
            client.post(
                "/loki/api/v1/delete",
                params={"query": '{app="a"} |= "secret"', "start": str(t0 // SECOND - 1)},
            ).status_code
            == 204
        )
        listed = client.get("/loki/api/v1/delete").json()
    srv.stop()
    done = srv.command("catalog", "rebuild", text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert "delete_requests" in done.stdout
    srv.start()
    with srv.client("t") as client:
        assert client.get("/loki/api/v1/delete").json() == listed
        assert _lines(client, '{app="a"}', t0 - SECOND, time.time_ns()) == ["kept one"]
