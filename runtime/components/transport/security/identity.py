"""What names a secure process: its identity, the common name of its certificate, and the
error secure mode's start-time checks raise. Light on purpose (no ``cryptography``): the
transport's configuration model imports it in plain mode too."""

from __future__ import annotations

import re

from sengen.runtime.errors import SengenError

CA_FILE = "ca.crt"
CERT_SUFFIX = ".crt"
KEY_SUFFIX = ".key"
# A key chunk Zenoh accepts and an ACL can name: no wildcard, no separator, no "@" verbatim
# chunk; 64 characters is the longest common name X.509 allows.
IDENTITY = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,63}")


class SecurityError(SengenError, ValueError):
    """A certificate, a key or the permissions file refused at start: one line, naming the file
    and what is wrong with it."""


def identity_problem(name: str) -> str | None:
    """Why ``name`` cannot be an identity, None if it can."""
    if IDENTITY.fullmatch(name) and name != CA_FILE.removesuffix(CERT_SUFFIX):
        return None
    return (
        f"invalid identity '{name}' (letters, digits, '_', '.' and '-', starting with a letter"
        " or digit, at most 64 characters; 'ca' names the authority)"
    )
