"""Shared fixtures: a real server per test session, fresh servers on demand."""

from __future__ import annotations

import itertools
import re
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.server import Server

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
