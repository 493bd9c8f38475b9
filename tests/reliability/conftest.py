"""Servers whose storage writes can be made to fail (``SVC_FAULT_INJECTION``)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from svc.storage.faults import ENV_VAR
from tests.e2e.server import Server
from tests.reliability.helpers import FAULTS_FILE, base_config


@pytest.fixture
def faulty_server(make_server: Callable[..., Server]) -> Callable[..., Server]:
    """Factory of private servers with fault injection armed through ``set_faults``."""

    def make(overrides: dict[str, Any] | None = None, *, start: bool = True) -> Server:
        srv = make_server(base_config(overrides), start=False)
        srv.env[ENV_VAR] = str(srv.root / FAULTS_FILE)
        return srv.start() if start else srv

    return make
