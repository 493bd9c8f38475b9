"""Fixtures of the deployment tests: one S3 server and one PostgreSQL for the whole run."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from examples.cluster.services import PostgresServer, S3Server


@pytest.fixture(scope="session")
def s3(tmp_path_factory: pytest.TempPathFactory) -> Iterator[S3Server]:
    """An S3 server on a loopback port (each test makes its own bucket)."""
    server = S3Server(tmp_path_factory.mktemp("s3")).start()
    yield server
    server.stop()


@pytest.fixture(scope="session")
def postgres() -> Iterator[PostgresServer]:
    """A PostgreSQL server on a loopback port (each test makes its own database)."""
    server = PostgresServer().start()
    yield server
    server.stop()
