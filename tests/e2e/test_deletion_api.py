"""The deletion API through HTTP: when it exists, every validation, list and cancellation
row of DELETION.md with exact bodies and headers, deletion modes, cache generations."""

from __future__ import annotations

import re
import time
from collections.abc import Callable, Iterator
from typing import Any

import httpx
import pytest

from tests.e2e.app import InProcessApp

RETENTION = {"compactor": {"retention_enabled": True, "delete_request_store": "filesystem"}}
PATHS = ("/svc/api/v1/delete", "/loki/api/v1/delete")
PAST = "1700000000"
LATER = "1700007200"
TEXT = "text/plain; charset=utf-8"


@pytest.fixture(scope="module")
def deletion_app(tmp_path_factory: pytest.TempPathFactory) -> Iterator[InProcessApp]:
    """Deletion on, with the tenant ``off`` disabled and ``only`` filter-only."""
    overrides = {
        **RETENTION,
        "overrides": {
            "off": {"deletion_mode": "disabled"},
            "only": {"deletion_mode": "filter-only"},
        },
    }
    instance = InProcessApp(tmp_path_factory.mktemp("deletion"), overrides).start()
    yield instance
    instance.stop()


def _error(response: httpx.Response, status: int, message: str) -> None:
    """A Go ``http.Error`` answer."""
    assert (response.status_code, response.text) == (status, message + "\n")
    assert response.headers["content-type"] == TEXT
    assert response.headers["x-content-type-options"] == "nosniff"


def _create(client: httpx.Client, method: str = "POST", **params: str) -> httpx.Response:
    return client.request(method, PATHS[0], params=params)


# when the API exists ---------------------------------------------------------------------


@pytest.mark.parametrize("method", ["POST", "PUT", "GET", "DELETE"])
def test_routes_do_not_exist_without_retention(app: InProcessApp, tenant: str, method: str) -> None:
    with app.client(tenant) as client:
        for path in PATHS:
            assert client.request(method, path).status_code == 404


@pytest.mark.parametrize(
    ("method", "path"),
    [
        ("POST", "/svc/api/v1/delete"),
        ("PUT", "/loki/api/v1/delete"),
        ("GET", "/svc/api/v1/delete"),
        ("DELETE", "/svc/api/v1/delete"),
        ("GET", "/svc/api/v1/cache/generation_numbers"),
        ("POST", "/loki/api/v1/cache/generation_numbers/increase"),
    ],
)
def test_disabled_tenants_get_403_everywhere(
    deletion_app: InProcessApp, method: str, path: str
) -> None:
    with deletion_app.client("off") as client:
        _error(
            client.request(method, path, params={"query": '{a="b"}', "start": PAST}),
            403,
            "deletion is not available for this tenant",
        )


def test_no_tenant_is_401(deletion_app: InProcessApp) -> None:
    with deletion_app.client() as client:
        response = client.get(PATHS[0])
    assert (response.status_code, response.text) == (401, "no org id")


# create ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("params", "message"),
    [
        ({"start": PAST}, "query not set"),
        ({"query": "", "start": PAST}, "query not set"),
        ({"query": '{app="a"', "start": PAST}, "invalid query expression"),
        ({"query": 'count_over_time({a="b"}[1m])', "start": PAST}, "invalid query expression"),
        ({"query": '{a="b"}'}, "start time not set"),
        ({"query": '{a="b"}', "start": "17000000"}, "invalid start time: require unix seconds or RFC3339 format"),
        ({"query": '{a="b"}', "start": PAST, "end": "now"}, "invalid end time: require unix seconds or RFC3339 format"),
        ({"query": '{a="b"}', "start": PAST, "end": "2999-01-01T00:00:00Z"}, "deletes in the future are not allowed"),
        ({"query": '{a="b"}', "start": LATER, "end": PAST}, "start time can't be greater than or equal to end time"),
        ({"query": '{a="b"}', "start": "2999-01-01T00:00:00Z"}, "start time can't be greater than or equal to end time"),
        ({"query": '{a="b"} |= "x"', "start": PAST, "end": LATER, "max_interval": "1d"}, "invalid max_interval: valid time units are 's', 'm', 'h'"),
        ({"query": '{a="b"} |= "x"', "start": PAST, "end": LATER, "max_interval": "999ms"}, "invalid max_interval: valid time units are 's', 'm', 'h'"),
        ({"query": '{a="b"} |= "x"', "start": PAST, "end": LATER, "max_interval": "48h"}, "max_interval can't be greater than 24h0m0s"),
        ({"query": '{a="b"} |= "x"', "start": PAST, "end": LATER, "max_interval": "3h"}, "max_interval can't be greater than the interval to be deleted (2h0m0s)"),
    ],
)  # fmt: skip
def test_create_validation(
    deletion_app: InProcessApp, tenant: str, params: dict[str, str], message: str
) -> None:
    with deletion_app.client(tenant) as client:
        _error(_create(client, **params), 400, message)
        assert client.get(PATHS[0]).text == "[]\n"  # nothing was stored


def test_parameters_come_from_the_url_only(deletion_app: InProcessApp, tenant: str) -> None:
    with deletion_app.client(tenant) as client:
        response = client.post(
            PATHS[0],
            content=f'query={{a="b"}}&start={PAST}',
            headers={"Content-Type": "application/x-www-form-urlencoded"},
        )
    _error(response, 400, "query not set")


@pytest.mark.parametrize("method", ["POST", "PUT"])
def test_create_answers_204_with_the_request_id(
    deletion_app: InProcessApp, tenant: str, method: str
) -> None:
    with deletion_app.client(tenant) as client:
        response = _create(
            client, method, query='{a="b"}', start=PAST, end=LATER, max_interval="zz"
        )
        assert (response.status_code, response.content) == (204, b"")
        identifier = response.headers["x-delete-request-id"]
        assert re.fullmatch("[0-9a-f]{8}", identifier)
        assert [r["request_id"] for r in client.get(PATHS[1]).json()] == [identifier]


def test_store_failure_is_500(make_server: Callable[..., Any]) -> None:
    from svc.storage.faults import ENV_VAR
    from tests.reliability.helpers import FAULTS_FILE, set_faults

    srv = make_server(RETENTION, start=False)
    srv.env[ENV_VAR] = str(srv.root / FAULTS_FILE)
    srv.start()
    with srv.client("t") as client:
        set_faults(srv, "catalog.commit eio")
        _error(_create(client, query='{a="b"}', start=PAST), 500, "disk I/O error")
        set_faults(srv)
        assert _create(client, query='{a="b"}', start=PAST).status_code == 204
        identifier = client.get(PATHS[0]).json()[0]["request_id"]
        set_faults(srv, "catalog.commit eio")
        _error(client.delete(PATHS[0], params={"request_id": identifier}), 500, "disk I/O error")
        set_faults(srv)
        assert len(client.get(PATHS[0]).json()) == 1


# list ------------------------------------------------------------------------------------


def test_empty_list(deletion_app: InProcessApp, tenant: str) -> None:
    with deletion_app.client(tenant) as client:
        response = client.get(PATHS[0])
    assert (response.status_code, response.text) == (200, "[]\n")
    assert response.headers["content-type"] == "application/json"


def test_list_record_shape_and_order(deletion_app: InProcessApp, tenant: str) -> None:
    with deletion_app.client(tenant) as client:
        first = _create(client, query='{a="b"}', start="2023-11-14T22:13:20.5Z", end=LATER)
        time.sleep(0.01)
        second = _create(
            client,
            query='{a="b"} |= "<x&y>"',
            start="2023-11-14T22:13:20Z",
            end=LATER,
            max_interval="1h",
        )
        body = client.get(PATHS[0]).text
        listed = client.get(PATHS[0]).json()
    ids = [first.headers["x-delete-request-id"], second.headers["x-delete-request-id"]]
    assert [r["request_id"] for r in listed] == ids  # oldest first; the sharded one once
    assert list(listed[0]) == [
        "request_id", "start_time", "end_time", "query", "status", "created_at", "user_id"
    ]  # fmt: skip
    assert listed[0]["start_time"] == 1700000000.5
    assert listed[1]["start_time"] == 1700000000 and listed[1]["end_time"] == 1700007200
    assert '"start_time":1700000000,"end_time":1700007200,' in body  # whole seconds, no ".0"
    assert '"query":"{a=\\"b\\"} |= \\"\\u003cx\\u0026y\\u003e\\""' in body  # Go's escaping
    assert all(r["status"] == "received" and r["user_id"] == "" for r in listed)
    assert all(isinstance(r["created_at"], float | int) for r in listed)
    assert re.search(r'"created_at":\d+(\.\d{1,3})?,', body)


@pytest.mark.parametrize(
    ("window", "expected"),
    [
        ({}, [0, 1]),
        ({"start": "1700003000", "end": "1700004000"}, [0]),
        ({"start": "1700009000", "end": "1700010000"}, [1]),
        ({"start": "1700004000"}, [0, 1]),  # counts only with both
        ({"start": "1700007200", "end": "1700007200"}, [0]),  # both ends inclusive
    ],
)
def test_list_by_time_range(
    deletion_app: InProcessApp, tenant: str, window: dict[str, str], expected: list[int]
) -> None:
    with deletion_app.client(tenant) as client:
        ids = [
            _create(client, query='{a="b"}', start=PAST, end=LATER).headers["x-delete-request-id"],
            _create(client, query='{a="c"}', start="1700008000", end="1700009500").headers[
                "x-delete-request-id"
            ],
        ]
        listed = client.get(PATHS[0], params=window).json()
    assert [r["request_id"] for r in listed] == [ids[i] for i in expected]


def test_list_time_errors_are_written_before_the_list(
    deletion_app: InProcessApp, tenant: str
) -> None:
    with deletion_app.client(tenant) as client:
        _create(client, query='{a="b"}', start=PAST, end=LATER)
        response = client.get(PATHS[0], params={"start": "bad", "end": LATER})
        both = client.get(PATHS[0], params={"start": "bad", "end": "worse"})
    assert response.status_code == 400
    assert response.headers["content-type"] == TEXT
    first, rest = response.text.split("\n", 1)
    assert first == "invalid start time: require unix seconds or RFC3339 format"
    assert rest.startswith("[{") and rest.endswith("}]\n")  # start read as 0: it overlaps
    assert both.text.startswith(
        "invalid start time: require unix seconds or RFC3339 format\n"
        "invalid end time: require unix seconds or RFC3339 format\n"
    )


# cancel ----------------------------------------------------------------------------------


def test_cancel_within_the_period(deletion_app: InProcessApp, tenant: str) -> None:
    gen = "/svc/api/v1/cache/generation_numbers"
    with deletion_app.client(tenant) as client:
        identifier = _create(client, query='{a="b"}', start=PAST).headers["x-delete-request-id"]
        before = client.get(gen).json()
        response = client.delete(PATHS[1], params={"request_id": identifier})
        assert (response.status_code, response.content) == (204, b"")
        assert client.get(PATHS[0]).json() == []
        assert int(client.get(gen).json()) > int(before)
        _error(
            client.delete(PATHS[0], params={"request_id": identifier}),
            404,
            "could not find delete request with given id",
        )


def test_cancel_without_request_id_cancels_nothing(deletion_app: InProcessApp, tenant: str) -> None:
    with deletion_app.client(tenant) as client:
        _create(client, query='{a="b"}', start=PAST)
        response = client.delete(PATHS[0])
        assert (response.status_code, response.content) == (204, b"")
        assert len(client.get(PATHS[0]).json()) == 1


def test_cancel_needs_the_right_tenant(deletion_app: InProcessApp, tenant: str) -> None:
    with deletion_app.client(tenant) as client:
        identifier = _create(client, query='{a="b"}', start=PAST).headers["x-delete-request-id"]
    with deletion_app.client(tenant + "-other") as other:
        _error(
            other.delete(PATHS[0], params={"request_id": identifier}),
            404,
            "could not find delete request with given id",
        )


PAST_DEADLINE = (
    "Cancellation of partially completed delete request or delete request past the deadline "
    "of {period} since its creation is not allowed. To force, use the ?force query parameter"
)


def test_cancel_after_the_period_needs_force(make_app: Callable[..., InProcessApp]) -> None:
    app = make_app({"compactor": {**RETENTION["compactor"], "delete_request_cancel_period": "1s"}})
    with app.client("filter-only-late") as client:
        identifier = _create(client, query='{a="b"}', start=PAST).headers["x-delete-request-id"]
        time.sleep(1.2)
        for force in ({}, {"force": "True"}, {"force": "1"}):
            _error(
                client.delete(PATHS[0], params={"request_id": identifier, **force}),
                400,
                PAST_DEADLINE.format(period="1s"),
            )
        response = client.delete(PATHS[0], params={"request_id": identifier, "force": "true"})
        assert response.status_code == 204
        assert client.get(PATHS[0]).json() == []


def _processing_app(make_app: Callable[..., InProcessApp], **compactor: Any) -> InProcessApp:
    return make_app(
        {
            "compactor": {
                **RETENTION["compactor"],
                "delete_request_cancel_period": "0s",
                "delete_request_grace_period": "0s",
                "retention_delete_delay": "0s",
                "compaction_interval": "200ms",
                "apply_retention_interval": "200ms",
                **compactor,
            }
        }
    )


def _wait_status(client: httpx.Client, status: str, timeout: float = 20.0) -> dict[str, Any]:
    """The first listed request once its status matches the regex ``status``."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        listed = client.get(PATHS[0]).json()
        if listed and re.fullmatch(status, listed[0]["status"]):
            return dict(listed[0])
        time.sleep(0.05)
    raise AssertionError(f"status {status!r} not reached: {client.get(PATHS[0]).text}")


def test_partly_processed_requests_cancel_only_with_force(
    make_app: Callable[..., InProcessApp],
) -> None:
    # One shard per pass, passes 3 s apart: a request of five shards is 20% complete, then
    # 40%, ... for a while each.
    app = _processing_app(
        make_app, delete_batch_size=1, compaction_interval="3s", apply_retention_interval="3s"
    )
    with app.client("t") as client:
        identifier = _create(
            client, query='{a="b"} |= "x"', start="1700000000", end="1700014400", max_interval="1h"
        ).headers["x-delete-request-id"]
        partial = _wait_status(client, "[1-9][0-9]% Complete")
        assert (partial["start_time"], partial["end_time"]) == (1700000000, 1700014400)
        _error(
            client.delete(PATHS[0], params={"request_id": identifier}),
            400,
            PAST_DEADLINE.format(period="0s"),
        )
        response = client.delete(PATHS[0], params={"request_id": identifier, "force": "true"})
        assert response.status_code == 204
        assert client.get(PATHS[0]).json() == []  # removed, processed shards and all


def test_processed_requests_cannot_be_cancelled(make_app: Callable[..., InProcessApp]) -> None:
    app = _processing_app(make_app)
    with app.client("t") as client:
        identifier = _create(
            client, query='{a="b"} |= "x"', start="1700000000", end="1700014400", max_interval="1h"
        ).headers["x-delete-request-id"]
        _wait_status(client, "processed")
        for force in ({}, {"force": "true"}):
            _error(
                client.delete(PATHS[0], params={"request_id": identifier, **force}),
                400,
                "deletion of request which is in process or already processed is not allowed",
            )


def test_filter_only_requests_are_never_processed(make_app: Callable[..., InProcessApp]) -> None:
    app = make_app(
        {
            **_processing_overrides(),
            "limits_config": {"deletion_mode": "filter-only", "reject_old_samples": False},
        }
    )
    with app.client("t") as client:
        _create(client, query='{a="b"}', start=PAST, end=LATER)
        time.sleep(1.0)  # several passes
        assert client.get(PATHS[0]).json()[0]["status"] == "received"


def _processing_overrides() -> dict[str, Any]:
    return {
        "compactor": {
            **RETENTION["compactor"],
            "delete_request_cancel_period": "0s",
            "delete_request_grace_period": "0s",
            "compaction_interval": "200ms",
            "apply_retention_interval": "200ms",
        }
    }


# cache generation numbers ------------------------------------------------------------------


def test_cache_generation_numbers(deletion_app: InProcessApp, tenant: str) -> None:
    path = "/loki/api/v1/cache/generation_numbers"
    with deletion_app.client(tenant) as client:
        response = client.get(path)
        assert (response.status_code, response.text) == (200, '""\n')
        assert response.headers["content-type"] == TEXT
        _create(client, query='{a="b"}', start=PAST)
        created = client.get(path).json()
        assert created.isdigit()
        assert client.post(path + "/increase").status_code == 204
        assert int(client.get(path).json()) > int(created)
