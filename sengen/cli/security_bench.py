"""``sengen security init``: a certificate authority and one certificate per process, for a test
bench, and a starter permissions file that lets every process do everything.

A real deployment gets its certificates from its own authority; this is the shortest way to a
working secure system, and what the tests use. Keys are EC P-256; every process certificate is
good for client and server authentication (each Zenoh peer is both).
"""

from __future__ import annotations

import datetime
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

from sengen.runtime.components.transport.security.identity import (
    CA_FILE,
    CERT_SUFFIX,
    KEY_SUFFIX,
    identity_problem,
)
from sengen.runtime.errors import SengenError

CA_KEY_FILE = "ca.key"
PERMISSIONS_FILE = "permissions.yaml"
DAY = datetime.timedelta(days=1)


class BenchError(SengenError, ValueError):
    """Bad input for ``sengen security init``: one line."""


@dataclass(frozen=True)
class Authority:
    certificate: x509.Certificate
    key: ec.EllipticCurvePrivateKey


def _name(common_name: str) -> x509.Name:
    return x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, common_name)])


def make_authority(name: str = "sengen test bench CA", days: int = 3650) -> Authority:
    key = ec.generate_private_key(ec.SECP256R1())
    now = datetime.datetime.now(datetime.UTC)
    certificate = (
        x509.CertificateBuilder()
        .subject_name(_name(name))
        .issuer_name(_name(name))
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - DAY)
        .not_valid_after(now + days * DAY)
        .add_extension(x509.BasicConstraints(ca=True, path_length=0), critical=True)
        .add_extension(_usage(ca=True), critical=True)
        .add_extension(x509.SubjectKeyIdentifier.from_public_key(key.public_key()), critical=False)
        .sign(key, hashes.SHA256())
    )
    return Authority(certificate, key)


def issue(
    authority: Authority,
    identity: str,
    not_before: datetime.datetime | None = None,
    not_after: datetime.datetime | None = None,
) -> tuple[x509.Certificate, ec.EllipticCurvePrivateKey]:
    """A certificate for ``identity`` (its common name) signed by ``authority``, and its key."""
    key = ec.generate_private_key(ec.SECP256R1())
    now = datetime.datetime.now(datetime.UTC)
    ca_key_id = x509.SubjectKeyIdentifier.from_public_key(authority.key.public_key())
    certificate = (
        x509.CertificateBuilder()
        .subject_name(_name(identity))
        .issuer_name(authority.certificate.subject)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(not_before or now - DAY)
        .not_valid_after(not_after or now + 365 * DAY)
        .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
        .add_extension(_usage(ca=False), critical=True)
        .add_extension(
            x509.ExtendedKeyUsage(
                [ExtendedKeyUsageOID.SERVER_AUTH, ExtendedKeyUsageOID.CLIENT_AUTH]
            ),
            critical=False,
        )
        .add_extension(
            x509.SubjectAlternativeName([x509.DNSName(identity), x509.DNSName("localhost")]),
            critical=False,
        )
        .add_extension(
            x509.AuthorityKeyIdentifier.from_issuer_subject_key_identifier(ca_key_id),
            critical=False,
        )
        .sign(authority.key, hashes.SHA256())
    )
    return certificate, key


def _usage(ca: bool) -> x509.KeyUsage:
    return x509.KeyUsage(
        digital_signature=not ca,
        content_commitment=False,
        key_encipherment=False,
        data_encipherment=False,
        key_agreement=False,
        key_cert_sign=ca,
        crl_sign=ca,
        encipher_only=False,
        decipher_only=False,
    )


def write_certificate(path: Path, certificate: x509.Certificate) -> None:
    path.write_bytes(certificate.public_bytes(serialization.Encoding.PEM))


def write_key(path: Path, key: ec.EllipticCurvePrivateKey) -> None:
    data = key.private_bytes(
        serialization.Encoding.PEM,
        serialization.PrivateFormat.PKCS8,
        serialization.NoEncryption(),
    )
    path.touch(mode=0o600)  # created private: never readable by others, even for a moment
    path.write_bytes(data)


def starter_permissions(identities: Sequence[str]) -> str:
    lines = [
        "# Who may do what in this system; patterns use '*' (sengen security init wrote this file:",
        "# every process may do everything; narrow it down). Keys: sessions (joined), publish",
        "# (buses, session.bus), call (methods, package.Class.method), write (properties).",
        "identities:",
    ]
    for identity in identities:
        lines += [
            f"  {identity}:",
            '    sessions: ["*"]',
            '    publish: ["*"]',
            '    call: ["*"]',
            '    write: ["*"]',
        ]
    return "\n".join(lines) + "\n"


def load_authority(folder: Path) -> Authority:
    try:
        certificate = x509.load_pem_x509_certificate((folder / CA_FILE).read_bytes())
        key = serialization.load_pem_private_key((folder / CA_KEY_FILE).read_bytes(), None)
    except (OSError, ValueError, TypeError) as error:
        raise BenchError(f"cannot read the certificate authority in '{folder}': {error}") from None
    if not isinstance(key, ec.EllipticCurvePrivateKey):
        raise BenchError(f"'{folder / CA_KEY_FILE}' is not an EC private key")
    return Authority(certificate, key)


def init_bench(folder: Path, identities: Sequence[str]) -> list[Path]:
    """Make (or add to) the bench in ``folder``: the files written, in order. An existing
    authority is reused, so processes can be added later; an existing certificate is refused."""
    for identity in identities:
        problem = identity_problem(identity)
        if problem is not None:
            raise BenchError(f"--process: {problem}")
    if len(set(identities)) != len(identities):
        raise BenchError("--process: a name is given twice")
    if folder.exists() and not folder.is_dir():
        raise BenchError(f"'{folder}' is not a folder")
    for identity in identities:
        taken = folder / f"{identity}{CERT_SUFFIX}"
        if taken.exists():
            raise BenchError(f"'{taken}' exists already (remove it to issue a new one)")
    folder.mkdir(parents=True, exist_ok=True)
    written: list[Path] = []
    if (folder / CA_FILE).exists():
        authority = load_authority(folder)
    else:
        authority = make_authority()
        write_certificate(folder / CA_FILE, authority.certificate)
        write_key(folder / CA_KEY_FILE, authority.key)
        written += [folder / CA_FILE, folder / CA_KEY_FILE]
    for identity in identities:
        certificate, key = issue(authority, identity)
        write_certificate(folder / f"{identity}{CERT_SUFFIX}", certificate)
        write_key(folder / f"{identity}{KEY_SUFFIX}", key)
        written += [folder / f"{identity}{CERT_SUFFIX}", folder / f"{identity}{KEY_SUFFIX}"]
    permissions = folder / PERMISSIONS_FILE
    if not permissions.exists():
        permissions.write_text(starter_permissions(identities), encoding="utf-8")
        written.append(permissions)
    return written
