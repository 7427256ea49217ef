"""The pydantic (v2) models of a sengen configuration (runtime.md §1.5-§1.8).

Validators raise :class:`PydanticCustomError` with the exact messages of runtime.md §1.10, which
the loader turns into ``<file>: <key path>: <message>`` lines; pydantic's own texts never reach a
user. ``null`` for an optional key restores its default (§1.3).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Annotated, Any, Final, Literal

from pydantic import (
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    PlainValidator,
    ValidationInfo,
    field_validator,
    model_validator,
)
from pydantic_core import PydanticCustomError

from sengen.runtime.objects.addresses import bus_address_problem, object_name_problem
from sengen.runtime.objects.duration import Duration, TimeValueError

CONFIG_ERROR: Final = "sengen_config"

RunMode = Literal["realTime", "virtualTime", "virtualTimeRunning", "startAndStop"]
LogLevel = Literal["trace", "debug", "info", "warn", "err", "critical", "off"]
EvictionPolicy = Literal["dropOldest", "dropNewest"]

RUN_MODES: Final = ("realTime", "virtualTime", "virtualTimeRunning", "startAndStop")
LOG_LEVELS: Final = ("trace", "debug", "info", "warn", "err", "critical", "off")
LOG_LEVEL_ALIASES: Final = {"warning": "warn", "error": "err"}
EVICTION_POLICIES: Final = ("dropOldest", "dropNewest")
DEFAULT_FREQ_HZ: Final = 30.0


def fail(message: str) -> PydanticCustomError:
    """A validation error whose text is exactly ``message``."""
    return PydanticCustomError(CONFIG_ERROR, "{message}", {"message": message})


def scalar_text(value: object) -> str:
    """A YAML value as it reads in a message, without quotes."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if value is None:
        return "null"
    return str(value)


def show(value: object) -> str:
    """A YAML value in a message: strings quoted, other values as YAML writes them."""
    return f"'{value}'" if isinstance(value, str) else scalar_text(value)


def one_of(choices: tuple[str, ...], aliases: dict[str, str] | None = None) -> Callable[[Any], Any]:
    """A before-validator accepting exactly ``choices`` (and ``aliases``, mapped to a choice)."""
    table = aliases or {}

    def check(value: Any) -> Any:
        if isinstance(value, str) and value in table:
            return table[value]
        if isinstance(value, str) and value in choices:
            return value
        raise fail(f"invalid value '{scalar_text(value)}' (expected one of {', '.join(choices)})")

    return check


def _bus(value: Any) -> Any:
    problem = bus_address_problem(value)
    if problem is not None:
        raise fail(problem)
    return value


def _group(value: Any) -> Any:
    if isinstance(value, int) and not isinstance(value, bool) and value < 1:
        raise fail(f"invalid group {value} (groups start at 1)")
    return value


def _max_size(value: Any) -> Any:
    if isinstance(value, int) and not isinstance(value, bool) and value < 0:
        raise fail("maxSize must be >= 0")
    return value


def _duration(value: Any) -> Duration:
    if isinstance(value, Duration):
        return value
    if isinstance(value, bool) or not isinstance(value, str | int | float):
        text = scalar_text(value)
        raise fail(
            f"invalid Duration '{text}' (expected a number followed by ns, us, ms, s, min or h)"
        )
    try:
        return Duration.parse(str(value))
    except TimeValueError as exc:
        raise fail(str(exc)) from None


BusAddress = Annotated[str, BeforeValidator(_bus)]
Group = Annotated[int, BeforeValidator(_group)]


class _Model(BaseModel):
    """Strict: YAML already typed the values, so ``"5"`` is not an integer and ``1`` no bool."""

    model_config = ConfigDict(extra="forbid", strict=True, arbitrary_types_allowed=True)

    @model_validator(mode="before")
    @classmethod
    def _null_is_default(cls, data: Any) -> Any:
        """An explicit ``null`` for a declared key restores its default (runtime.md §1.3)."""
        if isinstance(data, dict):
            declared = {f.alias or n for n, f in cls.model_fields.items()}
            return {k: v for k, v in data.items() if not (v is None and k in declared)}
        return data


class QueueConfig(_Model):
    """A component's work queue (runtime.md §1.8); ``maxSize: 0`` is unbounded."""

    eviction_policy: Annotated[
        EvictionPolicy, BeforeValidator(one_of(EVICTION_POLICIES)), Field(alias="evictionPolicy")
    ] = "dropNewest"
    max_size: Annotated[int, BeforeValidator(_max_size), Field(alias="maxSize")] = 0


class LogFileConfig(_Model):
    """The optional file sink of ``logConfig``; ``level`` defaults to ``logConfig.level``."""

    path: str
    level: Annotated[LogLevel | None, BeforeValidator(one_of(LOG_LEVELS, LOG_LEVEL_ALIASES))] = None
    truncate: bool = False


def _log_file(value: Any) -> Any:
    if isinstance(value, str):
        return {"path": value}
    if isinstance(value, dict):
        return value
    raise fail(f"expected a file path or a map {{path, level, truncate}}, got {show(value)}")


class LogConfig(_Model):
    """``kernel.logConfig`` (runtime.md §1.5), simplified from Sen's."""

    level: Annotated[LogLevel, BeforeValidator(one_of(LOG_LEVELS, LOG_LEVEL_ALIASES))] = "info"
    file: Annotated[LogFileConfig | None, BeforeValidator(_log_file)] = None

    @model_validator(mode="after")
    def _file_level(self) -> LogConfig:
        if self.file is not None and self.file.level is None:
            self.file.level = self.level
        return self


class KernelConfig(_Model):
    """``kernel:`` (runtime.md §1.5). ``clockBus`` defaults to ``bus``."""

    run_mode: Annotated[RunMode, BeforeValidator(one_of(RUN_MODES)), Field(alias="runMode")] = (
        "realTime"
    )
    app_name: Annotated[str, Field(alias="appName")] = ""
    bus: BusAddress = "local.kernel"
    clock_bus: Annotated[str | None, BeforeValidator(_bus), Field(alias="clockBus")] = None
    clock_name: Annotated[str, Field(alias="clockName")] = "clock"
    clock_master: Annotated[bool, Field(alias="clockMaster")] = False
    log_config: LogConfig = Field(default_factory=LogConfig, alias="logConfig")
    shutdown_timeout: Annotated[
        Duration, PlainValidator(_duration), Field(alias="shutdownTimeout")
    ] = Duration(5 * 10**9)
    # The timeout of a call made without ``timeout=`` (in the caller's time: virtual under
    # stepping), so that a call whose answer is lost fails instead of waiting forever; 0: none.
    call_timeout: Annotated[Duration, PlainValidator(_duration), Field(alias="callTimeout")] = (
        Duration(30 * 10**9)
    )

    @field_validator("clock_name")
    @classmethod
    def _clock_name(cls, value: str) -> str:
        problem = object_name_problem(value)
        if problem is not None:
            raise fail(problem)
        return value

    @field_validator("shutdown_timeout")
    @classmethod
    def _positive_timeout(cls, value: Duration) -> Duration:
        if value.ns <= 0:
            raise fail("shutdownTimeout must be > 0")
        return value

    @field_validator("call_timeout")
    @classmethod
    def _call_timeout(cls, value: Duration) -> Duration:
        if value.ns < 0:
            raise fail("callTimeout must be >= 0 (0: no default timeout)")
        return value

    @model_validator(mode="after")
    def _clock_bus_default(self) -> KernelConfig:
        if self.clock_bus is None:
            self.clock_bus = self.bus
        return self

    @property
    def effective_clock_bus(self) -> str:
        return self.clock_bus if self.clock_bus is not None else self.bus


class _Entry(_Model):
    """Shared by ``load:`` and ``build:`` entries; other keys are the component's own settings."""

    model_config = ConfigDict(extra="allow")

    name: str
    group: Group = 1
    in_queue: QueueConfig = Field(default_factory=QueueConfig, alias="inQueue")
    out_queue: QueueConfig = Field(default_factory=QueueConfig, alias="outQueue")

    @property
    def settings(self) -> dict[str, object]:
        """The keys that are not sengen's: the component's (or its objects') own parameters."""
        return dict(self.model_extra or {})


class LoadEntry(_Entry):
    """A ``load:`` entry (runtime.md §1.6)."""

    component: str | None = None

    @field_validator("name")
    @classmethod
    def _name(cls, value: str) -> str:
        if value == "":
            raise fail("components need a name")
        return value

    def component_config(self) -> dict[str, object]:
        """What ``api.get_config()`` returns: the whole entry, ``name`` and ``group`` included."""
        result: dict[str, object] = {"name": self.name, "group": self.group}
        if self.component is not None:
            result["component"] = self.component
        result.update(self.settings)
        return result


class ObjectEntry(_Model):
    """An object of a ``build:`` entry. ``properties`` keeps the raw YAML values: converting them
    needs the class, which the kernel resolves from the imports."""

    name: str
    class_name: Annotated[str, Field(alias="class")]
    bus: Annotated[str | None, BeforeValidator(_bus)] = None
    properties: dict[str, object] = Field(default_factory=dict)

    @model_validator(mode="before")
    @classmethod
    def _split(cls, data: Any) -> Any:
        if not isinstance(data, dict):
            return data
        fixed = {"name", "class", "bus"}
        result: dict[str, Any] = {k: v for k, v in data.items() if k in fixed}
        if result.get("bus", 0) is None:
            del result["bus"]
        result["properties"] = {str(k): v for k, v in data.items() if k not in fixed}
        return result

    @field_validator("name")
    @classmethod
    def _name(cls, value: str) -> str:
        problem = object_name_problem(value)
        if problem is not None:
            raise fail(problem)
        return value

    @field_validator("class_name")
    @classmethod
    def _class(cls, value: str) -> str:
        if value == "":
            raise fail("missing class name")
        return value


class BuildEntry(_Entry):
    """A ``build:`` entry, a pipeline (runtime.md §1.7); ``period_ns`` = ``round(1e9 / freqHz)``."""

    freq_hz: Annotated[float, Field(alias="freqHz")] = DEFAULT_FREQ_HZ
    imports: Annotated[list[str], Field(min_length=1)]
    objects: Annotated[list[ObjectEntry], Field(min_length=1)]

    @field_validator("name")
    @classmethod
    def _name(cls, value: str) -> str:
        if value == "":
            raise fail("pipelines need a name")
        return value

    @field_validator("freq_hz", mode="plain")
    @classmethod
    def _freq(cls, value: Any, info: ValidationInfo) -> float:
        name = info.data.get("name", "")
        number = value if isinstance(value, int | float) and not isinstance(value, bool) else None
        if number is None or not math.isfinite(number) or number <= 0 or round(1e9 / number) < 1:
            raise fail(f"invalid frequency value '{scalar_text(value)}' for pipeline '{name}'")
        return float(number)

    @property
    def period_ns(self) -> int:
        return round(1e9 / self.freq_hz)

    def component_config(self) -> dict[str, object]:
        """What ``api.get_config()`` returns to the objects: the entry minus ``group``,
        ``imports`` and ``objects`` (``name`` and ``freqHz`` included)."""
        result: dict[str, object] = {"name": self.name, "freqHz": self.freq_hz}
        result.update(self.settings)
        return result
