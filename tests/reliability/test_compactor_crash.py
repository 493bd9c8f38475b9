"""``kill -9`` during compaction and delete rewrites: at each crash point of a job (new
files written, swap transaction open, swap committed, old files half removed) and at
random moments. The catalog lists either the old or the new files, never both, never
neither; after a restart every entry is there exactly once and the compactor finishes."""

from __future__ import annotations

import random
import sqlite3
import time
from collections.abc import Callable
from pathlib import Path

import httpx
import pytest

from tests.e2e.server import Server
from tests.e2e.waiting import wait_for
from tests.reliability.helpers import (
    BASE,
    assert_once,
    line_counts,
    push_lines,
    set_faults,
)

COMPACTOR = {
    "compaction_interval": "1h",  # no pass while the test fills the lake
    "retention_enabled": True,
    "delete_request_store": "filesystem",
    "delete_request_cancel_period": "0s",
    "delete_request_grace_period": "0s",
    "retention_delete_delay": "0s",
    "apply_retention_interval": "1h",
}
FILES = 6
LINES = 50


def _listed(srv: Server) -> set[str]:
    """The lake files the catalog lists."""
    db = sqlite3.connect(f"file:{srv.data_dir / 'catalog.sqlite'}?mode=ro", uri=True)
    try:
        return {row[0] for row in db.execute("SELECT path FROM files")}
    finally:
        db.close()


def _on_disk(srv: Server) -> set[str]:
    lake = srv.data_dir / "lake"
    return {str(p.relative_to(lake)) for p in lake.rglob("*.parquet")}


def _fill(srv: Server) -> list[str]:
    """``FILES`` flushed files of one past day; returns the lines."""
    lines = []
    with srv.client("t") as client:
        for n in range(FILES):
            batch = [
                f"file {n} line {i} {'secret' if i % 5 == 0 else 'kept'}" for i in range(LINES)
            ]
            assert push_lines(client, batch, app=f"a{n % 2}", offset=n * 1000).status_code == 204
            assert client.post("/flush").status_code == 204
            lines += batch
    return lines


def _passes_soon(srv: Server) -> None:
    """From the next start on, passes begin half a second after starting."""
    srv.overrides["compactor"] = {
        **srv.overrides["compactor"],
        "compaction_interval": "500ms",
        "apply_retention_interval": "500ms",
    }


def _crash_at(srv: Server, site: str) -> None:
    """Restart with ``site`` armed to SIGKILL the process, and wait for it to die."""
    srv.stop()
    set_faults(srv, f"{site} kill 1")
    _passes_soon(srv)
    srv.start(wait=False)
    assert srv.process is not None
    code = srv.process.wait(60)
    assert code == -9, f"the process exited with {code}:\n{srv.log_path.read_text()[-3000:]}"
    srv.process = None
    set_faults(srv)


def _compacted(srv: Server) -> bool:
    names = [Path(p).name for p in _on_disk(srv)]
    return len(names) == 1 and names[0].startswith("compacted-")


@pytest.mark.parametrize(
    "site",
    ["compactor.written", "compactor.swap", "compactor.swapped", "compactor.removing"],
)
def test_kill_9_during_compaction(faulty_server: Callable[..., Server], site: str) -> None:
    srv = faulty_server({"compactor": COMPACTOR})
    lines = _fill(srv)
    old = _listed(srv)  # read while it runs (the catalog is in WAL mode)
    assert len(old) == FILES
    _crash_at(srv, site)
    listed = _listed(srv)
    compacted = {p for p in listed if Path(p).name.startswith("compacted-")}
    if site in ("compactor.written", "compactor.swap"):
        assert listed == old  # the swap never committed: the new file is garbage
    else:
        assert listed == compacted and len(compacted) == 1  # the new file, alone
    srv.start()
    with srv.client("t") as client:
        wait_for(lambda: _compacted(srv), timeout=30)
        assert_once(line_counts(client), lines)


@pytest.mark.parametrize("site", ["compactor.written", "compactor.swap", "compactor.swapped"])
def test_kill_9_during_a_delete_rewrite(faulty_server: Callable[..., Server], site: str) -> None:
    srv = faulty_server({"compactor": {**COMPACTOR, "compaction_min_files": 100}})
    lines = _fill(srv)
    with srv.client("t") as client:
        response = client.post(
            "/loki/api/v1/delete",
            params={
                "query": '{app="a0"} |= "secret"',
                "start": str(BASE // 10**9 - 60),
                "end": str(BASE // 10**9 + 60),
            },
        )
        assert response.status_code == 204
    _crash_at(srv, site)
    srv.start()
    deleted = {line for n, line in enumerate(lines) if "secret" in line and (n // LINES) % 2 == 0}
    with srv.client("t") as client:
        wait_for(lambda: client.get("/loki/api/v1/delete").json()[0]["status"] == "processed")
        assert_once(line_counts(client), [line for line in lines if line not in deleted])
        assert not deleted & set(line_counts(client))


def test_kill_9_at_random_moments_of_compaction(faulty_server: Callable[..., Server]) -> None:
    rng = random.Random(16)
    srv = faulty_server({"compactor": COMPACTOR})
    lines = _fill(srv)
    _passes_soon(srv)
    for _ in range(4):
        srv.stop()
        srv.start(wait=False)
        time.sleep(rng.uniform(0.3, 3.0))  # during startup or the pass that follows it
        srv.kill()
        assert not (_listed(srv) and _listed(srv) - _on_disk(srv))  # nothing listed is gone
        srv.start()
        with srv.client("t") as client:
            assert_once(line_counts(client), lines)
    wait_for(lambda: _compacted(srv), timeout=30)
    with httpx.Client(base_url=srv.url, headers={"X-Scope-OrgID": "t"}, timeout=30) as client:
        assert_once(line_counts(client), lines)
