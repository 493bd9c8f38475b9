"""The ruler end to end: real svc, real Prometheus (remote-write receiver) and Alertmanager.

Everything is checked through the receivers' own HTTP APIs: an alert of a LogQL rule
reaches Alertmanager with its labels and annotations and resolves when the condition
stops; recording rules' series land in Prometheus with the values the same LogQL instant
query gives at the same times, per tenant; stale markers end them; and samples produced
while Prometheus is down, across a ``kill -9`` of svc, all arrive once it is back.
"""

from __future__ import annotations

import itertools
import re
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, TypeVar

import httpx
import pytest

from tests.e2e.clients import push
from tests.e2e.promstack import Alertmanager, Prometheus, require_binaries
from tests.e2e.server import Server

T = TypeVar("T")
S = 1_000_000_000


@pytest.fixture(scope="module")
def prometheus(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Prometheus]:
    require_binaries()
    prom = Prometheus(tmp_path_factory.mktemp("prometheus"))
    prom.start()
    yield prom
    prom.stop()


@pytest.fixture(scope="module")
def alertmanager(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Alertmanager]:
    require_binaries()
    am = Alertmanager(tmp_path_factory.mktemp("alertmanager"))
    am.start()
    yield am
    am.stop()


def ruler_overrides(prom_url: str, am_url: str = "") -> dict[str, Any]:
    return {
        "ruler": {
            "evaluation_interval": "1s",
            "poll_interval": "1s",
            "resend_delay": "1m",
            "alertmanager_url": am_url,
            "external_url": "https://grafana.example",
            "external_labels": {"cluster": "e2e"},
            "remote_write": {
                "enabled": True,
                "clients": {
                    "prom": {
                        "url": prom_url + "/api/v1/write",
                        "queue_config": {
                            "batch_send_deadline": "100ms",
                            "min_backoff": "50ms",
                            "max_backoff": "200ms",
                        },
                    }
                },
            },
        }
    }


def wait_for(check: Callable[[], T | None], timeout: float = 20.0, what: str = "") -> T:
    deadline = time.monotonic() + timeout
    while True:
        found = check()
        if found:
            return found
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.2)


def post_rules(client: httpx.Client, namespace: str, body: str) -> None:
    response = client.post(f"/loki/api/v1/rules/{namespace}", content=body)
    assert response.status_code == 202, response.text


ALERT_GROUP = """
name: errors
interval: 1s
rules:
  - alert: HighErrors
    expr: sum by (app) (count_over_time({app="web"} |= "error" [3s])) > 0
    for: 1s
    labels:
      severity: page
      team: "{{ $labels.app }}-team"
    annotations:
      summary: "{{ $labels.app }} logged {{ $value }} errors"
      link: "{{ externalURL }}/d/x"
"""


def test_alert_fires_in_alertmanager_and_resolves(
    make_server: Callable[..., Server], prometheus: Prometheus, alertmanager: Alertmanager
) -> None:
    srv = make_server(ruler_overrides(prometheus.url, alertmanager.url))
    with srv.client("alerts") as client:
        post_rules(client, "team", ALERT_GROUP)
        now = time.time_ns()
        lines = [(now - i * 100_000_000, f"error {i}") for i in range(10)]
        assert push(client, [({"app": "web"}, lines)]).status_code == 204

        def arrived() -> dict[str, Any] | None:
            for alert in alertmanager.alerts():
                if alert["labels"].get("alertname") == "HighErrors":
                    return alert
            return None

        alert = wait_for(arrived, what="the alert in Alertmanager")
        assert alert["labels"] == {
            "alertname": "HighErrors",
            "app": "web",
            "cluster": "e2e",
            "severity": "page",
            "team": "web-team",
        }
        assert re.fullmatch(r"web logged \d+ errors", alert["annotations"]["summary"])
        assert alert["annotations"]["link"] == "https://grafana.example/d/x"
        assert alert["generatorURL"].startswith("https://grafana.example/explore?left=")
        firing = client.get("/prometheus/api/v1/alerts").json()["data"]["alerts"]
        assert [a["state"] for a in firing] == ["firing"]
        assert firing[0]["labels"]["team"] == "web-team" and "cluster" not in firing[0]["labels"]

        # No new errors: the 3s window empties, the rule resolves and says so. Without the
        # resolved notification Alertmanager would keep it for 4 x resend_delay (4 minutes).
        wait_for(lambda: arrived() is None, timeout=15, what="the alert to resolve")
        rules = client.get("/prometheus/api/v1/rules").json()["data"]["groups"][0]["rules"]
        assert (rules[0]["state"], rules[0]["health"], rules[0]["alerts"]) == ("inactive", "ok", [])
    assert srv.stop() == 0


RECORD_GROUP = """
name: lines
interval: 1s
rules:
  - record: app:lines:count10s
    expr: sum by (app) (count_over_time({job="e2e"}[10s]))
    labels:
      source: svc
"""


def _series(prom: Prometheus, name: str, app: str) -> list[tuple[float, float]]:
    found = prom.query(f'{name}{{app="{app}"}}[2m]')
    if not found:
        return []
    return [(float(t), float(v)) for t, v in found[0]["values"]]


def _hand_query(client: httpx.Client, expr: str, at: float) -> dict[str, float]:
    response = client.get("/loki/api/v1/query", params={"query": expr, "time": f"{at:.3f}"})
    assert response.status_code == 200, response.text
    return {
        item["metric"]["app"]: float(item["value"][1]) for item in response.json()["data"]["result"]
    }


def test_recording_rule_values_per_tenant_equal_the_query(
    make_server: Callable[..., Server], prometheus: Prometheus
) -> None:
    srv = make_server(ruler_overrides(prometheus.url))
    now = time.time_ns()
    expr = 'sum by (app) (count_over_time({job="e2e"}[10s]))'
    for tenant, app, every in (("rec-a", "web-a", 500_000_000), ("rec-b", "web-b", 700_000_000)):
        with srv.client(tenant) as client:
            lines = [(now - k * every, f"line {k}") for k in range(25)]
            assert push(client, [({"job": "e2e", "app": app}, lines)]).status_code == 204
            post_rules(client, "shared", RECORD_GROUP)  # same namespace and group names

    series = {
        app: wait_for(
            lambda app=app: (
                (s := _series(prometheus, "app:lines:count10s", app)) and len(s) >= 5 and s
            ),
            what=f"samples of {app}",
        )
        for app in ("web-a", "web-b")
    }
    labels = {tuple(sorted(r["metric"].items())) for r in prometheus.query("app:lines:count10s")}
    assert labels >= {
        (("__name__", "app:lines:count10s"), ("app", app), ("source", "svc"))
        for app in ("web-a", "web-b")
    }
    for tenant, app in (("rec-a", "web-a"), ("rec-b", "web-b")):
        with srv.client(tenant) as client:
            for at, value in series[app]:
                assert _hand_query(client, expr, at) == {app: value}, (tenant, at)
            assert sorted(_hand_query(client, expr, series[app][-1][0])) == [app]

    # the 10s windows empty out: the series end with stale markers, so an instant query
    # no longer finds them (without markers Prometheus would return the last value for 5m)
    wait_for(
        lambda: not prometheus.query('app:lines:count10s{app="web-a"}'),
        timeout=30,
        what="the stale marker",
    )
    assert srv.stop() == 0


CONST_GROUP = """
name: const
interval: 1s
rules:
  - record: svc:one
    expr: vector(1)
"""


def _timestamps(prom: Prometheus) -> list[float]:
    found = prom.query("svc:one[10m]")
    return [float(t) for t, _ in found[0]["values"]] if found else []


def test_outage_and_kill_lose_no_sample(make_server: Callable[..., Server], tmp_path: Path) -> None:
    require_binaries()
    prom = Prometheus(tmp_path / "prom")
    prom.start()
    try:
        srv = make_server(ruler_overrides(prom.url))
        with srv.client("outage") as client:
            post_rules(client, "ns", CONST_GROUP)
        wait_for(lambda: len(_timestamps(prom)) >= 3, what="first samples")
        prom.stop()
        time.sleep(3)  # evaluations go on, samples wait in the buffer
        killed_at = time.time()
        srv.kill()
        srv.start()
        with srv.client("outage") as client:
            assert "svc:one" in client.get("/loki/api/v1/rules/ns/const").text
        time.sleep(1)
        prom.start()
        wait_for(
            lambda: _timestamps(prom) and _timestamps(prom)[-1] > time.time() - 2,
            what="samples after the restarts",
        )
        stamps = _timestamps(prom)
        before = [t for t in stamps if t < killed_at]
        # one sample per second from the first until the kill, including the 3 s in which
        # Prometheus was down and the samples sat in the buffer of the killed process
        steps = {round(b - a, 3) for a, b in itertools.pairwise(before)}
        assert steps == {1.0}, stamps
        assert before[-1] >= killed_at - 1.5
        after = [t for t in stamps if t > killed_at]
        assert after and {round(b - a, 3) for a, b in itertools.pairwise(after)} <= {1.0}
        assert srv.stop() == 0
    finally:
        prom.stop()


RESTORE_GROUP = """
name: restore
interval: 1s
rules:
  - alert: Firing
    expr: vector(1) > 0
    for: 2s
  - alert: Pending
    expr: vector(2) > 0
    for: 1m
"""


def _alerts(client: httpx.Client) -> dict[str, dict[str, Any]]:
    found = client.get("/prometheus/api/v1/alerts").json()["data"]["alerts"]
    return {alert["labels"]["alertname"]: alert for alert in found}


def _seconds(rfc3339: str) -> float:
    from datetime import datetime

    return datetime.fromisoformat(rfc3339.replace("Z", "+00:00")).timestamp()


def test_alert_state_restored_after_kill(make_server: Callable[..., Server]) -> None:
    srv = make_server(
        {"ruler": {"evaluation_interval": "1s", "poll_interval": "1s", "for_grace_period": "1s"}}
    )
    with srv.client("restore") as client:
        post_rules(client, "ns", RESTORE_GROUP)
        before = wait_for(
            lambda: (a := _alerts(client)) and a.get("Firing", {}).get("state") == "firing" and a,
            what="a firing and a pending alert",
        )
    time.sleep(5)  # both active a while, their state saved at each evaluation
    srv.kill()
    down = time.time()
    time.sleep(2)
    restarted = time.time()
    srv.start()
    with srv.client("restore") as client:
        # restored after the second evaluation: before that the new alerts start afresh.
        # A restored firing alert keeps its activeAt from before the kill (a fresh one is
        # active from after the restart), whatever time the restart itself took; the
        # group's alerts are restored in one evaluation
        after = wait_for(
            lambda: (
                (a := _alerts(client))
                and {"Firing", "Pending"} <= a.keys()
                and _seconds(a["Firing"]["activeAt"]) < restarted
                and a
            ),
            timeout=60,
            what="the restored alerts",
        )
        outage = time.time() - down
        firing = after["Firing"]
        assert _seconds(firing["activeAt"]) == int(_seconds(before["Firing"]["activeAt"]))
        wait_for(lambda: _alerts(client)["Firing"]["state"] == "firing", what="firing again")
        # 1m "for", a few seconds spent: the time svc was down does not count towards it
        pending = after["Pending"]
        original = int(_seconds(before["Pending"]["activeAt"]))
        assert pending["state"] == "pending"
        assert original + 2 <= _seconds(pending["activeAt"]) <= original + outage + 1
    assert srv.stop() == 0
