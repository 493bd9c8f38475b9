"""A real PostgreSQL server (Debian's package) in a temporary directory on a loopback port.

Found on PATH or under ``/usr/lib/postgresql/<version>/bin`` (where Debian installs it;
``.ci/run`` installs the package when missing). PostgreSQL refuses to run as root: as root,
the server runs as the package's ``postgres`` user, in a directory it owns.
"""

from __future__ import annotations

import glob
import os
import pwd
import shutil
import subprocess
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import psycopg

from tests.e2e.server import free_port

__all__ = ["PostgresServer", "postgres_binary"]


def postgres_binary(name: str) -> str:
    """The path of a PostgreSQL server program; fails (never skips) when it is missing."""
    found = shutil.which(name)
    if found is None:
        candidates = sorted(
            glob.glob(f"/usr/lib/postgresql/*/bin/{name}"),
            key=lambda p: int(p.split("/")[4]) if p.split("/")[4].isdigit() else 0,
        )
        found = candidates[-1] if candidates else None
    assert found is not None, (
        f"{name} not found: apt-get install -y --no-install-recommends postgresql (.ci/run does)"
    )
    return found


@dataclass
class PostgresServer:
    """``initdb`` then ``postgres`` listening on 127.0.0.1 only, trust auth, user ``svc``."""

    port: int = field(default_factory=free_port)
    directory: Path | None = None
    process: subprocess.Popen[bytes] | None = None

    @property
    def dsn(self) -> str:
        return f"host=127.0.0.1 port={self.port} user=svc dbname=postgres connect_timeout=10"

    def _user(self) -> dict[str, Any]:
        if os.geteuid() != 0:
            return {}
        entry = pwd.getpwnam("postgres")
        return {"user": entry.pw_uid, "group": entry.pw_gid}

    def start(self) -> PostgresServer:
        self.directory = Path(tempfile.mkdtemp(prefix="svc-pg-"))
        user = self._user()
        if user:
            os.chown(self.directory, user["user"], user["group"])
        data = self.directory / "data"
        log = self.directory / "postgres.log"
        subprocess.run(
            [
                postgres_binary("initdb"),
                "-D",
                str(data),
                "-U",
                "svc",
                "--auth=trust",
                "-E",
                "UTF8",
                "--no-sync",
                "--no-instructions",
            ],
            check=True,
            capture_output=True,
            **user,
        )
        with log.open("ab") as out:
            self.process = subprocess.Popen(
                [
                    postgres_binary("postgres"),
                    "-D",
                    str(data),
                    "-p",
                    str(self.port),
                    "-c",
                    "listen_addresses=127.0.0.1",
                    "-c",
                    f"unix_socket_directories={self.directory}",
                    "-c",
                    "fsync=off",
                    "-c",
                    "max_connections=50",
                ],
                stdout=out,
                stderr=out,
                **user,
            )
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(log.read_text())
            try:
                psycopg.connect(self.dsn).close()
                return self
            except psycopg.OperationalError:
                time.sleep(0.1)
        raise TimeoutError(f"postgres did not start:\n{log.read_text()}")

    def database(self, name: str) -> str:
        """Create a database; returns its DSN."""
        with psycopg.connect(self.dsn, autocommit=True) as connection:
            connection.execute(f'CREATE DATABASE "{name}"')
        return self.dsn.replace("dbname=postgres", f"dbname={name}")

    def stop(self) -> None:
        if self.process is not None:
            self.process.terminate()
            self.process.wait(30)
            self.process = None
        if self.directory is not None:
            shutil.rmtree(self.directory, ignore_errors=True)
            self.directory = None
