"""The launch file of ``sengen launch``: its pydantic model and its validation.

Everything is checked before any process starts, and every problem is one
``<file>: <key path>: <message>`` line, as for a configuration file (runtime.md §1.10): unknown
keys (with a suggestion), wrong values, configuration files that do not exist, duplicate process
names, unknown or circular ``requires``, and a ``master`` that is not stepped.
"""

from __future__ import annotations

import difflib
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any, Final

import yaml
from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, ValidationError
from pydantic_core import ErrorDetails, PydanticCustomError

from sengen.runtime.errors import SengenError
from sengen.runtime.kernel.config.envsubst import EnvError, substitute_env
from sengen.runtime.kernel.config.tree import UnreadableFile, read_text
from sengen.runtime.kernel.config.yamlread import parse_yaml
from sengen.runtime.objects.addresses import bus_address_problem
from sengen.runtime.objects.duration import Duration, TimeValueError

_ERROR: Final = "sengen_launch"
# A process name is also its clock's object name when stepped, and a prefix on a terminal.
_NAME: Final = re.compile(r"^[A-Za-z][A-Za-z0-9_]*$")
_TYPE_MESSAGES: Final = {
    "string_type": "expected a string",
    "bool_type": "expected true or false",
    "bool_parsing": "expected true or false",
    "int_type": "expected an integer",
    "int_parsing": "expected an integer",
    "int_from_float": "expected an integer",
    "list_type": "expected a list",
    "dict_type": "expected a map",
    "model_type": "expected a map",
    "model_attributes_type": "expected a map",
    "greater_than_equal": "expected a number >= 0",
    "too_short": "expected at least one item",
}


class LaunchFileError(SengenError, ValueError):
    """Every problem of a launch file, one ``<file>: <key path>: <message>`` line each."""

    def __init__(self, problems: list[str]) -> None:
        super().__init__("\n".join(problems))
        self.problems = problems


def _fail(message: str) -> PydanticCustomError:
    return PydanticCustomError(_ERROR, "{message}", {"message": message})


def _show(value: object) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if value is None:
        return "null"
    return f"'{value}'" if isinstance(value, str) else str(value)


def _duration(value: Any) -> Duration:
    if isinstance(value, str):
        try:
            duration = Duration.parse(value)
        except TimeValueError as error:
            raise _fail(f"{error}") from None
        if duration.ns > 0:
            return duration
    raise _fail(f"expected a positive duration such as '2s', got {_show(value)}")


def _text(value: Any) -> Any:
    """Scalars as the text a command line or an environment gets (``10`` is ``'10'``)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return str(value)
    return value


def _name(value: Any) -> Any:
    if isinstance(value, str) and not _NAME.match(value):
        raise _fail(f"invalid process name {_show(value)} (letters, digits and '_')")
    return value


def _bus(value: Any) -> Any:
    problem = bus_address_problem(value) if isinstance(value, str) else None
    if problem is not None:
        raise _fail(problem)
    return value


DurationValue = Annotated[Duration, BeforeValidator(_duration)]
Text = Annotated[str, BeforeValidator(_text)]


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", populate_by_name=True, arbitrary_types_allowed=True)


class Respawn(_Model):
    """``respawn:``: restart after an exit, waiting ``delay``, doubled at each restart up to
    ``maxDelay``; at most ``limit`` restarts (``null``: no limit)."""

    delay: DurationValue = Duration(10**9)
    max_delay: Annotated[DurationValue, Field(alias="maxDelay")] = Duration(30 * 10**9)
    limit: Annotated[int | None, Field(ge=0)] = 10


def _respawn(value: Any) -> Any:
    if value is True:
        return Respawn()
    if value is False or value is None:
        return None
    return value


class ProcessEntry(_Model):
    """One process: ``sengen run CONFIG ARGS...`` with ``env`` added to its environment."""

    name: Annotated[str, BeforeValidator(_name)]
    config: str
    args: list[Text] = Field(default_factory=list)
    env: dict[str, Text] = Field(default_factory=dict)
    respawn: Annotated[Respawn | None, BeforeValidator(_respawn)] = None
    requires: list[str] = Field(default_factory=list)
    required: bool = False
    stepped: bool | None = None


class LaunchModel(_Model):
    """The launch file as written."""

    processes: Annotated[list[ProcessEntry], Field(min_length=1)]
    env: dict[str, Text] = Field(default_factory=dict)
    stepped: bool = False
    master: str | None = None
    clock_bus: Annotated[str | None, BeforeValidator(_bus), Field(alias="clockBus")] = None
    until: DurationValue | None = None
    ready_timeout: Annotated[DurationValue, Field(alias="readyTimeout")] = Duration(30 * 10**9)
    stop_timeout: Annotated[DurationValue, Field(alias="stopTimeout")] = Duration(10 * 10**9)


@dataclass(frozen=True)
class Process:
    """A validated process: its configuration as an absolute path, its environment merged."""

    name: str
    config: Path
    args: tuple[str, ...]
    env: dict[str, str]
    respawn: Respawn | None
    requires: tuple[str, ...]
    required: bool
    stepped: bool
    master: bool


@dataclass(frozen=True)
class Launch:
    """A validated launch file: its processes in start order (every one after those it
    requires; otherwise in file order)."""

    file: Path
    processes: tuple[Process, ...]
    clock_bus: str
    until: Duration | None
    ready_timeout: Duration
    stop_timeout: Duration


def load_launch(path: Path) -> Launch:
    """Read, substitute ``@env``, parse and validate the launch file ``path``."""
    shown = _display(path)
    problems: list[str] = []
    try:
        text = read_text(path)  # a folder, a device or a huge file is refused unread
        text, missing = substitute_env(text)
    except UnreadableFile as error:
        raise LaunchFileError([f"{shown}: cannot read launch file '{shown}': {error}"]) from None
    except EnvError as error:
        raise LaunchFileError([f"{shown}: {error}"]) from None
    if missing:
        raise LaunchFileError(
            [f"{shown}: environment variable {v} not found and no default value" for v in missing]
        )
    try:
        data = parse_yaml(text)  # bounded: depth, aliases expanded; duplicate keys refused
    except yaml.YAMLError as error:
        mark = getattr(error, "problem_mark", None)
        where = f" (line {mark.line + 1}, column {mark.column + 1})" if mark else ""
        problem = getattr(error, "problem", None) or "syntax error"
        raise LaunchFileError([f"{shown}: invalid YAML: {problem}{where}"]) from None
    if not isinstance(data, dict):
        raise LaunchFileError([f"{shown}: the launch file must be a map with 'processes'"])
    try:
        model = LaunchModel.model_validate(data)
    except ValidationError as error:
        raise LaunchFileError([_render(shown, e) for e in error.errors()]) from None
    _check(model, path.parent, shown, problems)
    if problems:
        raise LaunchFileError(problems)
    return _resolve(model, path)


def _display(path: Path) -> str:
    try:
        return path.resolve().relative_to(Path.cwd().resolve()).as_posix()
    except (ValueError, OSError):
        return path.as_posix()


def _where(loc: tuple[int | str, ...]) -> str:
    out = ""
    for part in loc:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else part)
    return out


def _keys(loc: tuple[int | str, ...]) -> list[str]:
    """The keys accepted by the map at ``loc`` (for a suggestion)."""
    model: type[BaseModel] = LaunchModel
    for part in loc:
        if part == "processes":
            model = ProcessEntry
        elif part == "respawn":
            model = Respawn
    return [info.alias or name for name, info in model.model_fields.items()]


def _render(file: str, error: ErrorDetails) -> str:
    loc = tuple(part for part in error["loc"] if not str(part).startswith("function-"))
    # A union (respawn: true or a map) adds the member's type to the location: not a key.
    loc = tuple(part for part in loc if part not in ("Respawn", "bool"))
    kind = error["type"]
    if kind == "extra_forbidden":
        key = str(loc[-1])
        close = difflib.get_close_matches(key, _keys(loc[:-1]), n=1, cutoff=0.6)
        hint = f" (did you mean '{close[0]}'?)" if close else ""
        return f"{file}: {_where(loc)}: unknown key '{key}'{hint}"
    if kind == "missing":
        return f"{file}: {_where(loc[:-1]) or '(top level)'}: missing key '{loc[-1]}'"
    if kind == _ERROR:
        return f"{file}: {_where(loc)}: {error['msg']}"
    message = _TYPE_MESSAGES.get(kind, "invalid value")
    return f"{file}: {_where(loc)}: {message}, got {_show(error['input'])}"


def _check(model: LaunchModel, folder: Path, file: str, problems: list[str]) -> None:
    first: dict[str, int] = {}
    for index, entry in enumerate(model.processes):
        where = f"{file}: processes[{index}]"
        if entry.name in first:
            problems.append(
                f"{where}.name: duplicate process name '{entry.name}'"
                f" (first at processes[{first[entry.name]}])"
            )
        else:
            first[entry.name] = index
        config = folder / entry.config
        if not config.is_file():
            problems.append(f"{where}.config: configuration file '{entry.config}' not found")
    for index, entry in enumerate(model.processes):
        for position, needed in enumerate(entry.requires):
            if needed not in first:
                problems.append(
                    f"{file}: processes[{index}].requires[{position}]:"
                    f" unknown process '{needed}'"
                )
    cycle = _cycle(model.processes, first)
    if cycle:
        index = first[cycle[0]]
        problems.append(
            f"{file}: processes[{index}].requires: cycle in requires: {' -> '.join(cycle)}"
        )
    stepped = [e.name for e in model.processes if _stepped(model, e)]
    if model.master is not None and model.master not in stepped:
        reason = "a stepped process" if model.master in first else "a process name"
        problems.append(f"{file}: master: '{model.master}' is not {reason}")
    if model.until is not None and not stepped:
        problems.append(f"{file}: until: {model.until} needs stepped processes")


def _stepped(model: LaunchModel, entry: ProcessEntry) -> bool:
    return model.stepped if entry.stepped is None else entry.stepped


def _cycle(entries: list[ProcessEntry], index: dict[str, int]) -> list[str]:
    """The first cycle of ``requires`` in file order, as names with the first one repeated."""
    state: dict[str, int] = {}  # 1: on the path being explored, 2: done

    def visit(name: str, path: list[str]) -> list[str]:
        state[name] = 1
        for needed in entries[index[name]].requires:
            if needed not in index:
                continue
            if state.get(needed) == 1:
                return [*path[path.index(needed) :], needed]
            if needed not in state:
                found = visit(needed, [*path, needed])
                if found:
                    return found
        state[name] = 2
        return []

    for entry in entries:
        if entry.name not in state:
            found = visit(entry.name, [entry.name])
            if found:
                return found
    return []


def _resolve(model: LaunchModel, path: Path) -> Launch:
    folder = path.resolve().parent
    stepped = [e.name for e in model.processes if _stepped(model, e)]
    master = model.master or (stepped[-1] if stepped else None)
    needs = {e.name: list(e.requires) for e in model.processes}
    if master is not None:
        # The master steps the clocks it finds as it starts: it starts after the other stepped
        # processes are up (those that do not wait for it), so all take part from the first step.
        for name in stepped:
            if name != master and not _depends(needs, name, master):
                needs[master].append(name)
    by_name = {e.name: e for e in model.processes}
    processes = tuple(
        Process(
            name=name,
            config=folder / by_name[name].config,
            args=tuple(by_name[name].args),
            env={**model.env, **by_name[name].env},
            respawn=by_name[name].respawn,
            requires=tuple(dict.fromkeys(needs[name])),
            # A master stepping to `until` ends when it is there: so does the launch.
            required=by_name[name].required or (name == master and model.until is not None),
            stepped=name in stepped,
            master=name == master,
        )
        for name in _order([e.name for e in model.processes], needs)
    )
    return Launch(
        file=path,
        processes=processes,
        clock_bus=model.clock_bus or f"{_session(path)}.clocks",
        until=model.until,
        ready_timeout=model.ready_timeout,
        stop_timeout=model.stop_timeout,
    )


def _depends(needs: dict[str, list[str]], name: str, target: str) -> bool:
    """Whether ``name`` requires ``target``, directly or through others (no cycles here)."""
    return any(n == target or _depends(needs, n, target) for n in needs[name])


def _session(path: Path) -> str:
    """A session name from the launch file's name: one shared by its processes' clocks."""
    stem = re.sub(r"[^A-Za-z0-9_]", "_", path.stem)
    return stem if stem[:1].isalpha() else f"launch_{stem}"


def _order(names: list[str], needs: dict[str, list[str]]) -> list[str]:
    """File order, each process moved after those it requires (``needs`` has no cycle)."""
    placed: dict[str, None] = {}

    def place(name: str) -> None:
        if name not in placed:
            for needed in needs[name]:
                place(needed)
            placed[name] = None

    for name in names:
        place(name)
    return list(placed)
