"""TLS of the server listeners: settings, contexts with Go's client-auth policies and
certificate rotation, and the transport that serves HTTP and WebSocket over them."""

from svc.tls.config import ClientAuth, TLSServerConfig, parse_client_auth
from svc.tls.context import ServerTLS, TLSSettingsError, build_context
from svc.tls.protocol import tls_protocol_class

__all__ = [
    "ClientAuth",
    "ServerTLS",
    "TLSServerConfig",
    "TLSSettingsError",
    "build_context",
    "parse_client_auth",
    "tls_protocol_class",
]
