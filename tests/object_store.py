"""A real S3-compatible server (moto's, a dev dependency) on a free loopback port."""

from __future__ import annotations

import socket
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pyarrow.fs as pafs

from tests.e2e.server import free_port

__all__ = ["S3Server"]

ACCESS_KEY = "svc-test"
SECRET_KEY = "svc-test-secret"


@dataclass
class S3Server:
    """``python -m moto.server`` bound to 127.0.0.1, its log under ``root``."""

    root: Path
    port: int = field(default_factory=free_port)
    process: subprocess.Popen[bytes] | None = None

    @property
    def endpoint(self) -> str:
        return f"127.0.0.1:{self.port}"

    def start(self) -> S3Server:
        self.root.mkdir(parents=True, exist_ok=True)
        log = (self.root / "s3.log").open("ab")
        self.process = subprocess.Popen(
            [sys.executable, "-m", "moto.server", "-H", "127.0.0.1", "-p", str(self.port)],
            stdout=log,
            stderr=log,
        )
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError((self.root / "s3.log").read_text())
            try:
                socket.create_connection(("127.0.0.1", self.port), 0.2).close()
                return self
            except OSError:
                time.sleep(0.05)
        raise TimeoutError("S3 server did not start")

    def stop(self) -> None:
        if self.process is not None:
            self.process.terminate()
            self.process.wait(10)
            self.process = None

    def filesystem(self) -> pafs.S3FileSystem:
        return pafs.S3FileSystem(
            access_key=ACCESS_KEY,
            secret_key=SECRET_KEY,
            endpoint_override=self.endpoint,
            scheme="http",
            region="us-east-1",
            allow_bucket_creation=True,
        )

    def bucket(self, name: str) -> str:
        """Create a bucket; returns its name."""
        self.filesystem().create_dir(name)
        return name

    def storage_config(self, bucket: str) -> dict[str, Any]:
        """svc config keys keeping the lake in ``bucket`` (the reference's spellings)."""
        return {
            "schema_config": {
                "configs": [
                    {
                        "from": "2020-10-24",
                        "store": "tsdb",
                        "object_store": "s3",
                        "schema": "v13",
                        "index": {"prefix": "index_", "period": "24h"},
                    }
                ]
            },
            "storage_config": {
                "aws": {
                    "endpoint": self.endpoint,
                    "bucketnames": bucket,
                    "region": "us-east-1",
                    "access_key_id": ACCESS_KEY,
                    "secret_access_key": SECRET_KEY,
                    "s3forcepathstyle": True,
                    "insecure": True,
                }
            },
        }
