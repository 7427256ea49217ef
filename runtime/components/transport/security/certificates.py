"""A secure process's certificates, checked before Zenoh sees them.

The folder holds the CA's certificate ``ca.crt``, one certificate ``<identity>.crt`` per member
of the system, and this process's private key ``<identity>.key``. Every certificate must be
signed by that CA, valid now, and name its identity as its subject's common name: a process is
refused at start for any of them, rather than failing a TLS handshake later with a message
about a peer it never named.
"""

from __future__ import annotations

import datetime
from dataclasses import dataclass
from pathlib import Path

from cryptography import x509
from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import serialization
from cryptography.x509.oid import NameOID

from sengen.runtime.components.transport.security.identity import (
    CA_FILE,
    CERT_SUFFIX,
    KEY_SUFFIX,
    SecurityError,
    identity_problem,
)


@dataclass(frozen=True)
class Credentials:
    """What mTLS needs, checked: ``members`` are the identities holding a certificate of the CA
    in the folder (this one included)."""

    identity: str
    ca: Path
    certificate: Path
    key: Path
    members: frozenset[str]


def load_credentials(
    folder: Path, identity: str, now: datetime.datetime | None = None
) -> Credentials:
    """``folder``'s certificates for ``identity``, or :class:`SecurityError`."""
    problem = identity_problem(identity)
    if problem is not None:
        raise SecurityError(problem)
    if not folder.is_dir():
        raise SecurityError(f"'{folder}' is not a folder")
    when = now or datetime.datetime.now(datetime.UTC)
    ca_path = folder / CA_FILE
    ca = _read_certificate(ca_path)
    _check_validity(ca_path, ca, when)
    constraints = ca.extensions.get_extension_for_class(x509.BasicConstraints).value
    if not constraints.ca:
        raise SecurityError(f"'{ca_path}' is not a certificate authority's certificate")
    members = set()
    for path in sorted(folder.glob(f"*{CERT_SUFFIX}")):
        if path.name == CA_FILE:
            continue
        certificate = _read_certificate(path)
        _check_member(path, certificate, ca, ca_path, when)
        members.add(path.stem)
    certificate_path = folder / f"{identity}{CERT_SUFFIX}"
    if identity not in members:
        raise SecurityError(f"no certificate '{certificate_path}' for identity '{identity}'")
    key_path = folder / f"{identity}{KEY_SUFFIX}"
    _check_key(key_path, _read_certificate(certificate_path), certificate_path)
    return Credentials(identity, ca_path, certificate_path, key_path, frozenset(members))


def _read_certificate(path: Path) -> x509.Certificate:
    try:
        return x509.load_pem_x509_certificate(path.read_bytes())
    except FileNotFoundError:
        raise SecurityError(f"missing certificate '{path}'") from None
    except (OSError, ValueError) as error:
        raise SecurityError(f"cannot read certificate '{path}': {error}") from None


def _check_validity(path: Path, certificate: x509.Certificate, when: datetime.datetime) -> None:
    if when > certificate.not_valid_after_utc:
        ended = certificate.not_valid_after_utc.isoformat(timespec="seconds")
        raise SecurityError(f"certificate '{path}' expired on {ended}")
    if when < certificate.not_valid_before_utc:
        starts = certificate.not_valid_before_utc.isoformat(timespec="seconds")
        raise SecurityError(f"certificate '{path}' is not valid before {starts}")


def common_name(certificate: x509.Certificate) -> str:
    """The subject's common name, "" when it has none."""
    names = certificate.subject.get_attributes_for_oid(NameOID.COMMON_NAME)
    value = names[0].value if names else ""
    return value if isinstance(value, str) else value.decode()


def _check_member(
    path: Path,
    certificate: x509.Certificate,
    ca: x509.Certificate,
    ca_path: Path,
    when: datetime.datetime,
) -> None:
    try:
        certificate.verify_directly_issued_by(ca)
    except (ValueError, TypeError, InvalidSignature):
        raise SecurityError(
            f"certificate '{path}' is not signed by the certificate authority '{ca_path}'"
        ) from None
    _check_validity(path, certificate, when)
    name = common_name(certificate)
    if name != path.stem:
        raise SecurityError(
            f"certificate '{path}' names '{name}' as its subject's common name, not"
            f" '{path.stem}' (the identity is the common name; the file is named after it)"
        )
    problem = identity_problem(name)
    if problem is not None:
        raise SecurityError(f"certificate '{path}': {problem}")


def _check_key(path: Path, certificate: x509.Certificate, certificate_path: Path) -> None:
    try:
        key = serialization.load_pem_private_key(path.read_bytes(), password=None)
    except FileNotFoundError:
        raise SecurityError(f"missing private key '{path}'") from None
    except (OSError, ValueError, TypeError) as error:
        raise SecurityError(f"cannot read private key '{path}': {error}") from None
    mine = key.public_key().public_bytes(
        serialization.Encoding.DER, serialization.PublicFormat.SubjectPublicKeyInfo
    )
    theirs = certificate.public_key().public_bytes(
        serialization.Encoding.DER, serialization.PublicFormat.SubjectPublicKeyInfo
    )
    if mine != theirs:
        raise SecurityError(f"private key '{path}' does not belong to '{certificate_path}'")
