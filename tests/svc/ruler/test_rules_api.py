"""The rules API: every row of RULER.md 2.1 (POST checks, in order) and 3.1 (errors)."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from tests.svc.ruler.conftest import Client

H = {"X-Scope-OrgID": "team-a"}
PREFIXES = ["/svc/api/v1/rules", "/loki/api/v1/rules", "/api/prom/rules"]
GROUP = """
name: g1
rules:
  - alert: HighErrors
    expr: sum(count_over_time({app="web"} |= "error" [1m])) > 5
    for: 5m
    labels: {severity: page}
    annotations: {summary: "{{ $value }} errors"}
"""
ACCEPTED = {"status": "success", "data": None, "errorType": "", "error": ""}


def text_error(response: Any, status: int, message: str) -> None:
    """A Go ``http.Error`` answer."""
    assert response.status_code == status
    assert response.headers["content-type"] == "text/plain; charset=utf-8"
    assert response.text == message + "\n"


def envelope_error(response: Any, status: int, message: str) -> None:
    """The reference's JSON error envelope (sniffed as text by Go)."""
    assert response.status_code == status
    assert response.headers["content-type"] == "text/plain; charset=utf-8"
    kind = "bad_data" if status == 400 else "server_error"
    assert json.loads(response.text) == {
        "status": "error",
        "data": None,
        "errorType": kind,
        "error": message,
    }


def accepted(response: Any) -> None:
    assert response.status_code == 202
    assert response.headers["content-type"] == "application/json"
    assert response.text == json.dumps(ACCEPTED, separators=(",", ":"))


def rules_dir(tmp_path: Path) -> Path:
    return tmp_path / "data" / "rules"


# RULER.md 2.1 -----------------------------------------------------------------------


@pytest.mark.parametrize("prefix", PREFIXES)
def test_success_on_every_prefix(client: Client, prefix: str) -> None:
    accepted(client.post(f"{prefix}/ns1", content=GROUP, headers=H))
    got = client.get(f"{prefix}/ns1/g1", headers=H)
    assert got.status_code == 200
    assert got.headers["content-type"] == "application/yaml"
    assert got.text.startswith("name: g1\nrules:\n    - alert: HighErrors\n")


def test_row0_no_org_id(client: Client) -> None:
    response = client.post("/loki/api/v1/rules/ns1", content=GROUP)
    assert (response.status_code, response.text) == (401, "no org id")


def test_row1_checked_after_the_tenant(client: Client) -> None:
    response = client.post("/loki/api/v1/rules/%252E%252E", content=GROUP)
    assert response.status_code == 401


def test_row2_body_cannot_be_read(client: Client) -> None:
    app = client.app
    messages: list[dict[str, Any]] = []
    scope = {
        "type": "http",
        "method": "POST",
        "path": "/loki/api/v1/rules/ns1",
        "raw_path": b"/loki/api/v1/rules/ns1",
        "query_string": b"",
        "headers": [(b"x-scope-orgid", b"team-a"), (b"content-length", b"100")],
        "http_version": "1.1",
        "scheme": "http",
        "server": ("127.0.0.1", 80),
        "client": ("127.0.0.1", 1234),
        "root_path": "",
        "app": app,
    }

    async def receive() -> dict[str, Any]:
        return {"type": "http.disconnect"}

    async def send(message: dict[str, Any]) -> None:
        messages.append(message)

    with client.portal() as portal:
        portal.call(app, scope, receive, send)
    start = next(m for m in messages if m["type"] == "http.response.start")
    body = b"".join(m.get("body", b"") for m in messages if m["type"] == "http.response.body")
    assert start["status"] == 400
    assert body == b"client disconnected prematurely\n"


@pytest.mark.parametrize(
    "body",
    [
        "name: [a]",
        "rules: {a: b}",
        "name: g\ninterval: 5",
        "name: g\nrules:\n  - alert: A\n    expr: x\n    for: soon",
        "name: g\nlimit: many",
        "- a\n- b",
        "name: a\nname: b",
        "{unclosed",
        "name: g\nrules:\n  - alert: A\n    labels: [x]",
    ],
)
def test_row3_not_a_rule_group(client: Client, body: str) -> None:
    response = client.post("/loki/api/v1/rules/ns1", content=body, headers=H)
    text_error(response, 400, "unable to decoded rule group")


def test_row4_every_error_joined(client: Client) -> None:
    body = """
name: ""
rules:
  - expr: sum(rate({a="b"}[1m]))
  - record: ok
    alert: both
    expr: sum(rate({a="b"}[1m]))
  - record: "bad name"
    expr: sum(rate({a="b"}[1m]))
"""
    response = client.post("/loki/api/v1/rules/ns1", content=body, headers=H)
    text_error(
        response,
        400,
        "group 0: Groupname must not be empty, one of 'record' or 'alert' must be set, "
        "only one of 'record' and 'alert' must be set, invalid recording rule name: bad name",
    )


def test_row4_whole_file_body_is_an_unnamed_group(client: Client) -> None:
    body = "groups:\n  - name: g1\n    rules: []\n"
    response = client.post("/loki/api/v1/rules/ns1", content=body, headers=H)
    text_error(response, 400, "group 0: Groupname must not be empty")


def test_row5_rules_per_group_limit(make_client: Callable[..., Client]) -> None:
    client = make_client({"limits_config": {"ruler_max_rules_per_rule_group": 1}})
    body = GROUP + '  - record: r\n    expr: sum(rate({a="b"}[1m]))\n'
    response = client.post("/loki/api/v1/rules/ns1", content=body, headers=H)
    text_error(response, 400, "per-user rules per rule group limit (limit: 1 actual: 2) exceeded")
    accepted(client.post("/loki/api/v1/rules/ns1", content=GROUP, headers=H))


def test_row5_limit_per_tenant_override(make_client: Callable[..., Client]) -> None:
    client = make_client({"overrides": {"team-a": {"ruler_max_rules_per_rule_group": 1}}})
    body = GROUP + '  - record: r\n    expr: sum(rate({a="b"}[1m]))\n'
    response = client.post("/loki/api/v1/rules/ns1", content=body, headers=H)
    assert response.status_code == 400
    other = client.post("/loki/api/v1/rules/ns1", content=body, headers={"X-Scope-OrgID": "b"})
    accepted(other)


def test_row6_listing_existing_groups_fails(client: Client, tmp_path: Path) -> None:
    folder = rules_dir(tmp_path) / "team-a"
    folder.mkdir(parents=True)
    (folder / "broken").write_text("groups: [")
    response = client.post("/loki/api/v1/rules/ns1", content=GROUP, headers=H)
    assert response.status_code == 500
    assert response.text.startswith(f"error parsing {folder / 'broken'}: ")


def test_row7_groups_limit_counts_one_more(make_client: Callable[..., Client]) -> None:
    client = make_client({"limits_config": {"ruler_max_rule_groups_per_tenant": 1}})
    accepted(client.post("/loki/api/v1/rules/ns1", content=GROUP, headers=H))
    # replacing the only group while at the limit is rejected too (the reference's +1)
    response = client.post("/loki/api/v1/rules/ns1", content=GROUP, headers=H)
    text_error(response, 400, "per-user rule groups limit (limit: 1 actual: 2) exceeded")


def test_row8_store_write_fails(client: Client, tmp_path: Path) -> None:
    (rules_dir(tmp_path) / "team-a" / "ns1").mkdir(parents=True)  # a directory in the way
    response = client.post("/loki/api/v1/rules/ns1", content=GROUP, headers=H)
    assert response.status_code == 500
    assert response.headers["content-type"] == "text/plain; charset=utf-8"
    assert "Is a directory" in response.text


def test_row9_unknown_keys_ignored_and_upsert(client: Client) -> None:
    accepted(client.post("/loki/api/v1/rules/ns1", content="x: 1\n" + GROUP, headers=H))
    replaced = GROUP.replace("> 5", "> 9")
    accepted(
        client.post(
            "/loki/api/v1/rules/ns1",
            content=replaced,
            headers={**H, "Content-Type": "text/x-nonsense"},
        )
    )
    got = client.get("/loki/api/v1/rules/ns1", headers=H).text
    assert got.count("name: g1") == 1
    assert "> 9" in got


def test_dropped_fields_are_not_persisted(client: Client) -> None:
    body = """
name: g1
interval: 90s
limit: 3
query_offset: 1m
labels: {team: a}
rules:
  - alert: A
    expr: sum(rate({a="b"}[1m])) > 0
    for: 0s
    keep_firing_for: 5m
    labels: {}
"""
    accepted(client.post("/loki/api/v1/rules/ns1", content=body, headers=H))
    assert client.get("/loki/api/v1/rules/ns1/g1", headers=H).text == (
        "name: g1\n"
        "interval: 1m30s\n"
        "limit: 3\n"
        "rules:\n"
        "    - alert: A\n"
        '      expr: sum(rate({a="b"}[1m])) > 0\n'
    )


# RULER.md 3.1 -----------------------------------------------------------------------


def test_list_without_groups(client: Client) -> None:
    text_error(client.get("/loki/api/v1/rules", headers=H), 404, "no rule groups found")


def test_list_unknown_namespace(client: Client) -> None:
    accepted(client.post("/loki/api/v1/rules/ns1", content=GROUP, headers=H))
    text_error(client.get("/loki/api/v1/rules/other", headers=H), 404, "no rule groups found")


def test_get_unknown_group(client: Client) -> None:
    accepted(client.post("/loki/api/v1/rules/ns1", content=GROUP, headers=H))
    text_error(client.get("/loki/api/v1/rules/ns1/nope", headers=H), 404, "group does not exist")
    text_error(client.get("/loki/api/v1/rules/nope/g1", headers=H), 404, "group does not exist")


def test_delete_unknown_group_is_accepted(client: Client) -> None:
    accepted(client.delete("/loki/api/v1/rules/ns1/nope", headers=H))


def test_delete_unknown_namespace(client: Client) -> None:
    response = client.delete("/loki/api/v1/rules/nope", headers=H)
    text_error(response, 404, "group namespace does not exist")


def test_delete_group_and_namespace(client: Client) -> None:
    accepted(client.post("/loki/api/v1/rules/ns1", content=GROUP, headers=H))
    accepted(client.post("/loki/api/v1/rules/ns1", content=GROUP.replace("g1", "g2"), headers=H))
    accepted(client.post("/loki/api/v1/rules/ns2", content=GROUP, headers=H))
    accepted(client.delete("/loki/api/v1/rules/ns1/g1", headers=H))
    listed = client.get("/loki/api/v1/rules", headers=H).text
    assert "name: g2" in listed and "ns2:" in listed and listed.count("name: g1") == 1
    accepted(client.delete("/loki/api/v1/rules/ns2", headers=H))
    accepted(client.delete("/loki/api/v1/rules/ns1/g2", headers=H))
    text_error(client.get("/loki/api/v1/rules", headers=H), 404, "no rule groups found")


def test_store_errors_on_get_are_400(client: Client, tmp_path: Path) -> None:
    folder = rules_dir(tmp_path) / "team-a"
    folder.mkdir(parents=True)
    (folder / "ns1").write_text("groups:\n  - name: g\n    bogus: 1\n")
    for path in ("", "/ns1", "/ns1/g"):
        response = client.get(f"/loki/api/v1/rules{path}", headers=H)
        assert response.status_code == 400
        assert response.text.startswith(f"error parsing {folder / 'ns1'}: ")


def test_other_errors_on_delete_are_500_envelopes(client: Client, tmp_path: Path) -> None:
    folder = rules_dir(tmp_path) / "team-a"
    folder.mkdir(parents=True)
    (folder / "ns1").write_text("groups: [")
    response = client.delete("/loki/api/v1/rules/ns1/g", headers=H)
    assert response.status_code == 500
    assert json.loads(response.text)["error"].startswith(f"error parsing {folder / 'ns1'}: ")


@pytest.mark.parametrize("tenant", ["a|b", "bad/tenant", ".."])
def test_tenant_errors(client: Client, tenant: str) -> None:
    for method, path in [("GET", ""), ("POST", "/ns"), ("DELETE", "/ns"), ("GET", "/ns/g")]:
        response = client.request(
            method, f"/loki/api/v1/rules{path}", headers={"X-Scope-OrgID": tenant}, content=GROUP
        )
        envelope_error(response, 400, "no org id")  # the reference: 500


def test_post_to_a_group_path_is_not_allowed(client: Client) -> None:
    response = client.post("/loki/api/v1/rules/ns1/g1", content=GROUP, headers=H)
    assert response.status_code == 405


def test_labels_filter(client: Client) -> None:
    body = GROUP + '  - record: r\n    expr: sum(rate({a="b"}[1m]))\n    labels: {team: x}\n'
    accepted(client.post("/loki/api/v1/rules/ns1", content=body, headers=H))
    accepted(client.post("/loki/api/v1/rules/ns2", content=GROUP, headers=H))
    listed = client.get("/loki/api/v1/rules", params={"labels": "team:x"}, headers=H).text
    assert "record: r" in listed and "HighErrors" not in listed and "ns2" not in listed
    either = client.get(
        "/loki/api/v1/rules/ns1", params={"labels": "team:y,severity:page"}, headers=H
    )
    assert "HighErrors" in either.text and "record: r" not in either.text
    assert client.get("/loki/api/v1/rules", params={"labels": "x"}, headers=H).status_code == 400


def test_tenants_with_same_names_stay_apart(client: Client) -> None:
    other = {"X-Scope-OrgID": "team-b"}
    accepted(client.post("/loki/api/v1/rules/ns1", content=GROUP, headers=H))
    accepted(
        client.post("/loki/api/v1/rules/ns1", content=GROUP.replace("> 5", "> 7"), headers=other)
    )
    assert "> 5" in client.get("/loki/api/v1/rules/ns1/g1", headers=H).text
    assert "> 7" in client.get("/loki/api/v1/rules/ns1/g1", headers=other).text
    accepted(client.delete("/loki/api/v1/rules/ns1", headers=H))
    text_error(client.get("/loki/api/v1/rules", headers=H), 404, "no rule groups found")
    assert client.get("/loki/api/v1/rules/ns1/g1", headers=other).status_code == 200


def test_enable_api_false_removes_routes(make_client: Callable[..., Client]) -> None:
    client = make_client({"ruler": {"enable_api": False}})
    for path in ("/loki/api/v1/rules", "/prometheus/api/v1/rules", "/prometheus/api/v1/alerts"):
        response = client.get(path, headers=H)
        assert (response.status_code, response.text) == (404, "404 page not found\n")
    assert "ruler => Running" in client.get("/services").text


def test_target_ruler_serves_only_the_ruler_and_common_routes(
    make_client: Callable[..., Client],
) -> None:
    client = make_client({"target": "ruler"})
    accepted(client.post("/loki/api/v1/rules/ns1", content=GROUP, headers=H))
    assert client.get("/prometheus/api/v1/rules", headers=H).status_code == 200
    for path in ("/ready", "/metrics", "/services", "/config", "/loki/api/v1/status/buildinfo"):
        assert client.get(path).status_code == 200, path
    assert client.get("/loki/api/v1/format_query", params={"query": '{a="b"}'}).status_code == 200
    for method, path in [
        ("POST", "/loki/api/v1/push"),
        ("GET", "/loki/api/v1/query_range"),
        ("GET", "/loki/api/v1/labels"),
        ("POST", "/flush"),
    ]:
        assert client.request(method, path, headers=H).status_code == 404, path


def test_target_without_the_ruler(make_client: Callable[..., Client]) -> None:
    client = make_client({"target": "write"})
    assert client.get("/loki/api/v1/rules", headers=H).status_code == 404
    assert "ruler" not in client.get("/services").text
