"""A real svc process on a free loopback port, for end-to-end tests."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import yaml

from svc.ingest.model import DEFAULT_DISCOVER_SERVICE_NAME

__all__ = ["DISCOVERY", "Server", "base_config", "free_port", "merge"]


def free_port() -> int:
    """A TCP port nobody listens on right now."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def merge(base: dict[str, Any], extra: dict[str, Any]) -> dict[str, Any]:
    """``base`` with ``extra``'s keys, nested sections merged key by key."""
    out = dict(base)
    for key, value in extra.items():
        if isinstance(value, dict) and isinstance(out.get(key), dict):
            out[key] = merge(out[key], value)
        else:
            out[key] = value
    return out


DISCOVERY = {
    "discover_service_name": list(DEFAULT_DISCOVER_SERVICE_NAME),
    "discover_log_levels": True,
}
"""``limits_config`` keys that turn ``service_name`` and ``detected_level`` discovery back
on, as they are by default."""


def base_config(data_dir: Path) -> dict[str, Any]:
    """What every test instance sets: its data directory, old samples accepted, ingestion
    rates no test reaches unless it is about them (tests push big bodies in bursts), and no
    ``service_name`` or ``detected_level`` discovery, so that tests see the labels and
    metadata they push (tests of discovery turn it back on with ``DISCOVERY``)."""
    limits: dict[str, Any] = {
        "reject_old_samples": False,
        "ingestion_rate_mb": 1024,
        "ingestion_burst_size_mb": 1024,
        "per_stream_rate_limit": "1GB",
        "per_stream_rate_limit_burst": "1GB",
        "discover_service_name": [],
        "discover_log_levels": False,
    }
    return {"common": {"path_prefix": str(data_dir)}, "limits_config": limits}


@dataclass
class Server:
    """Start, stop, kill and restart one service process over one data directory."""

    root: Path
    overrides: dict[str, Any] = field(default_factory=dict)
    env: dict[str, str] = field(default_factory=dict)
    """Extra environment variables of the process (``SVC_FAULT_INJECTION`` in tests)."""
    port: int = field(default_factory=free_port)
    args: tuple[str, ...] = ()
    """Command-line flags after ``-config.file``."""
    process: subprocess.Popen[bytes] | None = None
    client_tls: dict[str, Any] = field(default_factory=dict)
    """httpx's ``verify`` (and ``cert``) for a server with TLS on; its URL is then https."""
    unix_socket: Path | None = None
    """Serve on this Unix socket instead of the port (a process in a network namespace of
    its own); clients then connect through it."""
    launcher: tuple[str, ...] = ()
    """Words run before the Python command (``unshare ...`` for a namespace of its own)."""

    @property
    def url(self) -> str:
        scheme = "https" if self.client_tls else "http"
        return f"{scheme}://127.0.0.1:{self.port}"

    @property
    def data_dir(self) -> Path:
        return self.root / "data"

    @property
    def log_path(self) -> Path:
        return self.root / "svc.log"

    def config(self) -> dict[str, Any]:
        listen = {"server": {"http_listen_address": "127.0.0.1", "http_listen_port": self.port}}
        if self.unix_socket is not None:
            listen["server"]["http_listen_unix_socket"] = str(self.unix_socket)
        return merge(merge(base_config(self.data_dir), listen), self.overrides)

    def start(self, *, wait: bool = True) -> Server:
        self.root.mkdir(parents=True, exist_ok=True)
        config_path = self.root / "config.yaml"
        config_path.write_text(yaml.safe_dump(self.config()))
        log = self.log_path.open("ab")
        self.process = subprocess.Popen(
            [
                *self.launcher,
                sys.executable,
                "-m",
                "svc",
                f"-config.file={config_path}",
                *self.args,
            ],
            stdout=log,
            stderr=log,
            cwd=self.root,
            env={**os.environ, **self.env},
        )
        if wait:
            self.wait_ready()
        return self

    def wait_ready(self, timeout: float = 30.0) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            assert self.process is not None
            if self.process.poll() is not None:
                raise RuntimeError(f"svc exited early:\n{self.log_path.read_text()}")
            try:
                with self.client() as client:
                    if client.get("/ready", timeout=1).status_code == 200:
                        return
            except httpx.HTTPError:
                pass
            time.sleep(0.05)
        raise TimeoutError(f"svc not ready:\n{self.log_path.read_text()}")

    def stop(self, timeout: float = 30.0) -> int:
        """SIGTERM and wait: a clean shutdown."""
        assert self.process is not None
        self.process.send_signal(signal.SIGTERM)
        code = self.process.wait(timeout)
        self.process = None
        return code

    def kill(self) -> None:
        """SIGKILL: the process gets no chance to flush or close anything."""
        assert self.process is not None
        os.kill(self.process.pid, signal.SIGKILL)
        self.process.wait(10)
        self.process = None

    def command(
        self,
        *words: str,
        args: tuple[str, ...] = (),
        stdin: bytes | str | None = None,
        env: dict[str, str] | None = None,
        text: bool = False,
        timeout: float = 120,
    ) -> subprocess.CompletedProcess[Any]:
        """``svc <words> -config.file=<this server's config> <args>``, such as
        ``command("catalog", "rebuild")``: a subcommand on this server's data directory."""
        return subprocess.run(
            [
                sys.executable,
                "-m",
                "svc",
                *words,
                f"-config.file={self.root / 'config.yaml'}",
                *args,
            ],
            input=stdin,
            capture_output=True,
            text=text,
            timeout=timeout,
            check=False,
            env={**os.environ, **(env or {})},
        )

    def restart(self) -> Server:
        if self.process is not None:
            self.stop()
        return self.start()

    def client(self, tenant: str | None = None) -> httpx.Client:
        headers = {"X-Scope-OrgID": tenant} if tenant else {}
        if self.unix_socket is not None:
            transport = httpx.HTTPTransport(uds=str(self.unix_socket))
            return httpx.Client(
                base_url="http://svc", headers=headers, timeout=30, transport=transport
            )
        return httpx.Client(base_url=self.url, headers=headers, timeout=30, **self.client_tls)
