"""Real Prometheus and Alertmanager processes (Debian packages) on loopback ports.

Prometheus runs as a remote-write receiver; Alertmanager without clustering, so neither
listens anywhere but 127.0.0.1. ``.ci/run`` installs both packages when they are missing.
"""

from __future__ import annotations

import shutil
import signal
import subprocess
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx

from tests.e2e.server import free_port

__all__ = ["Alertmanager", "Prometheus", "require_binaries"]

PROMETHEUS = "prometheus"
ALERTMANAGER = "prometheus-alertmanager"


def require_binaries() -> None:
    """Fail (never skip) when the packages are missing: CI installs them."""
    missing = [name for name in (PROMETHEUS, ALERTMANAGER) if shutil.which(name) is None]
    assert not missing, (
        f"{missing} not installed: apt-get install -y --no-install-recommends "
        "prometheus prometheus-alertmanager (.ci/run does)"
    )


@dataclass
class _Process:
    root: Path
    port: int = field(default_factory=free_port)
    process: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def command(self) -> list[str]:
        raise NotImplementedError

    def start(self) -> _Process:
        self.root.mkdir(parents=True, exist_ok=True)
        log = (self.root / "process.log").open("ab")
        self.process = subprocess.Popen(self.command(), stdout=log, stderr=log, cwd=self.root)
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError((self.root / "process.log").read_text())
            try:
                if httpx.get(self.url + "/-/ready", timeout=1).status_code == 200:
                    return self
            except httpx.HTTPError:
                pass
            time.sleep(0.05)
        raise TimeoutError((self.root / "process.log").read_text())

    def stop(self) -> None:
        if self.process is None:
            return
        self.process.send_signal(signal.SIGTERM)
        try:
            self.process.wait(20)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait(10)
        self.process = None


@dataclass
class Prometheus(_Process):
    """A Prometheus that accepts remote write and scrapes nothing."""

    def command(self) -> list[str]:
        config = self.root / "prometheus.yml"
        config.write_text("global:\n  scrape_interval: 1h\n")
        return [
            PROMETHEUS,
            f"--config.file={config}",
            f"--storage.tsdb.path={self.root / 'tsdb'}",
            f"--web.listen-address=127.0.0.1:{self.port}",
            "--web.enable-remote-write-receiver",
        ]

    def query(self, expr: str, **params: Any) -> list[dict[str, Any]]:
        """``/api/v1/query`` result (vector or matrix items)."""
        response = httpx.get(self.url + "/api/v1/query", params={"query": expr, **params})
        response.raise_for_status()
        result: list[dict[str, Any]] = response.json()["data"]["result"]
        return result


@dataclass
class Alertmanager(_Process):
    """An Alertmanager without clustering that notifies nobody."""

    def command(self) -> list[str]:
        config = self.root / "alertmanager.yml"
        config.write_text(
            'route:\n  receiver: "null"\n  group_wait: 100ms\n  group_interval: 1s\n'
            'receivers:\n  - name: "null"\n'
        )
        return [
            ALERTMANAGER,
            f"--config.file={config}",
            f"--storage.path={self.root / 'data'}",
            f"--web.listen-address=127.0.0.1:{self.port}",
            "--cluster.listen-address=",
        ]

    def alerts(self) -> list[dict[str, Any]]:
        """Unresolved alerts (``/api/v2/alerts``)."""
        response = httpx.get(self.url + "/api/v2/alerts")
        response.raise_for_status()
        found: list[dict[str, Any]] = response.json()
        return found
