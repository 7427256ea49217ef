"""The ``web`` entry's own keys (docs/guide/web.md)."""

from __future__ import annotations

import ipaddress
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from sengen.runtime.kernel.extension import BusAddress, fail

LOOPBACK = "127.0.0.1"


class WebConfig(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True, populate_by_name=True)

    host: str = LOOPBACK
    port: int = Field(default=8080, ge=0, le=65535)  # 0: any free port, logged at start
    token: str | None = Field(default=None, min_length=8)
    tls_cert: str | None = Field(default=None, alias="tlsCert")  # PEM files: HTTPS
    tls_key: str | None = Field(default=None, alias="tlsKey")
    cors_origins: list[str] = Field(default_factory=list, alias="corsOrigins")
    # Buses whose interests are open from the start (the page opens what it shows).
    open: list[BusAddress] = Field(default_factory=list)
    freq_hz: float = Field(default=30.0, alias="freqHz", gt=0, le=1000)
    max_body_bytes: int = Field(default=65536, alias="maxBodyBytes", ge=1024)
    # Requests per second per client address; a burst of twice as many is allowed.
    rate_limit: float = Field(default=500.0, alias="rateLimit", gt=0)
    max_interests: int = Field(default=64, alias="maxInterests", ge=1)
    max_clients: int = Field(default=32, alias="maxClients", ge=1)

    @field_validator("host")
    @classmethod
    def _host(cls, value: str) -> str:
        if value != "localhost":
            try:
                ipaddress.ip_address(value)
            except ValueError:
                raise fail(f"invalid host '{value}': an IP address or localhost") from None
        return value

    @field_validator("tls_cert", "tls_key")
    @classmethod
    def _file(cls, value: str | None) -> str | None:
        if value is not None and not Path(value).is_file():
            raise fail(f"no such file '{value}'")
        return value

    @model_validator(mode="after")
    def _tls_pair(self) -> WebConfig:
        if (self.tls_cert is None) != (self.tls_key is None):
            raise fail("tlsCert and tlsKey go together")
        return self

    @property
    def loopback(self) -> bool:
        return self.host == "localhost" or ipaddress.ip_address(self.host).is_loopback
