"""The server TLS blocks (``server.http_tls_config``, ``server.grpc_tls_config``) and the
client-auth policies they name.

The keys, defaults and flags are the reference's (its server TLS block comes from the
Prometheus exporter toolkit): certificate and key as files or inline PEM text, the client CA
as a file or inline text, and one of Go's five ``crypto/tls`` client-auth policies.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass

from svc.config_fields import setting

__all__ = ["CLIENT_AUTH_NAMES", "ClientAuth", "TLSServerConfig", "parse_client_auth"]


class ClientAuth(enum.Enum):
    """Go's ``tls.ClientAuthType``: whether a client certificate is asked for, required and
    verified."""

    NO_CLIENT_CERT = "NoClientCert"
    REQUEST_CLIENT_CERT = "RequestClientCert"
    REQUIRE_ANY_CLIENT_CERT = "RequireAnyClientCert"
    VERIFY_CLIENT_CERT_IF_GIVEN = "VerifyClientCertIfGiven"
    REQUIRE_AND_VERIFY_CLIENT_CERT = "RequireAndVerifyClientCert"

    @property
    def requests(self) -> bool:
        """The server asks the client for a certificate."""
        return self is not ClientAuth.NO_CLIENT_CERT

    @property
    def requires(self) -> bool:
        """A client that sends none is refused."""
        return self in (
            ClientAuth.REQUIRE_ANY_CLIENT_CERT,
            ClientAuth.REQUIRE_AND_VERIFY_CLIENT_CERT,
        )

    @property
    def verifies(self) -> bool:
        """A certificate sent must chain to a trusted CA, be in its validity period and
        allow client authentication."""
        return self in (
            ClientAuth.VERIFY_CLIENT_CERT_IF_GIVEN,
            ClientAuth.REQUIRE_AND_VERIFY_CLIENT_CERT,
        )


CLIENT_AUTH_NAMES = {auth.value: auth for auth in ClientAuth} | {
    "": ClientAuth.NO_CLIENT_CERT,
    # The exporter toolkit's older spelling, still accepted.
    "RequireClientCert": ClientAuth.REQUIRE_ANY_CLIENT_CERT,
}


def parse_client_auth(name: str) -> ClientAuth:
    """The policy a ``client_auth_type`` value names; ValueError with the reference's text."""
    try:
        return CLIENT_AUTH_NAMES[name]
    except KeyError:
        raise ValueError(f"invalid ClientAuth: {name}") from None


@dataclass
class TLSServerConfig:
    """TLS of one server listener (``server.http_tls_config`` or ``server.grpc_tls_config``).

    TLS is on when both a certificate (``cert_file`` or ``cert``) and a key (``key_file`` or
    ``key``) are set; files are read again when they change, so certificates rotate without
    a restart.
    """

    cert: str = setting("", "Server certificate, PEM text (YAML only; cert_file wins).")
    key: str = setting("", "Server private key, PEM text (YAML only; key_file wins).")
    client_ca: str = setting(
        "", "CA certificates, PEM text, that verify client certificates (YAML only)."
    )
    cert_file: str = setting("", "Server certificate file (PEM; leaf first, then its chain).")
    key_file: str = setting("", "Server private key file (PEM).")
    client_auth_type: str = setting(
        "",
        "Client certificates: NoClientCert (default), RequestClientCert, RequireAnyClientCert, "
        "VerifyClientCertIfGiven or RequireAndVerifyClientCert, as Go's crypto/tls.",
    )
    client_ca_file: str = setting(
        "", "CA certificates file that verifies client certificates (wins over client_ca)."
    )

    @property
    def enabled(self) -> bool:
        """Both a certificate and a key are configured (otherwise the listener is plain,
        as the reference's)."""
        return bool((self.cert_file or self.cert) and (self.key_file or self.key))

    @property
    def partial(self) -> bool:
        """Some TLS setting is given but TLS stays off for want of a certificate or key."""
        return not self.enabled and any(
            (self.cert, self.key, self.cert_file, self.key_file, self.client_ca_file,
             self.client_ca, self.client_auth_type)
        )  # fmt: skip
