"""Shared fixtures: a real server per test session, fresh servers on demand, the app in
this process for API-shape tests, and a store."""

from __future__ import annotations

import itertools
import os
import re
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from svc.storage.store import Store
from tests.e2e.app import InProcessApp
from tests.e2e.server import Server
from tests.stores import open_store

_tenants = itertools.count()


@pytest.fixture(scope="session")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    """One service shared by the tests that only need isolation by tenant."""
    srv = Server(tmp_path_factory.mktemp("svc")).start()
    yield srv
    srv.stop()


@pytest.fixture
def tenant(request: pytest.FixtureRequest) -> str:
    """A tenant ID no other test uses."""
    return re.sub(r"[^A-Za-z0-9_-]", "_", f"t{next(_tenants)}-{request.node.name[:40]}")


@pytest.fixture
def make_server(tmp_path: Path) -> Iterator[Callable[..., Server]]:
    """Factory for a private server (restart, kill -9, special configs); stops them after."""
    started: list[Server] = []

    def make(overrides: dict[str, Any] | None = None, *, start: bool = True) -> Server:
        srv = Server(tmp_path / f"svc{len(started)}", overrides or {})
        started.append(srv)
        return srv.start() if start else srv

    yield make
    for srv in started:
        if srv.process is not None:
            srv.kill()


UNSPLIT = {
    "limits_config": {"split_queries_by_interval": "0s", "split_metadata_queries_by_interval": "0s"}
}
"""Queries run whole, as one sub-query each (the default splits them by the hour)."""


@pytest.fixture(scope="session", params=["split", "unsplit"])
def app(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[InProcessApp]:
    """The service app in this process, shared by API-shape tests isolated by tenant; every
    test using it runs twice, with queries split into sub-queries (the default) and whole,
    as the answers must not depend on it."""
    overrides = UNSPLIT if request.param == "unsplit" else {}
    instance = InProcessApp(tmp_path_factory.mktemp("app"), overrides).start()
    yield instance
    instance.stop()


@pytest.fixture
def make_app(tmp_path: Path) -> Iterator[Callable[..., InProcessApp]]:
    """Factory for a private in-process app with config overrides; stops them after."""
    started: list[InProcessApp] = []

    def make(overrides: dict[str, Any] | None = None) -> InProcessApp:
        instance = InProcessApp(tmp_path / f"app{len(started)}", overrides or {}).start()
        started.append(instance)
        return instance

    yield make
    for instance in started:
        instance.stop()


@pytest.fixture
def store(tmp_path: Path) -> Iterator[Store]:
    """An empty, open store in the test's directory."""
    with open_store(tmp_path) as opened:
        yield opened


_EXIT_STATUS: list[int] = []


@pytest.hookimpl(trylast=True)
def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    """Remember the run's exit status for ``pytest_unconfigure``."""
    _EXIT_STATUS.append(int(exitstatus))


@pytest.hookimpl(trylast=True)
def pytest_unconfigure(config: pytest.Config) -> None:
    """End the test process without the interpreter's finalization, once every report is
    written. In-process components that tests leave open keep native threads (DuckDB's
    and Arrow's pools) that finalization stops by unwinding them; one unwound through a
    C++ catch-all aborts the process after a green run ("FATAL: exception not rethrown",
    seen at the end of whole-suite runs, never in a test)."""
    if not _EXIT_STATUS:
        return
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(_EXIT_STATUS[-1])
