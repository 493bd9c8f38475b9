"""An in-process service with a ruler, for the rules API tests."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from litestar.testing import TestClient

from svc.app import create_app
from svc.config import config_from_yaml

Client = TestClient[Any]


def make_config(root: Path, overrides: dict[str, Any] | None = None) -> str:
    """Config text: data under ``root``, a fast ruler, plus ``overrides`` (merged 1 level)."""
    config: dict[str, Any] = {
        "common": {"path_prefix": str(root / "data")},
        "limits_config": {"reject_old_samples": False},
        "ruler": {"evaluation_interval": "1s", "poll_interval": "1s"},
    }
    for key, value in (overrides or {}).items():
        if isinstance(value, dict) and isinstance(config.get(key), dict):
            config[key] = {**config[key], **value}
        else:
            config[key] = value
    return yaml.safe_dump(config)


@pytest.fixture
def make_client(tmp_path: Path) -> Iterator[Callable[..., Client]]:
    """Factory of started in-process services (stopped after the test)."""
    clients: list[Client] = []

    def make(overrides: dict[str, Any] | None = None) -> Client:
        config = config_from_yaml(make_config(tmp_path, overrides))
        client: Client = TestClient(create_app(config))
        client.__enter__()
        clients.append(client)
        deadline = time.monotonic() + 30
        while client.get("/ready").status_code != 200:
            assert time.monotonic() < deadline, "service not ready"
            time.sleep(0.02)
        return client

    yield make
    for client in clients:
        client.__exit__(None, None, None)


@pytest.fixture
def client(make_client: Callable[..., Client]) -> Client:
    """A started service with the default test config."""
    return make_client()
