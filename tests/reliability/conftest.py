"""Servers whose storage writes can be made to fail (``SVC_FAULT_INJECTION``)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from svc.storage.faults import ENV_VAR
from tests.e2e.server import Server
from tests.reliability.helpers import FAULTS_FILE, base_config


@pytest.fixture
def faulty_server(tmp_path: Path) -> Iterator[Callable[..., Server]]:
    """Factory of private servers with fault injection armed through ``set_faults``."""
    started: list[Server] = []

    def make(overrides: dict[str, Any] | None = None, *, start: bool = True) -> Server:
        root = tmp_path / f"svc{len(started)}"
        srv = Server(root, base_config(overrides), env={ENV_VAR: str(root / FAULTS_FILE)})
        started.append(srv)
        return srv.start() if start else srv

    yield make
    for srv in started:
        if srv.process is not None:
            srv.kill()
