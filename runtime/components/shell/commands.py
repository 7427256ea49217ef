"""The shell's commands (runtime.md §9.1) and the dispatch of a line to one of them.

A command is a function of the console and the text after its name. It prints its output,
raises :class:`CommandError` to fail, and returns None when it is done or a generator of what
it waits for (:mod:`.jobs`). A line that starts with no command name is ``<obj>.<member> ...``.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from sengen.runtime import Duration, Object, QueryError, TimeValueError
from sengen.runtime.errors import RegistryError
from sengen.runtime.kernel.extension import bus_address_problem, did_you_mean, registry

from . import clock, echo
from .jobs import Again, CommandError, Steps, Until
from .members import member_command
from .processes import ps, remote_owner
from .render import class_info, kind_of, object_info, table, type_info
from .sources import query_name_problem
from .suggest import object_hint

if TYPE_CHECKING:
    from .console import Console
    from .sources import Source


@dataclass(frozen=True)
class Command:
    usage: str
    summary: str
    run: Callable[[Console, str], Steps | None]


def dispatch(console: Console, line: str) -> Steps | None:
    name, rest = (*line.split(maxsplit=1), "")[:2]
    command = COMMANDS.get(name)
    if command is not None:
        return command.run(console, rest.strip())
    hint = did_you_mean(name, COMMANDS) if "." not in name else ""
    if hint:  # a name without a dot is no <obj>.<member>: the suggestion says what it could be
        raise CommandError(f"unknown command '{name}'{hint}")
    if "=" in name:  # <obj>.<property>=value, written without spaces
        name, _, value = line.strip().partition("=")
        return member_command(console, name.strip(), "=" + value)
    return member_command(console, name, rest.strip())


# -- sources -------------------------------------------------------------------------------------


def _open(console: Console, text: str) -> None:
    if not text or " " in text:
        raise CommandError("usage: open <session> | open <session.bus>")
    if "." not in text:  # a session: its buses open as they are detected
        problem = bus_address_problem(f"{text}.bus")
        if problem is not None:
            raise CommandError(f"invalid session name '{text}'")
        console.say(f"watching session {text}")
        console.sources.open_session(text)
        return
    problem = bus_address_problem(text)
    if problem is not None:
        raise CommandError(problem)
    console.sources.open(text, f"SELECT * FROM {text}", announce=True)
    console.say(f"opened {text}")


def _query(console: Console, text: str) -> None:
    name, _, selection = text.partition(" ")
    selection = selection.strip()
    if not name or not selection:
        raise CommandError('usage: query <name> "SELECT ... FROM session.bus [WHERE ...]"')
    problem = query_name_problem(name)
    if problem is not None:
        raise CommandError(problem)
    if len(selection) > 1 and selection[0] in "\"'" and selection[-1] == selection[0]:
        selection = selection[1:-1]
    try:
        console.sources.open(name, selection, announce=True)
    except QueryError as error:
        raise CommandError(*str(error).splitlines()) from None
    console.say(f"opened {name}")


def _close(console: Console, text: str) -> None:
    if not text:
        raise CommandError("usage: close <source>")
    console.sources.close(text)
    console.say(f"closed {text}")


def _src(console: Console, text: str) -> None:
    sources = console.sources.sources.values()
    if not sources:
        console.say("no open sources")
    for line in table([(s.name, str(s.query)) for s in sources], indent=""):
        console.say(line)


def _ls(console: Console, prefix: str) -> None:
    """Sessions → buses → objects, then the named queries; dots in names form groups. Buses
    detected but not opened are listed and marked."""
    sessions: dict[str, list[Source | str]] = {}
    queries: list[Source] = []
    for source in console.sources.sources.values():
        if source.name == source.query.bus:  # opened as a bus (query names have no dot)
            sessions.setdefault(source.name.partition(".")[0], []).append(source)
        else:
            queries.append(source)
    for bus in console.sources.sessions.buses():
        if bus not in console.sources.sources and bus.startswith(prefix):
            sessions.setdefault(bus.partition(".")[0], []).append(bus)
    lines: list[str] = []
    for session, buses in sessions.items():
        shown: list[tuple[Source | str, list[tuple[str, Object]]]] = []
        for entry in buses:
            if isinstance(entry, str):
                shown.append((entry, []))
            elif (found := _matching(entry, prefix)) is not None:
                shown.append((entry, found))
        if shown:
            lines.append(session)
        for entry, objects in shown:
            if isinstance(entry, str):
                lines.append(f"  {entry.partition('.')[2]}  (detected, not open)")
                continue
            lines.append(f"  {entry.name.partition('.')[2]}")
            lines += _tree(objects, "    ")
    for source in queries:
        found = _matching(source, prefix)
        if found is not None:
            lines.append(f"{source.name}  ({source.query})")
            lines += _tree(found, "  ")
    if not lines:
        lines.append("nothing open matches" if prefix else "no open sources (open session.bus)")
    for line in lines:
        console.say(line)


def _matching(source: Source, prefix: str) -> list[tuple[str, Object]] | None:
    """The source's objects under ``prefix`` (by name); None when the prefix leaves it out."""
    found = [(o.name, o) for o in source.objects if source.path(o).startswith(prefix)]
    if prefix and not found and not source.name.startswith(prefix):
        return None
    return found


def _tree(items: list[tuple[str, Object]], indent: str) -> list[str]:
    """(label, object) pairs grouped by the dots in the labels, with class and kind."""
    groups: dict[str, list[tuple[str, Object]]] = {}
    leaves: list[tuple[str, Object]] = []
    for label, obj in items:
        group, dot, rest = label.partition(".")
        if dot:
            groups.setdefault(group, []).append((rest, obj))
        else:
            leaves.append((label, obj))
    lines = table([(label, o.META.qualified_name, kind_of(o)) for label, o in leaves], indent)
    for group, members in groups.items():
        lines.append(f"{indent}{group}")
        lines += _tree(members, indent + "  ")
    return lines


# -- objects and types -----------------------------------------------------------------------------


def _info(console: Console, text: str) -> Steps | None:
    if not text:
        raise CommandError("usage: info <object | type>")
    found = console.sources.find(text)
    if found is None:
        lines = _type_lines(text)
        if lines:
            for line in lines:
                console.say(line)
            return None
    return _object_info(console, text)


def _object_info(console: Console, text: str) -> Steps:
    while (obj := console.sources.find(text)) is None:
        yield Again(f"could not find object or type {text}{object_hint(console.sources, text)}")
    owner = yield from remote_owner(console, obj)
    for line in object_info(console.sources.path_of(obj), obj, console.virtual, owner):
        console.say(line)


def _type_lines(name: str) -> list[str]:
    scopes = registry.scopes()
    try:
        entry = registry.find_stl_class(name, scopes)
        if entry is not None:
            return class_info(entry.meta)
        meta = registry.find_type(name, scopes)
    except RegistryError as error:
        raise CommandError(str(error)) from None
    return type_info(meta) if meta is not None else []


# -- listening -------------------------------------------------------------------------------------


def _listen(console: Console, text: str) -> Steps:
    if not text:
        raise CommandError("usage: listen <object>[.<event>]")
    obj, event = yield from console.target(text)
    path = console.sources.path_of(obj)
    console.watches.listen(path, obj, event)
    console.say(f"listening to {path}{'.' + event if event else ''}")


def _watch(console: Console, text: str) -> Steps:
    if not text:
        raise CommandError("usage: watch <object>[.<property>]")
    obj, prop = yield from console.target(text)
    path = console.sources.path_of(obj)
    console.watches.watch(path, obj, prop)
    console.say(f"watching {path}{'.' + prop if prop else ''}")


def _stopper(kind: str) -> Callable[[Console, str], Steps]:
    """``unlisten`` / ``unwatch`` [<obj>[.<member>]]: without a target, everything."""
    doing = "listening to" if kind == "listen" else "watching"

    def stop(console: Console, text: str) -> Steps:
        taps = console.watches.events if kind == "listen" else console.watches.changes
        obj, member = (yield from console.target(text)) if text else (None, None)
        if console.watches.stop(taps, obj, member) == 0:
            raise CommandError(f"not {doing} {text or 'anything'}")
        console.say(f"stopped {doing} {text or 'all'}")

    return stop


# -- the session -----------------------------------------------------------------------------------


def _help(console: Console, text: str) -> None:
    rows = [(c.usage, c.summary) for c in COMMANDS.values()]
    rows += [
        ("<obj>.<property>", "the property's value, as the shell last saw it"),
        ("<obj>.print", "every property and the last commit time"),
        ("<obj>.<method> a, b", 'call; arguments as JSON values ("text", 1.5, {...}, null)'),
        ("<obj>.<property> = v", "set a writable property (also <obj>.setNext<Property> v)"),
    ]
    for line in table(rows, indent=""):
        console.say(line)
    console.say(
        "keys: Tab completes, Up/Down browse the history, Ctrl-C stops listen, watch, echo,"
        " hz and bw, Ctrl-D on an empty line shuts down"
    )


def _history(console: Console, text: str) -> None:
    for number, line in enumerate(console.history[:-1], start=1):
        console.say(f"{number:4d}  {line}")


def _clear(console: Console, text: str) -> None:
    console.printer.clear()


def _shutdown(console: Console, text: str) -> None:
    console.stop()


def _sleep(console: Console, text: str) -> Steps:
    try:
        span = Duration.parse(text)
    except TimeValueError as error:
        raise CommandError(f"sleep: {error}") from None
    yield Until(console.api.get_time().ns + span.ns)


COMMANDS: dict[str, Command] = {
    "help": Command("help", "commands and keys", _help),
    "ls": Command("ls [prefix]", "sources and their objects", _ls),
    "open": Command(
        "open <session> | open <session.bus>",
        "subscribe to every object of a bus, or of every bus of a session as it is detected",
        _open,
    ),
    "query": Command('query <name> "SELECT ..."', "a named subscription", _query),
    "close": Command("close <source>", "close a bus or a query", _close),
    "src": Command("src", "the open sources and their queries", _src),
    "info": Command("info <object | type>", "an object's state and members, or a type", _info),
    "ps": Command("ps", "the processes of the system: app, pid, host, objects, components", ps),
    "listen": Command("listen <obj>[.<event>]", "print each event", _listen),
    "unlisten": Command("unlisten [<obj>[.<event>]]", "stop listening", _stopper("listen")),
    "watch": Command(
        "watch <obj>[.<property>]",
        "print the value at each cycle of the shell when it changed (samples: see echo)",
        _watch,
    ),
    "unwatch": Command("unwatch [<obj>[.<property>]]", "stop watching", _stopper("watch")),
    "echo": Command(
        echo.ECHO_USAGE, "print every committed change with its commit time", echo.echo
    ),
    "unecho": Command("unecho [<obj>[.<property>]]", "stop echo", echo.stopper("echo")),
    "hz": Command(echo.HZ_USAGE, "the rate of committed changes, each second", echo.hz),
    "unhz": Command("unhz [<obj>[.<property>]]", "stop hz", echo.stopper("hz")),
    "bw": Command(echo.BW_USAGE, "the bytes per second of the changes, each second", echo.bw),
    "unbw": Command("unbw [<obj>[.<property>]]", "stop bw", echo.stopper("bw")),
    "step": Command("step [n]", "n steps of the master clock", clock.step),
    "advance": Command("advance <duration>", "advance the master clock", clock.advance),
    "time": Command("time", "the master clock's time", clock.show_time),
    "sleep": Command("sleep <duration>", "wait (in scripts)", _sleep),
    "history": Command("history", "the commands of this session", _history),
    "clear": Command("clear", "clear the screen", _clear),
    "shutdown": Command("shutdown", "stop the kernel", _shutdown),
    "exit": Command("exit", "stop the kernel", _shutdown),
}
