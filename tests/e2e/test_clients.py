"""Existing client libraries of this push API, unchanged, against a real server."""

from __future__ import annotations

import logging
import time

import logging_loki
import pytest

from tests.e2e.clients import query_range, stream_values
from tests.e2e.server import Server


def test_python_logging_loki_handler(server: Server, tenant: str) -> None:
    handler = logging_loki.LokiHandler(
        url=f"{server.url}/loki/api/v1/push", tags={"app": "pylog"}, version="1"
    )
    handler.emitter.session.headers["X-Scope-OrgID"] = tenant
    logger = logging.getLogger(f"svc-test-{tenant}")
    logger.propagate = False
    logger.addHandler(handler)
    logger.setLevel(logging.INFO)
    try:
        logger.warning("disk almost full: %d%%", 93)
        logger.info("request served", extra={"tags": {"route": "/api"}})
    finally:
        logger.removeHandler(handler)
        handler.close()
    with server.client(tenant) as client:
        data = query_range(client, '{app="pylog"}', since="5m", direction="forward")
    assert stream_values(data) == [
        (
            {"app": "pylog", "logger": logger.name, "route": "/api", "severity": "info"},
            [[data["result"][0]["values"][0][0], "request served"]],
        ),
        (
            {"app": "pylog", "logger": logger.name, "severity": "warning"},
            [[data["result"][1]["values"][0][0], "disk almost full: 93%"]],
        ),
    ]


def test_python_logging_loki_default_legacy_mode(server: Server, tenant: str) -> None:
    # Without ``version``, the handler sends the legacy JSON format: a label string and
    # RFC 3339 times with the local offset, which only /api/prom/push takes.
    with pytest.warns(DeprecationWarning):
        handler = logging_loki.LokiHandler(url=f"{server.url}/api/prom/push", tags={"app": "v0"})
    handler.emitter.session.headers["X-Scope-OrgID"] = tenant
    logger = logging.getLogger(f"svc-test-v0-{tenant}")
    logger.propagate = False
    logger.addHandler(handler)
    logger.setLevel(logging.INFO)
    before = time.time_ns()
    try:
        logger.error("payment failed for order %s", "o-17")
    finally:
        logger.removeHandler(handler)
        handler.close()
    with server.client(tenant) as client:
        data = query_range(client, '{app="v0"}', since="5m")
    ((labels, values),) = stream_values(data)
    assert labels == {"app": "v0", "logger": logger.name, "severity": "error"}
    ((ts, line),) = values
    assert line == "payment failed for order o-17"
    # The handler sends microseconds.
    assert before // 1000 - 1 <= int(ts) // 1000 <= time.time_ns() // 1000
