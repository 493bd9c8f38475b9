"""Start-up checks of TLS settings, with the reference's messages (SPEC 7.2).

Server side (``server:``): the cipher suite and minimum version names, then each listener
block that has a certificate and a key is loaded as it will be served. Client side (the
``tls_*`` keys of the reference's gRPC, HTTP and cache clients): the files named are read
and the certificate and key checked, as the reference does when the client is built.
"""

from __future__ import annotations

from typing import Any, Protocol

from svc.tls.config import TLSServerConfig
from svc.tls.suites import cipher_list, parse_min_version

__all__ = ["ServerTLSSettings", "client_tls_error", "client_tls_errors", "server_tls_errors"]


class ServerTLSSettings(Protocol):
    """What the checks read of ``server:`` (``svc.config.ServerConfig``)."""

    @property
    def tls_cipher_suites(self) -> str:
        """Comma-separated Go suite names."""

    @property
    def tls_min_version(self) -> str:
        """Go version name."""

    @property
    def http_tls_config(self) -> TLSServerConfig:
        """The HTTP listener's block."""

    @property
    def grpc_tls_config(self) -> TLSServerConfig:
        """The gRPC listener's block."""


def server_tls_errors(server: ServerTLSSettings) -> list[str]:
    """Problems of the listeners' TLS settings, worded as the reference's server start."""
    try:
        cipher_list(server.tls_cipher_suites)
        parse_min_version(server.tls_min_version)
    except ValueError as exc:
        return [str(exc)]
    errors = []
    for name, block in (("http", server.http_tls_config), ("grpc", server.grpc_tls_config)):
        if not block.enabled:
            continue
        # pyOpenSSL and cryptography load only when TLS is configured (not for commands
        # such as svc backfill that check the configuration of a plain server).
        from svc.tls.context import TLSSettingsError, build_context

        try:
            build_context(
                block,
                min_version=server.tls_min_version,
                cipher_suites=server.tls_cipher_suites,
            )
        except TLSSettingsError as exc:
            errors.append(f"error generating {name} tls config: {exc}")
    return errors


def client_tls_error(cert_path: str, key_path: str, ca_path: str) -> str | None:
    """The reference's error for one client TLS block (CA, certificate and key files)."""
    if not (ca_path or cert_path or key_path):
        return None
    from svc.tls.pem import PEMError, load_key_pair, read_file

    if ca_path:
        try:
            read_file(ca_path)
        except PEMError as exc:
            return f"error loading ca cert: {ca_path}: {exc}"
    if not (cert_path or key_path):
        return None
    if not cert_path:
        return "key given but no certificate configured"
    if not key_path:
        return "certificate given but no key configured"
    try:
        cert = read_file(cert_path)
    except PEMError as exc:
        return f"error loading client cert: {cert_path}: {exc}"
    try:
        key = read_file(key_path)
    except PEMError as exc:
        return f"error loading client key: {key_path}: {exc}"
    try:
        load_key_pair(cert, key)
    except PEMError as exc:
        return f"failed to load TLS certificate {cert_path},{key_path}: {exc}"
    return None


def client_tls_errors(raw: Any) -> list[str]:
    """Client TLS problems anywhere in a raw config tree: every mapping that turns TLS on
    (``tls_enabled: true``) with ``tls_*_path`` keys is checked."""
    errors: list[str] = []
    if isinstance(raw, dict):
        if raw.get("tls_enabled") is True:
            problem = client_tls_error(
                str(raw.get("tls_cert_path") or ""),
                str(raw.get("tls_key_path") or ""),
                str(raw.get("tls_ca_path") or ""),
            )
            if problem is not None:
                errors.append(problem)
        for value in raw.values():
            errors += client_tls_errors(value)
    elif isinstance(raw, list):
        for item in raw:
            errors += client_tls_errors(item)
    return errors
