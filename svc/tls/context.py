"""Server TLS contexts with Go's client-auth semantics, rebuilt when their files change.

Python's ``ssl`` module cannot express two of Go's five policies: ``CERT_OPTIONAL`` and
``CERT_REQUIRED`` always verify the certificate a client sends, so "ask for a certificate
but accept any" (``RequestClientCert``, ``RequireAnyClientCert``) is impossible with it.
OpenSSL itself can, through a verify callback, which pyOpenSSL exposes; the listener's TLS
is therefore done with pyOpenSSL (see ``svc/tls/protocol.py``):

=========================== ============================ =====================================
policy                      OpenSSL verify mode          certificate sent by the client
=========================== ============================ =====================================
NoClientCert                none (no request sent)       never asked for
RequestClientCert           peer                         optional, accepted unverified
RequireAnyClientCert        peer + fail if none          required, accepted unverified
VerifyClientCertIfGiven     peer                         optional, must verify
RequireAndVerifyClientCert  peer + fail if none          required, must verify
=========================== ============================ =====================================

A certificate verifies when it chains to the client CAs (the system roots when none are
configured, as Go's nil ``ClientCAs``), is within its validity period and allows client
authentication. The default minimum version is TLS 1.2, Go's server default.
"""

from __future__ import annotations

import logging
import os
import threading
from dataclasses import dataclass

from OpenSSL import SSL, crypto

from svc.tls.config import ClientAuth, TLSServerConfig, parse_client_auth
from svc.tls.pem import KeyPair, PEMError, ca_certificates, load_key_pair, read_file
from svc.tls.suites import cipher_list, parse_min_version

__all__ = ["ServerTLS", "TLSSettingsError", "build_context"]

log = logging.getLogger(__name__)

_ALPN_HTTP1 = b"http/1.1"
# A session resumed on a context that verifies peers needs an id context, or OpenSSL
# refuses the resumption with an internal error.
_SESSION_ID = b"svc-http"


class TLSSettingsError(ValueError):
    """A TLS block that cannot be used; the message is the reference's detail text."""


@dataclass(frozen=True)
class _Material:
    pair: KeyPair
    client_cas: list[object] | None
    auth: ClientAuth


def _load_material(cfg: TLSServerConfig) -> _Material:
    """Read and check the certificate, key and client CAs, in the reference's order."""
    try:
        cert_pem = read_file(cfg.cert_file) if cfg.cert_file else cfg.cert.encode()
    except PEMError as exc:
        raise TLSSettingsError(f"failed to read cert_file ({cfg.cert_file}): {exc}") from None
    try:
        key_pem = read_file(cfg.key_file) if cfg.key_file else cfg.key.encode()
    except PEMError as exc:
        raise TLSSettingsError(f"failed to read key_file ({cfg.key_file}): {exc}") from None
    try:
        pair = load_key_pair(cert_pem, key_pem)
    except PEMError as exc:
        raise TLSSettingsError(f"failed to load X509KeyPair: {exc}") from None
    client_cas: list[object] | None = None
    try:
        if cfg.client_ca_file:
            client_cas = list(ca_certificates(read_file(cfg.client_ca_file)))
        elif cfg.client_ca:
            client_cas = list(ca_certificates(cfg.client_ca.encode()))
    except PEMError as exc:
        raise TLSSettingsError(str(exc)) from None
    try:
        auth = parse_client_auth(cfg.client_auth_type)
    except ValueError as exc:
        raise TLSSettingsError(str(exc)) from None
    if client_cas is not None and not auth.requests:
        raise TLSSettingsError("client CA's have been configured without a Client Auth Policy")
    return _Material(pair, client_cas, auth)


def _accept_any(conn: SSL.Connection, cert: crypto.X509, errno: int, depth: int, ok: int) -> bool:
    """Request/RequireAny: whatever the client sends is taken without verification."""
    return True


def _verified(conn: SSL.Connection, cert: crypto.X509, errno: int, depth: int, ok: int) -> bool:
    return bool(ok)


def _configure_client_auth(ctx: SSL.Context, material: _Material) -> None:
    auth = material.auth
    if not auth.requests:
        ctx.set_verify(SSL.VERIFY_NONE)
        return
    mode = SSL.VERIFY_PEER | (SSL.VERIFY_FAIL_IF_NO_PEER_CERT if auth.requires else 0)
    if not auth.verifies:
        ctx.set_verify(mode, _accept_any)
        return
    if material.client_cas is None:
        ctx.set_default_verify_paths()
    else:
        store = ctx.get_cert_store()
        assert store is not None
        for ca in material.client_cas:
            store.add_cert(crypto.X509.from_cryptography(ca))  # type: ignore[arg-type]
    ctx.set_verify(mode, _verified)


def _select_alpn(conn: SSL.Connection, offered: list[bytes]) -> bytes | object:
    """HTTP/1.1 when offered (the listener speaks nothing else), else no ALPN at all."""
    return _ALPN_HTTP1 if _ALPN_HTTP1 in offered else SSL.NO_OVERLAPPING_PROTOCOLS


def build_context(cfg: TLSServerConfig, *, min_version: str, cipher_suites: str) -> SSL.Context:
    """A server context for the block; raises TLSSettingsError (the reference's details)."""
    try:
        ciphers = cipher_list(cipher_suites)
        version = parse_min_version(min_version)
    except ValueError as exc:
        raise TLSSettingsError(str(exc)) from None
    material = _load_material(cfg)
    ctx = SSL.Context(SSL.TLS_SERVER_METHOD)
    minimum = version if version is not None else SSL.TLS1_2_VERSION
    ctx.set_min_proto_version(minimum)
    ctx.set_options(SSL.OP_NO_RENEGOTIATION | SSL.OP_NO_COMPRESSION)
    # OpenSSL's default security level refuses TLS 1.0 and 1.1 outright; Go allows them
    # when the minimum says so.
    legacy = ":@SECLEVEL=0" if minimum < SSL.TLS1_2_VERSION else ""
    try:
        if ciphers is not None:
            ctx.set_cipher_list((":".join(ciphers) + legacy).encode())
        elif legacy:
            ctx.set_cipher_list(b"DEFAULT" + legacy.encode())
    except SSL.Error:
        raise TLSSettingsError(
            "none of the cipher suites of tls_cipher_suites is available in this TLS library"
        ) from None
    ctx.use_certificate(material.pair.chain[0])
    for extra in material.pair.chain[1:]:
        ctx.add_extra_chain_cert(extra)
    ctx.use_privatekey(material.pair.key)  # type: ignore[arg-type]
    ctx.set_session_id(_SESSION_ID)
    ctx.set_alpn_select_callback(_select_alpn)  # type: ignore[arg-type]
    _configure_client_auth(ctx, material)
    return ctx


def _stamp(paths: tuple[str, ...]) -> tuple[tuple[int, int, int] | None, ...]:
    out: list[tuple[int, int, int] | None] = []
    for path in paths:
        try:
            st = os.stat(path)
        except OSError:
            out.append(None)
            continue
        out.append((st.st_mtime_ns, st.st_size, st.st_ino))
    return tuple(out)


class ServerTLS:
    """The context of one listener, rebuilt when the certificate, key or CA file changes.

    Every handshake asks :meth:`context`, which compares the files' modification times,
    sizes and inodes with those the context was built from (three ``stat`` calls): a
    rotated certificate is served from the next connection on. A rotation caught half
    way (a new certificate with the old key) keeps the previous context and logs a
    warning until the files agree again.
    """

    def __init__(self, cfg: TLSServerConfig, *, min_version: str, cipher_suites: str) -> None:
        self._cfg = cfg
        self._options = {"min_version": min_version, "cipher_suites": cipher_suites}
        self._paths = tuple(p for p in (cfg.cert_file, cfg.key_file, cfg.client_ca_file) if p)
        self._lock = threading.Lock()
        self._stamp = _stamp(self._paths)
        self._context = build_context(cfg, **self._options)
        self._failed_stamp: tuple[tuple[int, int, int] | None, ...] | None = None
        self.reloads = 0
        """Contexts built after the first one (rotations seen)."""

    def context(self) -> SSL.Context:
        """The context for a new connection, rebuilt first if a file changed."""
        stamp = _stamp(self._paths)
        if stamp == self._stamp or stamp == self._failed_stamp:
            return self._context
        with self._lock:
            if stamp != self._stamp:
                self._rebuild(stamp)
        return self._context

    def _rebuild(self, stamp: tuple[tuple[int, int, int] | None, ...]) -> None:
        try:
            context = build_context(self._cfg, **self._options)
        except TLSSettingsError as exc:
            self._failed_stamp = stamp
            log.warning("TLS certificate files changed but cannot be loaded, keeping the "
                        "previous certificate: %s", exc)  # fmt: skip
            return
        self._context, self._stamp, self._failed_stamp = context, stamp, None
        self.reloads += 1
        log.info("TLS certificate reloaded: %s", ", ".join(self._paths))
