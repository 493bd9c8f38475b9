"""Relabelling, Alertmanager payloads and the ruler's start-up checks (RULER.md 6, 9)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

import pytest

from svc.config import config_from_yaml, validate_config
from svc.ruler.alerting import Alert, AlertState
from svc.ruler.config import AlertmanagerClientConfig, RelabelConfig, RulerConfig
from svc.ruler.notifier import Notifier, generator_url, rfc3339_millis, targets
from svc.ruler.relabel import relabel

S = 1_000_000_000


@pytest.mark.parametrize(
    ("step", "labels", "out"),
    [
        (
            RelabelConfig(source_labels=["a"], regex="x(.*)", target_label="b", replacement="<$1>"),
            {"a": "xyz"},
            {"a": "xyz", "b": "<yz>"},
        ),
        (
            RelabelConfig(source_labels=["a"], regex="nomatch", target_label="b"),
            {"a": "x"},
            {"a": "x"},
        ),
        (
            RelabelConfig(source_labels=["a"], regex="(.*)", target_label="a", replacement=""),
            {"a": "x"},
            {},
        ),
        (
            RelabelConfig(source_labels=["a", "b"], separator="-", regex="1-2", action="keep"),
            {"a": "1", "b": "2"},
            {"a": "1", "b": "2"},
        ),
        (RelabelConfig(source_labels=["a"], regex="1", action="keep"), {"a": "12"}, None),
        (RelabelConfig(source_labels=["a"], regex="1.*", action="drop"), {"a": "12"}, None),
        (RelabelConfig(regex="tmp_.*", action="labeldrop"), {"tmp_a": "1", "b": "2"}, {"b": "2"}),
        (RelabelConfig(regex="b", action="labelkeep"), {"tmp_a": "1", "b": "2"}, {"b": "2"}),
        (
            RelabelConfig(regex="x_(.*)", action="labelmap", replacement="y_$1"),
            {"x_a": "1"},
            {"x_a": "1", "y_a": "1"},
        ),
        (
            RelabelConfig(source_labels=["a"], target_label="a", action="uppercase"),
            {"a": "Ab"},
            {"a": "AB"},
        ),
        (
            RelabelConfig(source_labels=["a"], target_label="c", action="keepequal"),
            {"a": "1", "c": "1"},
            {"a": "1", "c": "1"},
        ),
        (
            RelabelConfig(source_labels=["a"], target_label="c", action="dropequal"),
            {"a": "1", "c": "1"},
            None,
        ),
        (
            RelabelConfig(source_labels=["a"], target_label="h", modulus=10, action="hashmod"),
            {"a": "x"},
            {"a": "x", "h": "6"},
        ),  # low 64 bits of md5("x"), big-endian, mod 10
    ],
)
def test_relabel(step: RelabelConfig, labels: dict[str, str], out: dict[str, str] | None) -> None:
    assert relabel(labels, [step]) == out


def test_generator_url() -> None:
    url = generator_url("https://g.example", 'sum(x{a="<b>"}) > 1', "uid1")
    parts = urlsplit(url)
    assert (parts.netloc, parts.path) == ("g.example", "/explore")
    left = parse_qs(parts.query)["left"][0]
    assert left == (
        '{"queries":[{"expr":"sum(x{a=\\"\\u003cb\\u003e\\"}) \\u003e 1","queryType":"range",'
        '"datasource":{"type":"loki","uid":"uid1"}}]}'
    )
    assert "datasource" not in generator_url("", "x", "")


def test_payload_external_labels_and_relabelling() -> None:
    cfg = RulerConfig(
        alertmanager_url="http://am.example:9093/prefix/",
        external_labels={"cluster": "eu", "app": "not-used"},
        alert_relabel_configs=[
            RelabelConfig(source_labels=["severity"], regex="debug", action="drop")
        ],
        external_url="https://g",
    )
    notifier = Notifier(cfg, lambda *a: None)
    assert [t.url for t in notifier.targets] == ["http://am.example:9093/prefix/api/v2/alerts"]
    alert = Alert(
        labels=(("alertname", "A"), ("app", "web")),
        annotations=(("s", "x"),),
        state=AlertState.FIRING,
        active_at_ns=10 * S,
        value=1.0,
        fired_at_ns=20 * S + 5_000_000,
        valid_until_ns=260 * S,
    )
    payload = notifier.payload(alert, "vector(1)")
    assert payload is not None
    assert json.dumps(payload) == json.dumps(
        {
            "annotations": {"s": "x"},
            "endsAt": "1970-01-01T00:04:20.000Z",
            "startsAt": "1970-01-01T00:00:20.005Z",
            "generatorURL": generator_url("https://g", "vector(1)", ""),
            "labels": {"alertname": "A", "app": "web", "cluster": "eu"},
        }
    )
    debug = Alert((("severity", "debug"),), (), AlertState.FIRING, 0, 1.0)
    assert notifier.payload(debug, "x") is None
    resolved = Alert(
        (("a", "b"),), (), AlertState.INACTIVE, 0, 1.0, resolved_at_ns=30 * S, valid_until_ns=99 * S
    )
    assert notifier.payload(resolved, "x")["endsAt"] == rfc3339_millis(30 * S)  # type: ignore[index]


def test_targets_auth_and_api_version() -> None:
    cfg = RulerConfig(
        alertmanager_url="http://u:p@a:1,https://b/x",
        enable_alertmanager_v2=False,
    )
    found = targets(cfg)
    assert [t.url for t in found] == ["http://a:1/api/v1/alerts", "https://b/x/api/v1/alerts"]
    assert found[0].authorization == "Basic dTpw" and found[1].authorization is None
    client = AlertmanagerClientConfig(credentials="tok")
    bearer = targets(RulerConfig(alertmanager_url="http://a", alertmanager_client=client))
    assert bearer[0].authorization == "Bearer tok"


def _errors(text: str) -> list[str]:
    return validate_config(config_from_yaml(text))


@pytest.mark.parametrize(
    ("text", "error"),
    [
        (
            "ruler: {remote_write: {enabled: true}}",
            "CONFIG ERROR: invalid ruler config: invalid ruler remote-write config: "
            "remote-write enabled but no clients URL are configured",
        ),
        (
            "ruler: {remote_write: {enabled: true, clients: {prom: {name: n}}}}",
            "CONFIG ERROR: invalid ruler config: invalid ruler remote-write config: "
            "remote-write enabled but client 'n' URL for tenant prom is not configured",
        ),
        (
            "ruler: {remote_write: {enabled: true, clients: {prom: {url: 'ftp://x'}}}}",
            "CONFIG ERROR: invalid ruler config: invalid ruler remote-write config: "
            'invalid remote write client for tenant "prom": unsupported scheme "ftp" for URL',
        ),
        (
            "ruler: {remote_write: {client: {url: 'http://a'}, clients: {b: {url: 'http://b'}}}}",
            "ruler remote write config: both 'client' and 'clients' options are defined; "
            "'client' is deprecated, please only use 'clients'",
        ),
        (
            "ruler: {evaluation: {mode: sideways}}",
            "invalid ruler evaluation config: invalid evaluation mode: sideways. "
            "Acceptable modes are: local, remote",
        ),
        (
            "ruler: {sharding_algo: x}",
            'CONFIG ERROR: invalid ruler config: invalid sharding algorithm "x", '
            "supported algorithms are [by-group by-rule]",
        ),
        (
            "ruler: {sharding_strategy: x}",
            'CONFIG ERROR: invalid ruler config: invalid sharding strategy "x", '
            "supported strategies are [default shuffle-sharding]",
        ),
        (
            "ruler: {storage: {type: local}}",
            "CONFIG ERROR: invalid ruler config: invalid ruler store config: "
            "directory required for local rules config",
        ),
        (
            "ruler: {storage: {type: tape}}",
            "CONFIG ERROR: invalid ruler config: invalid ruler store config: unrecognized rule "
            "storage mode tape, choose one of: configdb, gcs, s3, swift, azure, local",
        ),
        (
            "ruler: {enable_alertmanager_discovery: true, alertmanager_url: 'http://am:9093'}",
            "when alertmanager-discovery is on, host name must be of the form "
            '_portname._tcp.service.fqdn (is "am")',
        ),
        (
            "ruler: {alert_relabel_configs: [{action: replace}]}",
            "relabel configuration for replace action requires 'target_label'",
        ),
        (
            "ruler: {alert_relabel_configs: [{regex: '(', action: drop}]}",
            "invalid relabel regex: error parsing regexp: missing closing ): `(`",
        ),
    ],
)
def test_startup_errors(text: str, error: str) -> None:
    assert error in _errors(text)


def test_defaults_are_valid_and_match_the_reference() -> None:
    config = config_from_yaml(None)
    assert validate_config(config) == []
    ruler = config.ruler
    assert (ruler.evaluation_interval, ruler.poll_interval, ruler.resend_delay) == (60, 60, 60)
    assert (ruler.for_outage_tolerance, ruler.for_grace_period) == (3600, 600)
    assert (ruler.notification_queue_capacity, ruler.notification_timeout) == (10000, 10)
    assert ruler.enable_api and not ruler.remote_write.enabled
    assert ruler.remote_write.add_org_id_header
    assert (ruler.wal.dir, ruler.wal.max_age, ruler.wal_cleaner.min_age) == (
        "ruler-wal",
        14400,
        43200,
    )
    assert config.limits_config.ruler_max_rules_per_rule_group == 0


def test_verify_config_reports_ruler_errors(tmp_path: Path) -> None:
    path = tmp_path / "c.yaml"
    path.write_text("ruler: {remote_write: {enabled: true}, evaluation: {mode: x}}\n")
    done = subprocess.run(
        [sys.executable, "-m", "svc", f"-config.file={path}", "-verify-config"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 1
    assert "MULTIPLE CONFIG ERRORS FOUND" in done.stderr
    assert "remote-write enabled but no clients URL are configured" in done.stderr
    assert "invalid evaluation mode: x" in done.stderr


def test_example_config_is_valid() -> None:
    text = (Path(__file__).resolve().parents[3] / "examples" / "config.yaml").read_text()
    config = config_from_yaml(text)
    assert validate_config(config) == []
    assert config.ruler.evaluation_interval == 60 and not config.ruler.remote_write.enabled
