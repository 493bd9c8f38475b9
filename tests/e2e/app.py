"""The service app in this process, behind litestar's test client, for API-shape tests.

Same surface as :class:`tests.e2e.server.Server` (``client(tenant)``, ``data_dir``) but no
process, socket or port: a private instance with its own config starts in a fraction of
a second. Durability, lifecycle and wire tests keep the real process.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import yaml
from litestar.testing import TestClient

from svc.app import create_app
from svc.config import config_from_yaml
from tests.e2e.server import base_config, merge

__all__ = ["InProcessApp"]


class _SharedTransport(httpx.BaseTransport):
    """Requests through the test client's transport (the app's own event loop), which
    stays open when one of the clients sharing it is closed."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        response: httpx.Response = self.inner.handle_request(request)
        return response


@dataclass
class InProcessApp:
    """One app instance over one data directory, started until :meth:`stop`."""

    root: Path
    overrides: dict[str, Any] = field(default_factory=dict)
    _client: TestClient[Any] | None = None

    @property
    def data_dir(self) -> Path:
        return self.root / "data"

    def start(self, timeout: float = 30.0) -> InProcessApp:
        self.root.mkdir(parents=True, exist_ok=True)
        config = merge(base_config(self.data_dir), self.overrides)
        app = create_app(config_from_yaml(yaml.safe_dump(config)))
        self._client = TestClient(app, raise_server_exceptions=False, timeout=30)
        self._client.__enter__()
        deadline = time.monotonic() + timeout
        while self._client.get("/ready").status_code != 200:
            if time.monotonic() > deadline:
                raise TimeoutError(self._client.get("/ready").text)
            time.sleep(0.01)
        return self

    def stop(self) -> None:
        assert self._client is not None
        self._client.__exit__(None, None, None)
        self._client = None

    def restart(self) -> InProcessApp:
        """A clean shutdown (the head is flushed as configured), then a new app on the
        same data directory."""
        self.stop()
        return self.start()

    def client(self, tenant: str | None = None) -> httpx.Client:
        """A client of this app; with ``tenant``, every request names it."""
        assert self._client is not None
        headers = {"X-Scope-OrgID": tenant} if tenant else {}
        return httpx.Client(
            transport=_SharedTransport(self._client._transport),
            base_url=self._client.base_url,
            headers=headers,
            timeout=30,
        )
