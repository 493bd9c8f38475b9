"""Certificates made for the tests: a CA, server and client certificates signed by it, one
client certificate from another CA, an expired one."""

from __future__ import annotations

import datetime
import ipaddress
from dataclasses import dataclass
from pathlib import Path

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

__all__ = ["CertPair", "TestPKI", "make_pki"]

_NOW = datetime.datetime.now(datetime.UTC)
_CA_USAGE = x509.KeyUsage(
    digital_signature=True,
    content_commitment=False,
    key_encipherment=False,
    data_encipherment=False,
    key_agreement=False,
    key_cert_sign=True,
    crl_sign=True,
    encipher_only=False,
    decipher_only=False,
)


@dataclass(frozen=True)
class CertPair:
    """A certificate and its key, as PEM files."""

    cert: Path
    key: Path


def _key() -> ec.EllipticCurvePrivateKey:
    return ec.generate_private_key(ec.SECP256R1())


def _name(common_name: str) -> x509.Name:
    return x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, common_name)])


def _write(
    directory: Path, stem: str, cert: x509.Certificate, key: ec.EllipticCurvePrivateKey
) -> CertPair:
    pair = CertPair(directory / f"{stem}.crt", directory / f"{stem}.key")
    pair.cert.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    pair.key.write_bytes(
        key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        )
    )
    return pair


@dataclass(frozen=True)
class _CA:
    cert: x509.Certificate
    key: ec.EllipticCurvePrivateKey


def _ca(common_name: str) -> _CA:
    key = _key()
    cert = (
        x509.CertificateBuilder()
        .subject_name(_name(common_name))
        .issuer_name(_name(common_name))
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(_NOW - datetime.timedelta(days=1))
        .not_valid_after(_NOW + datetime.timedelta(days=30))
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .add_extension(_CA_USAGE, critical=True)
        .sign(key, hashes.SHA256())
    )
    return _CA(cert, key)


def _leaf(
    ca: _CA,
    common_name: str,
    *,
    server: bool,
    not_before: datetime.datetime | None = None,
    not_after: datetime.datetime | None = None,
) -> tuple[x509.Certificate, ec.EllipticCurvePrivateKey]:
    key = _key()
    builder = (
        x509.CertificateBuilder()
        .subject_name(_name(common_name))
        .issuer_name(ca.cert.subject)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(not_before or _NOW - datetime.timedelta(days=1))
        .not_valid_after(not_after or _NOW + datetime.timedelta(days=30))
        .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
        .add_extension(
            x509.ExtendedKeyUsage(
                [ExtendedKeyUsageOID.SERVER_AUTH if server else ExtendedKeyUsageOID.CLIENT_AUTH]
            ),
            critical=False,
        )
    )
    if server:
        builder = builder.add_extension(
            x509.SubjectAlternativeName(
                [x509.DNSName("localhost"), x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]
            ),
            critical=False,
        )
    return builder.sign(ca.key, hashes.SHA256()), key


@dataclass(frozen=True)
class TestPKI:
    """The files of the test certificates."""

    __test__ = False  # not a test class, despite its name

    directory: Path
    ca: Path
    """The CA that signed the server and trusted client certificates."""
    other_ca: Path
    """A CA nobody trusts."""
    server: CertPair
    """For ``localhost`` and ``127.0.0.1``."""
    client: CertPair
    """Signed by ``ca``."""
    untrusted_client: CertPair
    """Signed by ``other_ca``."""
    expired_client: CertPair
    """Signed by ``ca``, expired yesterday."""

    def new_server(self, stem: str, common_name: str) -> CertPair:
        """Another server certificate from the same CA (for rotation)."""
        ca = self._ca_key()
        cert, key = _leaf(ca, common_name, server=True)
        return _write(self.directory, stem, cert, key)

    def _ca_key(self) -> _CA:
        cert = x509.load_pem_x509_certificate(self.ca.read_bytes())
        key = serialization.load_pem_private_key((self.directory / "ca.key").read_bytes(), None)
        assert isinstance(key, ec.EllipticCurvePrivateKey)
        return _CA(cert, key)


def make_pki(directory: Path) -> TestPKI:
    """Generate every test certificate under ``directory``."""
    directory.mkdir(parents=True, exist_ok=True)
    ca, other = _ca("svc test CA"), _ca("untrusted CA")
    ca_pair = _write(directory, "ca", ca.cert, ca.key)
    other_pair = _write(directory, "other-ca", other.cert, other.key)
    yesterday = _NOW - datetime.timedelta(days=1)
    return TestPKI(
        directory=directory,
        ca=ca_pair.cert,
        other_ca=other_pair.cert,
        server=_write(directory, "server", *_leaf(ca, "localhost", server=True)),
        client=_write(directory, "client", *_leaf(ca, "client", server=False)),
        untrusted_client=_write(directory, "untrusted", *_leaf(other, "client", server=False)),
        expired_client=_write(
            directory,
            "expired",
            *_leaf(
                ca,
                "client",
                server=False,
                not_before=yesterday - datetime.timedelta(days=30),
                not_after=yesterday,
            ),
        ),
    )
