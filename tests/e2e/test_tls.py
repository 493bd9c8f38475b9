"""TLS and mutual TLS on the HTTP listener: Go's five client-auth policies, tried with curl
and with Python's ssl client; the minimum version; WebSocket tail, an OTLP exporter and
certificate rotation over TLS."""

from __future__ import annotations

import asyncio
import http.client
import json
import shutil
import socket
import ssl
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import websockets
from cryptography import x509
from opentelemetry._logs import LogRecord
from opentelemetry.exporter.otlp.proto.http._log_exporter import OTLPLogExporter
from opentelemetry.sdk._logs import LoggerProvider
from opentelemetry.sdk._logs.export import SimpleLogRecordProcessor
from opentelemetry.sdk.resources import Resource

from tests.certs import CertPair, TestPKI, make_pki
from tests.e2e.clients import now_ns, push, query_range, stream_values
from tests.e2e.server import Server

MODES = (
    "NoClientCert",
    "RequestClientCert",
    "RequireAnyClientCert",
    "VerifyClientCertIfGiven",
    "RequireAndVerifyClientCert",
)
CLIENTS = ("none", "trusted", "untrusted", "expired")

# Whether a request completes, per policy and client certificate, as Go's crypto/tls decides:
# "Request" and "RequireAny" take any certificate unverified, "Verify" policies check the
# chain and validity of one that is sent, "Require" policies refuse a client that sends none.
ACCEPTED = {
    #                             none   trusted untrusted expired
    "NoClientCert":               (True,  True,   True,     True),
    "RequestClientCert":          (True,  True,   True,     True),
    "RequireAnyClientCert":       (False, True,   True,     True),
    "VerifyClientCertIfGiven":    (True,  True,   False,    False),
    "RequireAndVerifyClientCert": (False, True,   False,    False),
}  # fmt: skip


@pytest.fixture(scope="module")
def pki(tmp_path_factory: pytest.TempPathFactory) -> TestPKI:
    return make_pki(tmp_path_factory.mktemp("pki"))


def client_context(pki: TestPKI, cert: CertPair | None = None) -> ssl.SSLContext:
    """A client context trusting the test CA, presenting ``cert`` if given."""
    context = ssl.create_default_context(cafile=str(pki.ca))
    if cert is not None:
        context.load_cert_chain(str(cert.cert), str(cert.key))
    return context


def tls_block(pki: TestPKI, mode: str) -> dict[str, Any]:
    block: dict[str, Any] = {
        "cert_file": str(pki.server.cert),
        "key_file": str(pki.server.key),
        "client_auth_type": mode,
    }
    if mode != "NoClientCert":
        block["client_ca_file"] = str(pki.ca)
    return block


def tls_server(root: Path, pki: TestPKI, overrides: dict[str, Any], **kwargs: Any) -> Server:
    verify = client_context(pki, pki.client)
    return Server(root, overrides, client_tls={"verify": verify}, **kwargs)


@pytest.fixture(scope="module")
def servers(tmp_path_factory: pytest.TempPathFactory, pki: TestPKI) -> Iterator[dict[str, Server]]:
    """One server per client-auth policy."""
    started: dict[str, Server] = {}
    try:
        for mode in MODES:
            overrides = {"server": {"http_tls_config": tls_block(pki, mode)}}
            started[mode] = tls_server(tmp_path_factory.mktemp(mode), pki, overrides).start()
        yield started
    finally:
        for srv in started.values():
            if srv.process is not None:
                srv.stop()


def _cert(pki: TestPKI, client: str) -> CertPair | None:
    return {
        "none": None,
        "trusted": pki.client,
        "untrusted": pki.untrusted_client,
        "expired": pki.expired_client,
    }[client]


def with_curl(port: int, pki: TestPKI, cert: CertPair | None) -> bool:
    """Whether curl gets a 200 from /ready."""
    command = ["curl", "-s", "-o", "/dev/null", "-w", "%{http_code}", "--cacert", str(pki.ca)]
    if cert is not None:
        command += ["--cert", str(cert.cert), "--key", str(cert.key)]
    done = subprocess.run(
        [*command, f"https://localhost:{port}/ready"], capture_output=True, text=True, timeout=30
    )
    return done.returncode == 0 and done.stdout == "200"


def with_python_ssl(port: int, pki: TestPKI, cert: CertPair | None) -> bool:
    """Whether Python's ssl client gets a 200 from /ready."""
    connection = http.client.HTTPSConnection(
        "localhost", port, context=client_context(pki, cert), timeout=30
    )
    try:
        connection.request("GET", "/ready")
        return connection.getresponse().status == 200
    except (ssl.SSLError, ConnectionError):
        return False
    finally:
        connection.close()


TOOLS = {"curl": with_curl, "python-ssl": with_python_ssl}


@pytest.mark.parametrize("tool", TOOLS)
@pytest.mark.parametrize("mode", MODES)
def test_client_auth_matrix(servers: dict[str, Server], pki: TestPKI, mode: str, tool: str) -> None:
    port = servers[mode].port
    got = tuple(TOOLS[tool](port, pki, _cert(pki, client)) for client in CLIENTS)
    assert dict(zip(CLIENTS, got, strict=True)) == dict(zip(CLIENTS, ACCEPTED[mode], strict=True))


def test_plain_http_is_not_answered(servers: dict[str, Server]) -> None:
    port = servers["NoClientCert"].port
    with socket.create_connection(("127.0.0.1", port), timeout=10) as sock:
        sock.sendall(b"GET /ready HTTP/1.1\r\nHost: localhost\r\n\r\n")
        assert not sock.recv(1024).startswith(b"HTTP/1.1 200")


def _handshake(port: int, pki: TestPKI, version: ssl.TLSVersion) -> str:
    """The version negotiated by a client limited to ``version``, or the error."""
    context = client_context(pki, pki.client)
    context.minimum_version = context.maximum_version = version
    if version < ssl.TLSVersion.TLSv1_2:
        context.set_ciphers("DEFAULT:@SECLEVEL=0")
    try:
        with (
            socket.create_connection(("127.0.0.1", port), timeout=10) as raw,
            context.wrap_socket(raw, server_hostname="localhost") as tls,
        ):
            tls.sendall(b"GET /ready HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n")
            assert tls.recv(1024).startswith(b"HTTP/1.1 200")
            return str(tls.version())
    except (ssl.SSLError, ConnectionError) as exc:
        return type(exc).__name__


@pytest.mark.filterwarnings("ignore:ssl.TLSVersion.TLSv1_1 is deprecated:DeprecationWarning")
def test_minimum_version_default_is_tls12(servers: dict[str, Server], pki: TestPKI) -> None:
    port = servers["RequireAndVerifyClientCert"].port
    assert _handshake(port, pki, ssl.TLSVersion.TLSv1_2) == "TLSv1.2"
    assert _handshake(port, pki, ssl.TLSVersion.TLSv1_3) == "TLSv1.3"
    assert _handshake(port, pki, ssl.TLSVersion.TLSv1_1) == "SSLError"


@pytest.mark.filterwarnings("ignore:ssl.TLSVersion.TLSv1_1 is deprecated:DeprecationWarning")
@pytest.mark.parametrize(
    ("minimum", "accepted"),
    [
        ("VersionTLS13", {"TLSv1.3"}),
        ("VersionTLS11", {"TLSv1.1", "TLSv1.2", "TLSv1.3"}),
    ],
)
def test_tls_min_version_refuses_older_handshakes(
    tmp_path: Path, pki: TestPKI, minimum: str, accepted: set[str]
) -> None:
    block = tls_block(pki, "NoClientCert")
    overrides = {"server": {"tls_min_version": minimum, "http_tls_config": block}}
    srv = tls_server(tmp_path, pki, overrides).start()
    try:
        versions = {
            "TLSv1.1": ssl.TLSVersion.TLSv1_1,
            "TLSv1.2": ssl.TLSVersion.TLSv1_2,
            "TLSv1.3": ssl.TLSVersion.TLSv1_3,
        }
        got = {name: _handshake(srv.port, pki, version) for name, version in versions.items()}
        assert got == {name: name if name in accepted else "SSLError" for name in versions}
    finally:
        srv.stop()


def test_flags_configure_mtls(tmp_path: Path, pki: TestPKI) -> None:
    flags = (
        f"-server.http-tls-cert-path={pki.server.cert}",
        f"-server.http-tls-key-path={pki.server.key}",
        "-server.http-tls-client-auth=RequireAndVerifyClientCert",
        f"-server.http-tls-ca-path={pki.ca}",
    )
    srv = tls_server(tmp_path, pki, {}, args=flags).start()
    try:
        assert with_curl(srv.port, pki, pki.client)
        assert not with_curl(srv.port, pki, None)
        assert not with_python_ssl(srv.port, pki, pki.untrusted_client)
    finally:
        srv.stop()


def test_push_query_and_tail_over_mtls(servers: dict[str, Server], pki: TestPKI) -> None:
    srv = servers["RequireAndVerifyClientCert"]
    tenant = "tls-tail"
    received: list[str] = []

    async def tail() -> None:
        url = f"wss://localhost:{srv.port}/loki/api/v1/tail?query=%7Bapp%3D%22tls%22%7D"
        async with websockets.connect(
            url, ssl=client_context(pki, pki.client), additional_headers={"X-Scope-OrgID": tenant}
        ) as ws:
            await asyncio.sleep(0.5)
            with srv.client(tenant) as client:
                await asyncio.to_thread(push, client, [({"app": "tls"}, [(now_ns(), "over tls")])])
            message = json.loads(await asyncio.wait_for(ws.recv(), timeout=20))
            received.extend(value[1] for stream in message["streams"] for value in stream["values"])

    asyncio.run(tail())
    assert received == ["over tls"]
    with srv.client(tenant) as client:
        lines = [
            v[1] for _, values in stream_values(query_range(client, '{app="tls"}')) for v in values
        ]
    assert lines == ["over tls"]


def test_otlp_exporter_pushes_over_mtls(
    servers: dict[str, Server], pki: TestPKI, monkeypatch: pytest.MonkeyPatch
) -> None:
    # requests prefers these variables over the session's CA file the exporter sets.
    monkeypatch.delenv("REQUESTS_CA_BUNDLE", raising=False)
    monkeypatch.delenv("CURL_CA_BUNDLE", raising=False)
    srv = servers["RequireAndVerifyClientCert"]
    tenant = "tls-otlp"
    exporter = OTLPLogExporter(
        endpoint=f"https://localhost:{srv.port}/otlp/v1/logs",
        headers={"X-Scope-OrgID": tenant},
        certificate_file=str(pki.ca),
        client_certificate_file=str(pki.client.cert),
        client_key_file=str(pki.client.key),
    )
    provider = LoggerProvider(resource=Resource.create({"service.name": "tls-app"}))
    provider.add_log_record_processor(SimpleLogRecordProcessor(exporter))
    try:
        provider.get_logger("tls").emit(LogRecord(timestamp=now_ns(), body="sent with mtls"))
    finally:
        provider.shutdown()
    with srv.client(tenant) as client:
        found = stream_values(query_range(client, '{service_name="tls-app"}'))
    assert [v[1] for _, values in found for v in values] == ["sent with mtls"]


def _served_name(port: int, pki: TestPKI) -> str:
    context = client_context(pki)
    with (
        socket.create_connection(("127.0.0.1", port), timeout=10) as raw,
        context.wrap_socket(raw, server_hostname="localhost") as tls,
    ):
        der = tls.getpeercert(binary_form=True)
    assert der is not None
    return x509.load_der_x509_certificate(der).subject.rfc4514_string()


def test_certificate_rotation_without_restart(tmp_path: Path, pki: TestPKI) -> None:
    cert, key = tmp_path / "live.crt", tmp_path / "live.key"
    shutil.copy(pki.server.cert, cert)
    shutil.copy(pki.server.key, key)
    block = {"cert_file": str(cert), "key_file": str(key)}
    srv = tls_server(tmp_path / "srv", pki, {"server": {"http_tls_config": block}}).start()
    try:
        assert _served_name(srv.port, pki) == "CN=localhost"
        rotated = pki.new_server("rotated", "localhost-rotated")
        # Written the way cert managers do: a new file renamed over the old one.
        shutil.copy(rotated.key, tmp_path / "next.key")
        shutil.copy(rotated.cert, tmp_path / "next.crt")
        (tmp_path / "next.key").replace(key)
        (tmp_path / "next.crt").replace(cert)
        assert _served_name(srv.port, pki) == "CN=localhost-rotated"
        assert srv.process is not None and srv.process.poll() is None
        assert "TLS certificate reloaded" in srv.log_path.read_text()
    finally:
        srv.stop()


def test_half_rotated_files_keep_the_previous_certificate(tmp_path: Path, pki: TestPKI) -> None:
    cert, key = tmp_path / "live.crt", tmp_path / "live.key"
    shutil.copy(pki.server.cert, cert)
    shutil.copy(pki.server.key, key)
    block = {"cert_file": str(cert), "key_file": str(key)}
    srv = tls_server(tmp_path / "srv", pki, {"server": {"http_tls_config": block}}).start()
    try:
        rotated = pki.new_server("rotated", "localhost-rotated")
        shutil.copy(rotated.cert, cert)  # the key is not there yet
        assert _served_name(srv.port, pki) == "CN=localhost"
        shutil.copy(rotated.key, key)
        time.sleep(0.01)
        assert _served_name(srv.port, pki) == "CN=localhost-rotated"
        assert "cannot be loaded, keeping the previous certificate" in srv.log_path.read_text()
    finally:
        srv.stop()
