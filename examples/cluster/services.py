"""The cluster example's backing services, as plain processes on loopback ports.

* :class:`S3Server`: an S3-compatible server (moto's, ``pip install 'moto[server]'``);
* :class:`PostgresServer`: PostgreSQL from the distribution's package (``initdb`` in a
  temporary directory; as root it runs as the package's ``postgres`` user, since PostgreSQL
  refuses to run as root);
* :class:`RayHead`: a Ray head node (``ray start --head --block``) that readers join with
  ``querier.execution: ray``;
* :class:`SvcProcess`: one svc process with its own config file and data directory.

Each listens on 127.0.0.1 only and is stopped by its own ``stop``. The tests of the
deployment modes start theirs with these classes too.
"""

from __future__ import annotations

import contextlib
import glob
import os
import pwd
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import psycopg
import pyarrow.fs as pafs
import yaml
from psycopg import sql

from svc.storage.objects import S3Settings

__all__ = ["PostgresServer", "S3Server", "SvcProcess", "free_port", "postgres_binary"]

ACCESS_KEY = "svc-example"
SECRET_KEY = "svc-example-secret"


def free_port() -> int:
    """A TCP port nobody listens on right now."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def _accepting(port: int) -> bool:
    """Whether something accepts connections on the loopback port."""
    try:
        socket.create_connection(("127.0.0.1", port), 0.2).close()
    except OSError:
        return False
    return True


def _wait(
    ready: Any, process: subprocess.Popen[bytes], log: Path, what: str, timeout: float = 30
) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"{what} exited early:\n{log.read_text()}")
        if ready():
            return
        time.sleep(0.05)
    raise TimeoutError(f"{what} did not start:\n{log.read_text()}")


@dataclass
class S3Server:
    """``python -m moto.server`` bound to 127.0.0.1, its log under ``root``."""

    root: Path
    port: int = field(default_factory=free_port)
    process: subprocess.Popen[bytes] | None = None

    @property
    def endpoint(self) -> str:
        return f"127.0.0.1:{self.port}"

    def _listening(self) -> bool:
        return _accepting(self.port)

    def start(self) -> S3Server:
        self.root.mkdir(parents=True, exist_ok=True)
        log = self.root / "s3.log"
        with log.open("ab") as out:
            self.process = subprocess.Popen(
                [sys.executable, "-m", "moto.server", "-H", "127.0.0.1", "-p", str(self.port)],
                stdout=out,
                stderr=out,
            )
        _wait(self._listening, self.process, log, "S3 server")
        return self

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

    def lake_settings(self, bucket: str) -> S3Settings:
        """How svc reaches ``bucket`` on this server."""
        return S3Settings(
            bucket=bucket,
            endpoint=self.endpoint,
            insecure=True,
            access_key_id=ACCESS_KEY,
            secret_access_key=SECRET_KEY,
            force_path_style=True,
        )

    def storage_config(self, bucket: str) -> dict[str, Any]:
        """svc config keys keeping the lake in ``bucket`` (the reference's spellings)."""
        period = {
            "from": "2020-10-24",
            "store": "tsdb",
            "object_store": "s3",
            "schema": "v13",
            "index": {"prefix": "index_", "period": "24h"},
        }
        aws = {
            "endpoint": self.endpoint,
            "bucketnames": bucket,
            "region": "us-east-1",
            "access_key_id": ACCESS_KEY,
            "secret_access_key": SECRET_KEY,
            "s3forcepathstyle": True,
            "insecure": True,
        }
        return {"schema_config": {"configs": [period]}, "storage_config": {"aws": aws}}


def postgres_binary(name: str) -> str:
    """The path of a PostgreSQL server program: on PATH, else the newest of
    ``/usr/lib/postgresql/<version>/bin`` (where Debian installs them, off PATH)."""
    found = shutil.which(name)
    if found is not None:
        return found

    def version(path: str) -> int:
        part = Path(path).parts[4]
        return int(part) if part.isdigit() else 0

    candidates = sorted(glob.glob(f"/usr/lib/postgresql/*/bin/{name}"), key=version)
    if not candidates:
        raise FileNotFoundError(
            f"{name} not found: apt-get install -y --no-install-recommends postgresql"
        )
    return candidates[-1]


@dataclass
class PostgresServer:
    """``initdb`` then ``postgres`` on 127.0.0.1 only, trust authentication, user ``svc``."""

    port: int = field(default_factory=free_port)
    directory: Path | None = None
    process: subprocess.Popen[bytes] | None = None

    @property
    def dsn(self) -> str:
        return f"host=127.0.0.1 port={self.port} user=svc dbname=postgres connect_timeout=10"

    @staticmethod
    def _user() -> dict[str, Any]:
        if os.geteuid() != 0:
            return {}
        entry = pwd.getpwnam("postgres")
        return {"user": entry.pw_uid, "group": entry.pw_gid}

    def _accepting(self) -> bool:
        try:
            psycopg.connect(self.dsn).close()
        except psycopg.OperationalError:
            return False
        return True

    def start(self) -> PostgresServer:
        # Its own directory outside the caller's (which the postgres user may not enter).
        self.directory = Path(tempfile.mkdtemp(prefix="svc-pg-"))
        user = self._user()
        if user:
            os.chown(self.directory, user["user"], user["group"])
        data = self.directory / "data"
        initdb = [postgres_binary("initdb"), "-D", str(data), "-U", "svc", "--auth=trust"]
        initdb += ["-E", "UTF8", "--no-sync", "--no-instructions"]
        subprocess.run(initdb, check=True, capture_output=True, **user)
        log = self.directory / "postgres.log"
        server = [postgres_binary("postgres"), "-D", str(data), "-p", str(self.port)]
        server += ["-c", "listen_addresses=127.0.0.1"]
        server += ["-c", f"unix_socket_directories={self.directory}", "-c", "fsync=off"]
        with log.open("ab") as out:
            self.process = subprocess.Popen(server, stdout=out, stderr=out, **user)
        _wait(self._accepting, self.process, log, "PostgreSQL")
        return self

    def database(self, name: str) -> str:
        """Create a database; returns its DSN."""
        with psycopg.connect(self.dsn, autocommit=True) as connection:
            connection.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(name)))
        return self.dsn.replace("dbname=postgres", f"dbname={name}")

    def stop(self) -> None:
        if self.process is not None:
            self.process.terminate()
            self.process.wait(30)
            self.process = None
        if self.directory is not None:
            shutil.rmtree(self.directory, ignore_errors=True)
            self.directory = None


@dataclass
class RayHead:
    """A Ray head on 127.0.0.1 with ``cpus`` CPUs for the readers' actors, its log under
    ``root``. Ray binds beyond its node address: run it in a network namespace with only
    ``lo`` (``svc.distributed.netns``), with everything that talks to it."""

    root: Path
    cpus: int = 2
    port: int = field(default_factory=free_port)
    process: subprocess.Popen[bytes] | None = None
    token: str = field(default_factory=lambda: secrets.token_hex(32))
    """The cluster's authentication token: every process joining it needs ``client_env``."""

    @property
    def client_env(self) -> dict[str, str]:
        """What a process joining the cluster needs in its environment."""
        return {"RAY_AUTH_MODE": "token", "RAY_AUTH_TOKEN": self.token}

    @property
    def address(self) -> str:
        return f"127.0.0.1:{self.port}"

    def _listening(self) -> bool:
        return _accepting(self.port)

    def start(self) -> RayHead:
        self.root.mkdir(parents=True, exist_ok=True)
        log = self.root / "ray.log"
        command = [sys.executable, "-m", "ray.scripts.scripts", "start", "--head", "--block"]
        command += ["--node-ip-address=127.0.0.1", f"--port={self.port}"]
        command += [f"--num-cpus={self.cpus}", "--include-dashboard=false", "--disable-usage-stats"]
        with log.open("ab") as out:
            # Its own session: stopping it ends the processes Ray started for it too.
            self.process = subprocess.Popen(
                command,
                stdout=out,
                stderr=out,
                start_new_session=True,
                env={**os.environ, **self.client_env},
            )
        _wait(self._listening, self.process, log, "Ray head", timeout=120)
        return self

    def stop(self) -> None:
        if self.process is not None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(30)
            finally:
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(self.process.pid, signal.SIGKILL)
            self.process = None


@dataclass
class SvcProcess:
    """``python -m svc`` with a config of its own under ``root``, on a loopback port."""

    root: Path
    config: dict[str, Any]
    port: int = field(default_factory=free_port)
    process: subprocess.Popen[bytes] | None = None
    env: dict[str, str] = field(default_factory=dict)
    """Extra environment variables of the process."""

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def _ready(self) -> bool:
        try:
            with urllib.request.urlopen(self.url + "/ready", timeout=1) as response:
                return bool(response.status == 200)
        except OSError:
            return False

    def start(self, *, wait: bool = True) -> SvcProcess:
        self.root.mkdir(parents=True, exist_ok=True)
        server = {"http_listen_address": "127.0.0.1", "http_listen_port": self.port}
        config = {**self.config, "server": {**self.config.get("server", {}), **server}}
        config.setdefault("common", {}).setdefault("path_prefix", str(self.root / "data"))
        path = self.root / "config.yaml"
        path.write_text(yaml.safe_dump(config))
        log = self.root / "svc.log"
        with log.open("ab") as out:
            self.process = subprocess.Popen(
                [sys.executable, "-m", "svc", f"-config.file={path}"],
                stdout=out,
                stderr=out,
                env={**os.environ, **self.env},
            )
        if wait:
            self.wait_ready()
        return self

    def wait_ready(self) -> None:
        assert self.process is not None
        _wait(self._ready, self.process, self.root / "svc.log", f"svc at {self.url}", 120)

    def stop(self) -> None:
        if self.process is not None:
            self.process.send_signal(signal.SIGTERM)
            self.process.wait(30)
            self.process = None
