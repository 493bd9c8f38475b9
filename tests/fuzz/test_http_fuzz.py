"""A short, bounded schema-driven fuzz pass against a real server: no 5xx, bounded RSS.

schemathesis draws requests for every operation of ``/svc/api/v1/openapi.json`` (LogQL
parameters from :mod:`tests.fuzz.strategies`), and hypothesis throws push bodies at the
push endpoint. Derandomized, so CI sees the same requests on every run. The long run is
``benchmarks/fuzz_http.py``.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
import schemathesis
from hypothesis import HealthCheck, given, settings

from svc.api.openapi import openapi_document
from tests.e2e.clients import push
from tests.e2e.server import Server
from tests.fuzz.strategies import json_push_bodies, register_schemathesis_formats
from tests.timeline import BASE

register_schemathesis_formats()

TENANT = "fuzz"
# Operations that would stop the server under test or change its process-wide state, and
# the writers' tail feed, an answer that never ends (tests/cluster/test_writer_heads.py).
EXCLUDED = r"^/(ingester/(shutdown|flush_shutdown|prepare_shutdown)|log_level|svc/internal/tail)$"
RSS_LIMIT_KIB = 1_500 * 1024
FUZZ_SETTINGS = settings(
    max_examples=8,
    deadline=None,
    derandomize=True,
    suppress_health_check=list(HealthCheck),
)


def rss_kib(server: Server) -> int:
    """Resident and peak memory of the server process (KiB)."""
    assert server.process is not None
    status = Path(f"/proc/{server.process.pid}/status").read_text()
    fields = dict(line.split(":", 1) for line in status.splitlines() if ":" in line)
    return int(fields["VmHWM"].split()[0])


@pytest.fixture(scope="module")
def fuzz_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    srv = Server(
        tmp_path_factory.mktemp("fuzz"),
        {
            "limits_config": {"query_timeout": "5s"},
            "compactor": {"retention_enabled": True, "delete_request_store": "filesystem"},
        },
    ).start()
    with srv.client(TENANT) as client:
        streams: list[tuple[dict[str, str], list[Any]]] = [
            (
                {"app": "x", "env": "prod"},
                [(BASE + i, f'{{"n":{i},"msg":"m {i}"}}') for i in range(200)],
            ),
            ({"app": "n40"}, [(BASE, "a" * 40 + "!")]),
        ]
        assert push(client, streams).status_code == 204
    yield srv
    srv.stop()


# Built from the same document the server serves (checked below); schemathesis's lazy
# fixture loader does not run on pytest 9.
schema = schemathesis.openapi.from_dict(openapi_document()).exclude(path_regex=EXCLUDED)


def test_the_served_description_is_the_fuzzed_one(fuzz_server: Server) -> None:
    served = httpx.get(fuzz_server.url + "/svc/api/v1/openapi.json", timeout=10).json()
    assert served == json.loads(json.dumps(openapi_document()))


@schema.parametrize()
@FUZZ_SETTINGS
def test_no_operation_answers_5xx(case: Any, fuzz_server: Server) -> None:
    headers = {"X-Scope-OrgID": TENANT, **(case.headers or {})}
    response = case.call(base_url=fuzz_server.url, headers=headers, timeout=30)
    assert response.status_code < 500, (case.path, case.query, response.text[:300])


@given(body=json_push_bodies)
@FUZZ_SETTINGS
def test_push_bodies_never_answer_5xx(body: bytes, fuzz_server: Server) -> None:
    with httpx.Client(base_url=fuzz_server.url, timeout=30) as client:
        response = client.post(
            "/loki/api/v1/push",
            content=body,
            headers={"Content-Type": "application/json", "X-Scope-OrgID": TENANT},
        )
    assert response.status_code < 500, (body[:200], response.text[:300])


def test_memory_stayed_bounded(fuzz_server: Server) -> None:
    """Runs after the fuzz tests of this module: the peak RSS of the whole pass."""
    assert rss_kib(fuzz_server) < RSS_LIMIT_KIB
    assert httpx.get(fuzz_server.url + "/ready", timeout=5).status_code == 200
