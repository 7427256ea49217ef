"""Secure mode as Zenoh settings: mTLS with the checked certificates, and access control with
each certificate's common name as the ACL subject (docs/design/transport-keys.md, "What only
secure mode can stop").

Every process enforces the same table on its side of each link: what identity ``X`` may send
in (ingress) and what this process sends out to ``X`` (egress). Everything not allowed is
denied, so a peer holding a certificate of the CA but no entry in the permissions file can open
a link and do nothing over it but show its process token (which sengen refuses, and logs once
by name). What is allowed was checked against Zenoh itself (tests/test_security_zenoh.py).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from sengen.runtime.components.transport.security.certificates import Credentials
    from sengen.runtime.components.transport.security.permissions import Permissions

# The key layout's leaves under a process's prefix. Their first chunks start with "@": Zenoh
# reads such a chunk verbatim, and no wildcard matches it, so ``<prefix>/X/**`` would not cover
# ``<prefix>/X/@all``: every leaf is named.
LEAVES = ("@alive/**", "@info", "@all", "@to/*", "@snapshot")
_DECLARE_OWN = ["put", "delete", "declare_queryable", "liveliness_token", "reply"]
_TO_PEER = ["put", "delete"]
_FROM_US = [
    "declare_subscriber",
    "declare_queryable",
    "declare_liveliness_subscriber",
    "liveliness_token",
    "query",
    "liveliness_query",
    "reply",
]


def zenoh_settings(
    credentials: Credentials, permissions: Permissions, prefix: str
) -> dict[str, Any]:
    """Zenoh configuration paths and their values, inserted over sengen's plain settings.
    ``prefix`` is the key layout's, ``sengen/v2``."""
    tls = "transport/link/tls"
    settings: dict[str, Any] = {
        f"{tls}/root_ca_certificate": str(credentials.ca),
        f"{tls}/listen_certificate": str(credentials.certificate),
        f"{tls}/listen_private_key": str(credentials.key),
        f"{tls}/connect_certificate": str(credentials.certificate),
        f"{tls}/connect_private_key": str(credentials.key),
        f"{tls}/enable_mtls": True,
        # Peers reach each other at the addresses gossip hands out, which no certificate can
        # list in advance; who a peer is comes from its certificate (CA chain + common name,
        # the ACL subject), not from the address it was reached at.
        f"{tls}/verify_name_on_connect": False,
        "access_control": access_control(
            sorted(permissions.grants),
            prefix,
            sorted(credentials.members - set(permissions.grants)),
        ),
    }
    return settings


def access_control(
    identities: list[str], prefix: str, strangers: list[str] | None = None
) -> dict[str, Any]:
    """The ``access_control`` section for the identities of the permissions file.
    ``strangers`` hold a certificate of the CA but have no entry: they may only show their
    ``@alive`` token, so that sengen sees them and logs their refusal once, by name."""
    rules: list[dict[str, Any]] = []
    subjects: list[dict[str, Any]] = []
    policies: list[dict[str, Any]] = []
    for stranger in strangers or []:
        shown = f"{stranger} shows itself"
        rules.append(
            _rule(shown, "ingress", ["liveliness_token"], [f"{prefix}/{stranger}/@alive/**"])
        )
        subjects.append({"id": stranger, "cert_common_names": [stranger]})
        policies.append({"id": f"{stranger} policy", "rules": [shown], "subjects": [stranger]})
    for identity in identities:
        own = f"{identity} own"
        reads = f"{identity} reads"
        discovers = f"{identity} discovers"
        receives = f"{identity} receives"
        answered = f"{identity} answered"
        rules += [
            _rule(own, "ingress", _DECLARE_OWN, [f"{prefix}/{identity}/{leaf}" for leaf in LEAVES]),
            _rule(
                reads,
                "ingress",
                ["declare_subscriber"],
                [f"{prefix}/*/@all", f"{prefix}/*/@to/{identity}"],
            ),
            _rule(
                discovers,
                "ingress",
                ["declare_liveliness_subscriber", "liveliness_query", "query"],
                [f"{prefix}/*/@alive/**", f"{prefix}/*/@snapshot", f"{prefix}/*/@info"],
            ),
            _rule(receives, "egress", _TO_PEER, [f"{prefix}/*/@all", f"{prefix}/*/@to/{identity}"]),
            _rule(answered, "egress", _FROM_US, [f"{prefix}/*/{leaf}" for leaf in LEAVES]),
        ]
        subjects.append({"id": identity, "cert_common_names": [identity]})
        policies.append(
            {
                "id": f"{identity} policy",
                "rules": [own, reads, discovers, receives, answered],
                "subjects": [identity],
            }
        )
    return {
        "enabled": True,
        "default_permission": "deny",
        "rules": rules,
        "subjects": subjects,
        "policies": policies,
    }


def _rule(rule_id: str, flow: str, messages: list[str], keys: list[str]) -> dict[str, Any]:
    return {
        "id": rule_id,
        "permission": "allow",
        "flows": [flow],
        "messages": messages,
        "key_exprs": keys,
    }
