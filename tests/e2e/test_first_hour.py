"""What a new user meets first: flags, the home page, the request log and its formats."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import httpx

from svc.version import VERSION
from tests.e2e.clients import push
from tests.e2e.server import Server
from tests.timeline import BASE, WINDOW

ROOT = Path(__file__).parents[2]


def _svc(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "svc", *args], capture_output=True, text=True, timeout=60
    )


def test_version_and_help() -> None:
    version = _svc("-version")
    assert version.returncode == 0
    assert version.stdout.startswith(f"svc, version {VERSION} (branch: ")
    assert "  python version:   CPython " in version.stdout
    for flag in ("-h", "--help"):
        helped = _svc(flag)
        assert helped.returncode == 0
        assert "svc is a multi-tenant log store with the HTTP API" in helped.stdout
        assert "-auth.enabled=BOOL" in helped.stdout and "-log.format=FORMAT" in helped.stdout
    bad = _svc("-auth.enabled=maybe")
    assert bad.returncode == 1 and 'invalid boolean value "maybe" for -auth.enabled' in bad.stderr


def test_make_run_passes_args() -> None:
    done = subprocess.run(
        ["make", "-n", "run", "ARGS=-auth.enabled=false -log.format=json"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0
    assert ".venv/bin/svc -auth.enabled=false -log.format=json" in done.stdout.splitlines()


def test_auth_flag_serves_one_tenant(tmp_path: Path) -> None:
    srv = Server(tmp_path, args=("-auth.enabled=false",)).start()
    try:
        with srv.client() as client:
            assert push(client, [({"app": "solo"}, [(BASE, "hello")])]).status_code == 204
            response = client.get(
                "/loki/api/v1/query_range", params={"query": '{app="solo"}', **WINDOW}
            )
        assert response.status_code == 200
        assert response.json()["data"]["result"][0]["values"] == [[str(BASE), "hello"]]
    finally:
        srv.stop()


def test_home_page(server: Server) -> None:
    response = httpx.get(server.url + "/")
    assert response.status_code == 200
    assert response.headers["content-type"] == "text/html; charset=utf-8"
    page = response.text
    assert f"<h1>svc {VERSION}</h1>" in page
    for href in ("/svc/api/v1/openapi.json", "/metrics", "/ready", "/config"):
        assert f'<a href="{href}">' in page


def _request_lines(srv: Server) -> list[str]:
    """Request lines but those of the readiness polls while the server started."""
    lines = srv.log_path.read_text().splitlines()
    return [line for line in lines if "msg=request " in line and "path=/ready " not in line]


def test_request_log_logfmt(tmp_path: Path) -> None:
    srv = Server(tmp_path).start()
    try:
        with srv.client("team-a") as client:
            client.get("/loki/api/v1/query_range", params={"query": '{app="x"}', **WINDOW})
            client.post("/loki/api/v1/query_range", data={"query": "{app=", **WINDOW})
        httpx.get(srv.url + "/loki/api/v1/labels")
        httpx.get(srv.url + "/ready")
    finally:
        srv.stop()
    lines = _request_lines(srv)
    ok, bad, anonymous = lines
    assert ok.startswith("level=info ts=")
    assert " method=GET path=/loki/api/v1/query_range org_id=team-a status=200 duration=" in ok
    assert ' query="{app=\\"x\\"}"' in ok and " bytes=" in ok and " err=" not in ok
    assert " method=POST " in bad and ' query="{app="' in bad
    assert " status=400 " in bad and ' err="parse error at line 1, col 6: ' in bad
    assert ' org_id="" status=401 ' in anonymous and ' err="no org id"' in anonymous
    assert ' hint="send the tenant in the X-Scope-OrgID header' in anonymous


def test_request_log_json(tmp_path: Path) -> None:
    srv = Server(tmp_path, {"server": {"log_format": "json"}}).start()
    try:
        with srv.client("team-b") as client:
            client.get("/loki/api/v1/labels", params=WINDOW)
    finally:
        srv.stop()
    records = [json.loads(line) for line in srv.log_path.read_text().splitlines()]
    (request,) = [r for r in records if r["msg"] == "request" and r["path"] != "/ready"]
    assert {k: request[k] for k in ("level", "method", "path", "org_id", "status")} == {
        "level": "info",
        "method": "GET",
        "path": "/loki/api/v1/labels",
        "org_id": "team-b",
        "status": "200",
    }
