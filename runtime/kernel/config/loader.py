"""``load_config``: a configuration file turned into a validated :class:`Config`, or a
:class:`ConfigurationError` listing every problem (runtime.md §1.1 steps 1-5, §1.10)."""

from __future__ import annotations

import os
import types
import typing
from collections.abc import Hashable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final

import yaml
from pydantic import BaseModel, ValidationError
from pydantic_core import ErrorDetails

from sengen.runtime.errors import SengenError
from sengen.runtime.kernel.config.models import (
    CONFIG_ERROR,
    BuildEntry,
    KernelConfig,
    LoadEntry,
    show,
)
from sengen.runtime.kernel.config.tree import (
    KeyPath,
    PList,
    PMap,
    Problem,
    TreeLoader,
    format_path,
    plain,
    provenance,
)
from sengen.runtime.objects.suggest import did_you_mean, same_but_case, suggestion

TOP_LEVEL_KEYS: Final = ("kernel", "load", "build")
SEN_KERNEL_KEYS: Final = ("crashReportDir", "crashReportDisabled", "lockMemoryPages", "sleepPolicy")
SEN_LOG_KEYS: Final = ("pattern", "sinks", "loggers", "backtrace")
SEN_ENTRY_KEYS: Final = ("priority", "stackSize", "cpuAffinity", "sleepPolicy")
OBJECT_KEYS: Final = ("name", "class", "bus")
# How close a build entry's own key must be to one of sengen's to be worth a warning: those keys
# are the user's settings, and a loose match would flag legitimate names.
SETTING_CUTOFF: Final = 0.8

_TYPE_MESSAGES: Final = {
    "string_type": "expected a string",
    "int_type": "expected an integer",
    "int_from_float": "expected an integer",
    "int_parsing": "expected an integer",
    "bool_type": "expected true or false",
    "bool_parsing": "expected true or false",
    "float_type": "expected a number",
    "float_parsing": "expected a number",
    "list_type": "expected a list",
    "dict_type": "expected a map",
    "model_type": "expected a map",
    "model_attributes_type": "expected a map",
}


class ConfigurationError(SengenError, ValueError):
    """Every problem of a configuration, one ``<file>: <key path>: <message>`` line each."""

    def __init__(
        self, problems: list[str], warnings: list[str] | None = None, infos: list[str] | None = None
    ) -> None:
        super().__init__("\n".join(problems))
        self.problems = problems
        self.warnings = warnings or []
        self.infos = infos or []


@dataclass
class Config:
    """A validated configuration.

    ``warnings`` are the WARNING lines (defaulted ``freqHz``, objects without a bus, unknown
    top-level keys); ``infos`` the INFO lines (Sen keys accepted and ignored, an ignored
    ``clockMaster``). ``tree`` is the merged, substituted YAML data without ``include``.
    """

    source: str
    kernel: KernelConfig
    load: list[LoadEntry]
    build: list[BuildEntry]
    tree: dict[object, object]
    warnings: list[str] = field(default_factory=list)
    infos: list[str] = field(default_factory=list)

    def to_yaml(self) -> str:
        """The merged, substituted configuration as YAML (for ``--print-config``)."""
        return yaml.safe_dump(self.tree, sort_keys=False, allow_unicode=True)


def load_config(path: str | Path) -> Config:
    """Read, substitute, parse, include, merge and validate the configuration file ``path``."""
    loader = TreeLoader()
    tree = loader.load_path(Path(path))
    return _finish(loader, tree, str(path))


def load_config_text(text: str, name: str = "<yaml text>") -> Config:
    """As :func:`load_config` for text; ``name`` is the file name in messages, and includes are
    resolved relative to its folder (the working directory for a ``<...>`` name)."""
    loader = TreeLoader()
    anchored = not name.startswith("<")
    folder = Path(name).parent if anchored else Path.cwd()
    chain = (Path(name).resolve(),) if anchored else ()
    tree = loader.load_text(text, name, folder, chain)
    return _finish(loader, tree, name)


def _finish(loader: TreeLoader, tree: PMap | None, source: str) -> Config:
    if loader.problems or tree is None:
        raise ConfigurationError([p.render() for p in loader.problems])
    return _Validator(tree, source).run()


def writable_file_problem(path: Path) -> str | None:
    """Why a file that will be written at run time (a log, a trace, an archive) cannot be,
    checked before start so that the run does not fail midway; None when it can be. Missing
    parent folders are fine (they are created) when the nearest existing one is a writable
    folder."""
    shown = path.as_posix()
    try:
        if path.is_dir():
            return f"'{shown}' is a folder, not a file"
        if path.exists() and not path.is_file():
            return f"'{shown}' exists and is not a regular file"
        if path.exists() and not os.access(path, os.W_OK):
            return f"'{shown}' is not writable"
        parent = path.absolute().parent
        while not parent.exists() and parent != parent.parent:
            parent = parent.parent
        if not parent.is_dir():
            return f"'{shown}' cannot be created: '{parent.as_posix()}' is not a folder"
        if not os.access(parent, os.W_OK | os.X_OK):
            return f"'{shown}' cannot be created: '{parent.as_posix()}' is not writable"
    except OSError as error:
        return f"'{shown}': {error.strerror or error}"
    return None


def unknown_key(key: str, candidates: Iterable[str]) -> str:
    """``unknown key 'k'``, with the known key it most likely meant."""
    return f"unknown key '{key}'{did_you_mean(key, candidates)}"


def _submodel(annotation: Any) -> type[BaseModel] | None:
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return annotation
    origin = typing.get_origin(annotation)
    if origin in (typing.Union, types.UnionType, list, typing.Annotated):
        for arg in typing.get_args(annotation):
            found = _submodel(arg)
            if found is not None:
                return found
    return None


def keys_at(model: type[BaseModel], loc: tuple[int | str, ...]) -> list[str]:
    """The keys a model accepts at ``loc`` (a map's location inside ``model``)."""
    current: type[BaseModel] | None = model
    for part in loc:
        if current is None:
            return []
        if isinstance(part, int):
            continue
        fields = {f.alias or n: f for n, f in current.model_fields.items()}
        info = fields.get(part)
        current = _submodel(info.annotation) if info is not None else None
    if current is None:
        return []
    return [f.alias or n for n, f in current.model_fields.items()]


def validation_messages(
    exc: ValidationError, model: type[BaseModel], outer: Sequence[str] = ()
) -> list[tuple[KeyPath, str]]:
    """A component's own model's errors as (key path, message), in the configuration's words;
    ``outer`` are the keys of the entry around the model, suggested for an unknown key too."""
    found = []
    for err in exc.errors():
        loc: KeyPath = tuple(err["loc"])
        found.append((loc, _message(err, loc, model, {}, outer)))
    return found


def _message(
    err: ErrorDetails,
    loc: KeyPath,
    model: type[BaseModel],
    missing: dict[KeyPath, str],
    outer: Sequence[str] = (),
) -> str:
    kind = err["type"]
    if kind == CONFIG_ERROR:
        return str(err.get("ctx", {}).get("message", "invalid value"))
    if kind in ("missing", "too_short"):
        generic = tuple(-1 if isinstance(p, int) else p for p in loc)
        if generic in missing:
            return missing[generic]
        if kind == "too_short":
            return "must not be empty"
        return f"missing required key '{loc[-1]}'"
    if kind == "extra_forbidden":
        candidates = keys_at(model, loc[:-1])
        return unknown_key(str(loc[-1]), [*candidates, *outer] if len(loc) == 1 else candidates)
    if kind in _TYPE_MESSAGES:
        return f"{_TYPE_MESSAGES[kind]}, got {show(err['input'])}"
    return f"invalid value {show(err['input'])}"


class _Validator:
    def __init__(self, tree: PMap, source: str) -> None:
        self.tree = tree
        self.source = source
        self.errors: list[Problem] = []
        self.warnings: list[Problem] = []
        self.infos: list[Problem] = []
        # The key paths of known keys written with other case (``freqhz``), reported once.
        self.miscased: set[KeyPath] = set()

    # -- reporting --------------------------------------------------------------------------------

    def _at(self, path: KeyPath, message: str) -> Problem:
        return Problem(provenance(self.tree, path), path, message)

    def error(self, path: KeyPath, message: str) -> None:
        self.errors.append(self._at(path, message))

    def warn(self, path: KeyPath, message: str) -> None:
        self.warnings.append(self._at(path, message))

    def info(self, path: KeyPath, message: str) -> None:
        self.infos.append(self._at(path, message))

    def pydantic_errors(
        self,
        exc: ValidationError,
        prefix: KeyPath,
        model: type[BaseModel],
        missing: dict[KeyPath, str],
    ) -> None:
        for err in exc.errors():
            loc: KeyPath = tuple(err["loc"])
            if err["type"] == "missing" and prefix + loc in self.miscased:
                continue  # already reported as the key written with other case
            self.error(prefix + loc, _message(err, loc, model, missing))

    # -- sections ---------------------------------------------------------------------------------

    def run(self) -> Config:
        for key in self.tree:
            text = str(key)
            if key in TOP_LEVEL_KEYS:
                continue
            # Other top-level keys are allowed (YAML anchors live there), but not a section
            # spelt with other case: that section would be silently missing.
            if same_but_case(text, TOP_LEVEL_KEYS) is not None:
                self.error((text,), unknown_key(text, TOP_LEVEL_KEYS))
            else:
                hint = did_you_mean(text, TOP_LEVEL_KEYS)
                self.warn((text,), f"unknown top-level key, ignored{hint}")
        kernel = self.kernel()
        load = self.entries("load", LoadEntry)
        build = self.entries("build", BuildEntry)
        self.cross_checks()
        errors = [p.render() for p in self.errors]
        warnings = [p.render() for p in self.warnings]
        infos = [p.render() for p in self.infos]
        if errors or kernel is None:
            raise ConfigurationError(errors, warnings, infos)
        data = plain(self.tree)
        assert isinstance(data, dict)
        return Config(
            source=self.source,
            kernel=kernel,
            load=[e for e in load if isinstance(e, LoadEntry)],
            build=[e for e in build if isinstance(e, BuildEntry)],
            tree=data,
            warnings=warnings,
            infos=infos,
        )

    def _map(self, path: KeyPath, value: object) -> dict[Any, Any] | None:
        if value is None:
            return {}
        if not isinstance(value, dict):
            self.error(path, f"expected a map, got {show(value)}")
            return None
        data = plain(value)
        assert isinstance(data, dict)
        return data

    def _drop_sen_keys(self, data: dict[Any, Any], path: KeyPath, keys: tuple[str, ...]) -> None:
        for key in keys:
            if key in data:
                del data[key]
                full = format_path((*path, key))
                self.info((*path, key), f"ignoring Sen key '{full}' (not supported by sengen)")

    def kernel(self) -> KernelConfig | None:
        data = self._map(("kernel",), self.tree.get("kernel"))
        if data is None:
            return None
        self._drop_sen_keys(data, ("kernel",), SEN_KERNEL_KEYS)
        log = data.get("logConfig")
        if isinstance(log, dict):
            self._drop_sen_keys(log, ("kernel", "logConfig"), SEN_LOG_KEYS)
        try:
            kernel = KernelConfig.model_validate(data)
        except ValidationError as exc:
            self.pydantic_errors(exc, ("kernel",), KernelConfig, {})
            return None
        where = ("kernel", "clockMaster")
        if kernel.clock_master and kernel.run_mode == "virtualTimeRunning":
            self.error(where, "clockMaster cannot be used with runMode virtualTimeRunning")
        elif kernel.clock_master and kernel.run_mode in ("realTime", "startAndStop"):
            self.info(where, f"clockMaster ignored under runMode {kernel.run_mode}")
        log_file = kernel.log_config.file
        if log_file is not None:
            problem = writable_file_problem(Path(log_file.path))
            if problem is not None:
                place: KeyPath = ("kernel", "logConfig", "file")
                if isinstance(log, dict) and isinstance(log.get("file"), dict):
                    place = (*place, "path")
                self.error(place, problem)
        return kernel

    def entries(
        self, section: str, model: type[LoadEntry] | type[BuildEntry]
    ) -> list[LoadEntry | BuildEntry | None]:
        raw = self.tree.get(section)
        if raw is None:
            return []
        if not isinstance(raw, list):
            self.error((section,), f"expected a list, got {show(raw)}")
            return []
        seen: set[Hashable] = set()
        result: list[LoadEntry | BuildEntry | None] = []
        for index, item in enumerate(raw):
            path: KeyPath = (section, index)
            data = self._map(path, item)
            if data is None or item is None:
                if item is None:
                    self.error(path, f"expected a map, got {show(item)}")
                result.append(None)
                continue
            name = data.get("name")
            if isinstance(name, str) and name:
                if name in seen:
                    self.error(
                        (*path, "name"), f"component '{name}' is repeated in the {section} section"
                    )
                seen.add(name)
            self._entry_keys(path, data, model)
            self._drop_sen_keys(data, path, SEN_ENTRY_KEYS)
            result.append(self.entry(path, data, model))
        return result

    def _miscased(self, path: KeyPath, data: dict[Any, Any], known: tuple[str, ...]) -> None:
        """An error for each key that is a known key but for case: in an entry or an object
        other keys are the user's own, so ``freqhz`` would silently be one of them."""
        for key in data:
            meant = same_but_case(str(key), known)
            if meant is not None:
                self.error((*path, str(key)), unknown_key(str(key), known))
                self.miscased.add((*path, meant))

    def _entry_keys(
        self, path: KeyPath, data: dict[Any, Any], model: type[LoadEntry] | type[BuildEntry]
    ) -> None:
        known = (*keys_at(model, ()), *SEN_ENTRY_KEYS)
        self._miscased(path, data, known)
        objects = data.get("objects")
        if model is BuildEntry and isinstance(objects, list):
            for index, obj in enumerate(objects):
                if isinstance(obj, dict):
                    self._miscased((*path, "objects", index), obj, OBJECT_KEYS)
        if model is not BuildEntry:
            return  # a load entry's own keys are checked by its component's model
        for key in data:
            text = str(key)
            meant = suggestion(text, known, SETTING_CUTOFF)
            if text not in known and meant is not None and (*path, meant) not in self.miscased:
                self.warn(
                    (*path, text),
                    f"'{text}' is not a sengen key: it is passed to the objects as a setting"
                    f" (did you mean '{meant}'?)",
                )

    def entry(
        self, path: KeyPath, data: dict[Any, Any], model: type[LoadEntry] | type[BuildEntry]
    ) -> LoadEntry | BuildEntry | None:
        name = data.get("name")
        shown = name if isinstance(name, str) else ""
        if model is LoadEntry:
            missing: dict[KeyPath, str] = {("name",): "components need a name"}
        else:
            missing = {
                ("name",): "pipelines need a name",
                ("imports",): "missing imports",
                ("objects",): f"no objects defined for pipeline '{shown}'",
                ("objects", -1, "name"): "missing object name",
                ("objects", -1, "class"): "missing class name",
            }
            if data.get("freqHz") is None and (*path, "freqHz") not in self.miscased:
                self.warn((*path, "freqHz"), "component frequency not set, defaulting to 30 Hz")
        try:
            entry = model.model_validate(data)
        except ValidationError as exc:
            self.pydantic_errors(exc, path, model, missing)
            return None
        finally:
            if model is BuildEntry:
                self._objects(path, data.get("objects"), shown)
        if isinstance(entry, BuildEntry):
            for index, obj in enumerate(entry.objects):
                if obj.bus is None:
                    self.warn(
                        (*path, "objects", index),
                        f"object '{obj.name}' has no bus: it will not be published or updated",
                    )
        return entry

    def _objects(self, path: KeyPath, objects: object, component: str) -> None:
        if not isinstance(objects, list):
            return
        seen: set[str] = set()
        for index, obj in enumerate(objects):
            name = obj.get("name") if isinstance(obj, dict) else None
            if isinstance(name, str) and name:
                if name in seen:
                    self.error(
                        (*path, "objects", index, "name"),
                        f"repeated object name '{name}' in component '{component}'",
                    )
                seen.add(name)

    def cross_checks(self) -> None:
        load = self.tree.get("load")
        build = self.tree.get("build")
        if not isinstance(load, PList) or not isinstance(build, PList):
            return
        names = {e.get("name") for e in load if isinstance(e, PMap)}
        for index, entry in enumerate(build):
            name = entry.get("name") if isinstance(entry, PMap) else None
            if isinstance(name, str) and name and name in names:
                self.error(
                    ("build", index, "name"),
                    f"component '{name}' is defined in both load and build",
                )
