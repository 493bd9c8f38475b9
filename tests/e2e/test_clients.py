"""Existing client libraries of this push API, unchanged, against a real server."""

from __future__ import annotations

import logging

import logging_loki

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
