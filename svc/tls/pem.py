"""PEM certificates and keys read as Go's ``crypto/tls`` reads them, with its error texts.

``load_key_pair`` checks a certificate and key the way ``tls.X509KeyPair`` does (PEM block
types, key formats, the key matching the certificate), ``ca_certificates`` collects the
certificates of a CA bundle skipping what does not parse (``AppendCertsFromPEM``), and
``read_file`` reports a failed read in the words of Go's ``os.ReadFile``.
"""

from __future__ import annotations

import base64
import binascii
import re
from pathlib import Path
from typing import NamedTuple

from cryptography import x509
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec, ed25519, rsa
from cryptography.hazmat.primitives.asymmetric.types import PrivateKeyTypes

__all__ = ["KeyPair", "PEMError", "ca_certificates", "load_key_pair", "read_file"]

_BLOCK = re.compile(rb"-----BEGIN ([^\r\n-]*)-----[ \t]*\r?\n(.*?)-----END \1-----", re.DOTALL)
_HEADER = re.compile(rb"^[A-Za-z0-9-]+:.*$", re.MULTILINE)
_SERVER_KEY_TYPES = (rsa.RSAPrivateKey, ec.EllipticCurvePrivateKey, ed25519.Ed25519PrivateKey)


class PEMError(ValueError):
    """A certificate or key that Go's TLS stack would refuse; the message is Go's."""


class KeyPair(NamedTuple):
    """A server certificate chain (leaf first) and its private key."""

    chain: list[x509.Certificate]
    key: PrivateKeyTypes


def read_file(path: str) -> bytes:
    """The file's bytes; OSError becomes PEMError worded as Go's ``os.ReadFile`` error."""
    try:
        return Path(path).read_bytes()
    except IsADirectoryError:
        raise PEMError(f"read {path}: is a directory") from None
    except OSError as exc:
        reason = (exc.strerror or str(exc)).lower()
        raise PEMError(f"open {path}: {reason}") from None


def _blocks(data: bytes) -> list[tuple[str, bytes | None]]:
    """(type, DER bytes or None when the body is not base64) of each PEM block."""
    out: list[tuple[str, bytes | None]] = []
    for match in _BLOCK.finditer(data):
        body = _HEADER.sub(b"", match.group(2))
        try:
            der: bytes | None = base64.b64decode(b"".join(body.split()), validate=True)
        except (binascii.Error, ValueError):
            der = None
        out.append((match.group(1).decode("latin-1"), der))
    return [(kind, der) for kind, der in out if der is not None]


def _go_list(items: list[str]) -> str:
    return "[" + " ".join(items) + "]"


def _certificate_ders(data: bytes) -> list[bytes]:
    ders, skipped = [], []
    for kind, der in _blocks(data):
        if kind == "CERTIFICATE" and der is not None:
            ders.append(der)
        else:
            skipped.append(kind)
    if ders:
        return ders
    if not skipped:
        raise PEMError("tls: failed to find any PEM data in certificate input")
    if len(skipped) == 1 and skipped[0].endswith("PRIVATE KEY"):
        raise PEMError(
            "tls: failed to find certificate PEM data in certificate input, but did find a "
            "private key; PEM inputs may have been switched"
        )
    raise PEMError(
        'tls: failed to find "CERTIFICATE" PEM block in certificate input after skipping PEM '
        f"blocks of the following types: {_go_list(skipped)}"
    )


def _key_der(data: bytes) -> bytes:
    skipped = []
    for kind, der in _blocks(data):
        if (kind == "PRIVATE KEY" or kind.endswith(" PRIVATE KEY")) and der is not None:
            return der
        skipped.append(kind)
    if not skipped:
        raise PEMError("tls: failed to find any PEM data in key input")
    if skipped == ["CERTIFICATE"]:
        raise PEMError("tls: found a certificate rather than a key in the PEM for the private key")
    raise PEMError(
        'tls: failed to find PEM block with type ending in "PRIVATE KEY" in key input after '
        f"skipping PEM blocks of the following types: {_go_list(skipped)}"
    )


def _public_der(key: object) -> bytes:
    public = getattr(key, "public_key", None)
    assert public is not None
    der: bytes = public().public_bytes(
        serialization.Encoding.DER, serialization.PublicFormat.SubjectPublicKeyInfo
    )
    return der


def load_key_pair(cert_pem: bytes, key_pem: bytes) -> KeyPair:
    """The chain and key of PEM inputs, checked as ``tls.X509KeyPair``; raises PEMError."""
    ders = _certificate_ders(cert_pem)
    key_der = _key_der(key_pem)
    try:
        chain = [x509.load_der_x509_certificate(der) for der in ders]
    except ValueError:
        raise PEMError("x509: malformed certificate") from None
    try:
        key = serialization.load_der_private_key(key_der, password=None)
    except (ValueError, TypeError):
        raise PEMError("tls: failed to parse private key") from None
    public = chain[0].public_key()
    if not isinstance(
        public, rsa.RSAPublicKey | ec.EllipticCurvePublicKey | ed25519.Ed25519PublicKey
    ):
        raise PEMError("tls: unknown public key algorithm")
    if not isinstance(key, _SERVER_KEY_TYPES) or not _same_algorithm(public, key):
        raise PEMError("tls: private key type does not match public key type")
    if _public_der(key) != public.public_bytes(
        serialization.Encoding.DER, serialization.PublicFormat.SubjectPublicKeyInfo
    ):
        raise PEMError("tls: private key does not match public key")
    return KeyPair(chain, key)


def _same_algorithm(public: object, key: object) -> bool:
    pairs = (
        (rsa.RSAPublicKey, rsa.RSAPrivateKey),
        (ec.EllipticCurvePublicKey, ec.EllipticCurvePrivateKey),
        (ed25519.Ed25519PublicKey, ed25519.Ed25519PrivateKey),
    )
    return any(isinstance(public, pub) and isinstance(key, priv) for pub, priv in pairs)


def ca_certificates(data: bytes) -> list[x509.Certificate]:
    """The certificates of a PEM bundle; blocks of other types or that do not parse are
    skipped, as Go's ``CertPool.AppendCertsFromPEM`` does."""
    certs = []
    for kind, der in _blocks(data):
        if kind != "CERTIFICATE" or der is None:
            continue
        try:
            certs.append(x509.load_der_x509_certificate(der))
        except ValueError:
            continue
    return certs
