"""TLS versions and cipher suites by the names Go gives them (``tls_min_version``,
``tls_cipher_suites``), translated for OpenSSL.

Go knows its suites by their IANA names and OpenSSL by its own; the table holds every suite
Go's ``tls.CipherSuites()`` and ``tls.InsecureCipherSuites()`` list. TLS 1.3 suites are
accepted but, as in Go, not configurable: they are always on when TLS 1.3 is allowed.
"""

from __future__ import annotations

import ssl
from typing import Final

from gocompat.strconv import quote

__all__ = ["TLS_VERSIONS", "cipher_list", "parse_min_version"]

# The protocol's version numbers, which OpenSSL's TLS1_*_VERSION constants also are (the
# standard library's names: pyOpenSSL is not loaded by commands that only check settings).
TLS_VERSIONS: Final = {
    "VersionTLS10": int(ssl.TLSVersion.TLSv1),
    "VersionTLS11": int(ssl.TLSVersion.TLSv1_1),
    "VersionTLS12": int(ssl.TLSVersion.TLSv1_2),
    "VersionTLS13": int(ssl.TLSVersion.TLSv1_3),
}

_TLS13_SUITES: Final = frozenset(
    {"TLS_AES_128_GCM_SHA256", "TLS_AES_256_GCM_SHA384", "TLS_CHACHA20_POLY1305_SHA256"}
)
_OPENSSL_NAMES: Final = {
    "TLS_ECDHE_ECDSA_WITH_AES_128_CBC_SHA": "ECDHE-ECDSA-AES128-SHA",
    "TLS_ECDHE_ECDSA_WITH_AES_256_CBC_SHA": "ECDHE-ECDSA-AES256-SHA",
    "TLS_ECDHE_RSA_WITH_AES_128_CBC_SHA": "ECDHE-RSA-AES128-SHA",
    "TLS_ECDHE_RSA_WITH_AES_256_CBC_SHA": "ECDHE-RSA-AES256-SHA",
    "TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256": "ECDHE-ECDSA-AES128-GCM-SHA256",
    "TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384": "ECDHE-ECDSA-AES256-GCM-SHA384",
    "TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256": "ECDHE-RSA-AES128-GCM-SHA256",
    "TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384": "ECDHE-RSA-AES256-GCM-SHA384",
    "TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305_SHA256": "ECDHE-RSA-CHACHA20-POLY1305",
    "TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256": "ECDHE-ECDSA-CHACHA20-POLY1305",
    # Go's insecure list.
    "TLS_RSA_WITH_RC4_128_SHA": "RC4-SHA",
    "TLS_RSA_WITH_3DES_EDE_CBC_SHA": "DES-CBC3-SHA",
    "TLS_RSA_WITH_AES_128_CBC_SHA": "AES128-SHA",
    "TLS_RSA_WITH_AES_256_CBC_SHA": "AES256-SHA",
    "TLS_RSA_WITH_AES_128_CBC_SHA256": "AES128-SHA256",
    "TLS_RSA_WITH_AES_128_GCM_SHA256": "AES128-GCM-SHA256",
    "TLS_RSA_WITH_AES_256_GCM_SHA384": "AES256-GCM-SHA384",
    "TLS_ECDHE_ECDSA_WITH_RC4_128_SHA": "ECDHE-ECDSA-RC4-SHA",
    "TLS_ECDHE_RSA_WITH_RC4_128_SHA": "ECDHE-RSA-RC4-SHA",
    "TLS_ECDHE_RSA_WITH_3DES_EDE_CBC_SHA": "ECDHE-RSA-DES-CBC3-SHA",
    "TLS_ECDHE_ECDSA_WITH_AES_128_CBC_SHA256": "ECDHE-ECDSA-AES128-SHA256",
    "TLS_ECDHE_RSA_WITH_AES_128_CBC_SHA256": "ECDHE-RSA-AES128-SHA256",
}


def parse_min_version(name: str) -> int | None:
    """The OpenSSL version constant of a Go version name (None for ""); ValueError with the
    reference's text otherwise."""
    if not name:
        return None
    try:
        return TLS_VERSIONS[name]
    except KeyError:
        raise ValueError(f"TLS version {quote(name)} not recognized") from None


def cipher_list(text: str) -> list[str] | None:
    """OpenSSL names of the TLS 1.2 suites of a comma-separated Go list (None for "": the
    library's defaults); ValueError with the reference's text for an unknown name."""
    if not text:
        return None
    names = []
    for name in text.split(","):
        if name in _TLS13_SUITES:
            continue
        if name not in _OPENSSL_NAMES:
            raise ValueError(f"cipher suite {quote(name)} not recognized")
        names.append(_OPENSSL_NAMES[name])
    return names
