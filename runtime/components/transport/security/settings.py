"""The transport's ``security:`` key: secure mode is on when it is there.

```yaml
load:
  - name: transport
    security: {identity: producer, certificates: certs, permissions: certs/permissions.yaml}
```

Paths are relative to the working directory, as the recorder's ``file`` is. Everything is
checked when the configuration is: a missing or expired certificate, one of another CA, a
permissions file with an unknown key or identity are refused at start, before any link opens,
with the configuration file, the key path and the value.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from pydantic import (
    BaseModel,
    ConfigDict,
    PrivateAttr,
    ValidationError,
    ValidationInfo,
    field_validator,
    model_validator,
)
from pydantic_core import InitErrorDetails

from sengen.runtime.components.transport.security.identity import SecurityError, identity_problem
from sengen.runtime.kernel.extension import fail

if TYPE_CHECKING:
    from sengen.runtime.components.transport.security.certificates import Credentials
    from sengen.runtime.components.transport.security.permissions import Permissions


class SecurityConfig(BaseModel):
    """``identity``: this process's (its certificate's common name); ``certificates``: the folder
    of ``ca.crt``, the members' ``<identity>.crt`` and this process's ``<identity>.key``;
    ``permissions``: the permissions file. Each problem is reported at the key it comes from;
    the checks are cheap (a few small files), so each key's check reads what it needs."""

    model_config = ConfigDict(extra="forbid", strict=True)

    identity: str
    certificates: str
    permissions: str
    _credentials: Credentials | None = PrivateAttr(default=None)
    _permissions: Permissions | None = PrivateAttr(default=None)

    @field_validator("identity")
    @classmethod
    def _identity(cls, value: str) -> str:
        problem = identity_problem(value)
        if problem is not None:
            raise fail(problem)
        return value

    @field_validator("certificates")
    @classmethod
    def _certificates(cls, value: str, info: ValidationInfo) -> str:
        # Loaded here, not at the top: ``cryptography`` costs plain mode nothing.
        from sengen.runtime.components.transport.security.certificates import load_credentials

        if "identity" in info.data:
            _checked(lambda: load_credentials(Path(value), info.data["identity"]))
        return value

    @field_validator("permissions")
    @classmethod
    def _permissions_file(cls, value: str, info: ValidationInfo) -> str:
        from sengen.runtime.components.transport.security.certificates import load_credentials
        from sengen.runtime.components.transport.security.permissions import load_permissions

        if "identity" in info.data and "certificates" in info.data:
            identity = info.data["identity"]
            members = load_credentials(Path(info.data["certificates"]), identity).members
            _checked(lambda: load_permissions(Path(value), members, identity))
        return value

    @model_validator(mode="after")
    def _load(self) -> SecurityConfig:
        from sengen.runtime.components.transport.security.certificates import load_credentials
        from sengen.runtime.components.transport.security.permissions import load_permissions

        self._credentials = load_credentials(Path(self.certificates), self.identity)
        self._permissions = load_permissions(
            Path(self.permissions), self._credentials.members, self.identity
        )
        return self

    @property
    def credentials(self) -> Credentials:
        assert self._credentials is not None  # set by validation
        return self._credentials

    @property
    def granted(self) -> Permissions:
        assert self._permissions is not None  # set by validation
        return self._permissions


def _checked(check: Callable[[], object]) -> None:
    try:
        check()
    except SecurityError as error:
        raise fail(str(error)) from None


def require_tls(model: str, endpoints: dict[str, list[str]]) -> None:
    """Refuse, at its key (``rendezvous``, ``listen``, ``connect``), the first endpoint that is
    not TLS: secure mode speaks TLS only."""
    for key, values in endpoints.items():
        for endpoint in values:
            if not endpoint.startswith("tls/"):
                message = (
                    f"secure mode connects over TLS only: endpoint '{endpoint}' must start"
                    " with 'tls/'"
                )
                problem = InitErrorDetails(type=fail(message), loc=(key,), input=values)
                raise ValidationError.from_exception_data(model, [problem])
