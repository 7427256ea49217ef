"""The ``sengen`` command line. A thin layer over the library API; exit codes are shared:
0 ok, 1 bad input, 2 usage, 3 a component failed at run time, 4 internal error.

Each command imports what it needs when it runs: ``sengen run``, ``shell`` and ``launch`` (one
process each) must not pay for the STL front end and the generator (lark, black, jinja2)."""

from __future__ import annotations

import argparse
import contextlib
import logging
import os
import signal
import sys
import time
import traceback
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from sengen.cli.config_file import configuration_note, not_a_configuration
from sengen.cli.record import add_record_parser
from sengen.cli.replay import add_replay_parser
from sengen.cli.security import add_security_commands
from sengen.cli.web import add_web_parser, web_kernel
from sengen.diagnostics import Diagnostic, has_errors, render_json, render_text
from sengen.errors import InputError, UsageError
from sengen.version import __version__

if TYPE_CHECKING:
    from sengen.runtime.kernel.config import Config, LogConfig
    from sengen.runtime.kernel.kernel import Kernel, PreloadError

EXIT_OK = 0
EXIT_BAD_INPUT = 1
EXIT_USAGE = 2
EXIT_RUN_FAILED = 3
EXIT_INTERNAL = 4


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="sengen", description="The Sen object middleware.")
    parser.add_argument("--version", action="version", version=f"sengen {__version__}")
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    check = commands.add_parser("check", help="check STL files and report diagnostics")
    check.add_argument("paths", nargs="*", metavar="PATH", help="STL files or folders")
    _include_option(check)
    check.add_argument("--settings", metavar="FILE", help="a codegen settings file (JSON)")
    check.add_argument("--format", choices=("text", "json"), default="text")
    _quiet_option(check)
    check.set_defaults(handler=_check)

    build = commands.add_parser("build", help="generate Python from STL")
    build.add_argument("paths", nargs="*", metavar="PATH", help="STL files or folders")
    build.add_argument("--out", metavar="DIR", help="the generated root package (with PATH)")
    _include_option(build)
    build.add_argument("--settings", metavar="FILE", help="a codegen settings file (JSON)")
    build.add_argument(
        "--check", action="store_true", help="write nothing; exit 1 if the output would change"
    )
    build.add_argument("--project", metavar="DIR", help="the project folder (default: .)")
    build.add_argument(
        "--no-format", action="store_true", help="no effect (the output needs no formatter)"
    )
    build.add_argument("--warnings-as-errors", action="store_true")
    _quiet_option(build)
    build.set_defaults(handler=_build)

    docs = commands.add_parser("docs", help="write the Markdown reference of STL packages")
    docs.add_argument("paths", nargs="*", metavar="PATH", help="STL files or folders")
    docs.add_argument(
        "--out", metavar="FILE", help="the file to write (default: the project's docs, or stdout)"
    )
    _include_option(docs)
    docs.add_argument("--settings", metavar="FILE", help="a codegen settings file (JSON)")
    docs.add_argument("--project", metavar="DIR", help="the project folder (default: .)")
    docs.set_defaults(handler=_docs)

    schema = commands.add_parser(
        "schema", help="print the JSON Schema of configuration files (for editors)"
    )
    schema.add_argument("paths", nargs="*", metavar="PATH", help="STL files or folders")
    schema.add_argument("--out", metavar="FILE", help="write to FILE instead of stdout")
    _include_option(schema)
    schema.add_argument("--settings", metavar="FILE", help="a codegen settings file (JSON)")
    schema.add_argument("--project", metavar="DIR", help="the project folder (default: .)")
    schema.set_defaults(handler=_schema)
    init = commands.add_parser("init", help="create a new project that builds, runs and tests")
    init.add_argument("name", metavar="NAME", help="the project's folder; its name is the package")
    init.add_argument("--class", dest="cls", metavar="CLASS", help="the STL class to start with")
    init.set_defaults(handler=_init)
    run = commands.add_parser("run", help="run the system a configuration file describes")
    run.add_argument("config", metavar="CONFIG", help="the YAML configuration file")
    run.add_argument("--until", metavar="DURATION", help="stop after this long, e.g. 10s")
    run.add_argument(
        "--check", action="store_true", help="validate and preload, then exit without running"
    )
    run.add_argument(
        "--print-config", action="store_true", help="print the merged configuration and exit"
    )
    run.add_argument(
        "--start-stop", action="store_true", help="force runMode startAndStop (a smoke test)"
    )
    _quiet_option(run)
    run.set_defaults(handler=_run)
    launch = commands.add_parser("launch", help="start the processes a launch file names")
    launch.add_argument("file", metavar="FILE", help="the YAML launch file")
    launch.set_defaults(handler=_launch)
    shell = commands.add_parser("shell", help="a console on a system: interactive or scripted")
    shell.add_argument("configs", nargs="*", metavar="CONFIG", help="YAML configurations to run")
    shell.add_argument(
        "-c", dest="commands", metavar="COMMANDS", help="run these commands (';' or newlines)"
    )
    shell.add_argument(
        "--wait", metavar="DURATION", help="how long a command waits for objects and results (5s)"
    )
    shell.add_argument(
        "--connect", metavar="ENDPOINT", help="join the running system at this rendezvous"
    )
    shell.add_argument(
        "--attach",
        metavar="CONFIG",
        help="join the running system of CONFIG (only its transport settings are read)",
    )
    shell.add_argument("--session", metavar="NAME", help="open every bus of this session")
    shell.set_defaults(handler=_shell)
    add_web_parser(commands).set_defaults(handler=_web)
    add_record_parser(commands)
    add_replay_parser(commands).set_defaults(handler=_replay)
    add_security_commands(commands)

    for sub in commands.choices.values():
        sub.add_argument("--debug", action="store_true", help="show tracebacks of internal errors")
    return parser


def _include_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "-I",
        dest="include_paths",
        action="append",
        default=[],
        metavar="DIR",
        help="an include path (searched in the order given)",
    )


def _quiet_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "-q", "--quiet", action="store_true", help="no summary line when all went well"
    )


def _emit(diagnostics: Sequence[Diagnostic], output_format: str) -> None:
    if output_format == "json":
        sys.stdout.write(render_json(diagnostics))
    else:
        sys.stderr.write(render_text(diagnostics))


def _check(args: argparse.Namespace) -> int:
    from sengen.api import check_program
    from sengen.cli.summary import check_summary

    mangling = True
    if args.paths:
        sources: list[Path] = [Path(p) for p in args.paths]
        includes = [Path(p) for p in args.include_paths]
        settings = Path(args.settings) if args.settings else None
    else:
        from sengen.stl.project import load_project  # pydantic: only for projects

        project = load_project(Path.cwd())
        sources = project.sources
        includes = [*project.include_paths, *(Path(p) for p in args.include_paths)]
        settings = Path(args.settings) if args.settings else project.settings
        mangling = project.config.mangling_warnings
    program, diagnostics = check_program(
        sources, include_paths=includes, settings=settings, mangling=mangling
    )
    _emit(diagnostics, args.format)
    if has_errors(diagnostics):
        return EXIT_BAD_INPUT
    if program is not None and not args.quiet and args.format == "text":
        # With --format json stdout is for a program: the JSON alone.
        sys.stdout.write(check_summary(program, diagnostics))
    return EXIT_OK


def _build(args: argparse.Namespace) -> int:
    from sengen.cli.summary import build_summary
    from sengen.codegen.builder import build, generate

    if args.paths:
        if not args.out:
            raise UsageError("sengen build with PATH needs --out DIR")
        includes = args.include_paths or ["."]
        result = generate(
            [Path(p) for p in args.paths],
            output=Path(args.out),
            include_paths=[Path(p) for p in includes],
            settings=Path(args.settings) if args.settings else None,
            format=not args.no_format,
            check=args.check,
            warnings_as_errors=args.warnings_as_errors,
        )
    else:
        if args.out:
            raise UsageError("--out is only for builds from PATH; a project sets 'output'")
        result = build(
            Path(args.project or "."),
            check=args.check,
            format=not args.no_format,
            include_paths=[Path(p) for p in args.include_paths],
            settings=Path(args.settings) if args.settings else None,
            warnings_as_errors=args.warnings_as_errors,
        )
    _emit(result.diagnostics, "text")
    if not result.ok:
        return EXIT_BAD_INPUT
    if args.check and (result.written or result.removed):
        for path in [*result.written, *result.removed]:
            sys.stderr.write(f"sengen: out of date: {path}\n")
        return EXIT_BAD_INPUT
    if not args.quiet:
        sys.stdout.write(build_summary(result, args.check))
    return EXIT_OK


def _docs(args: argparse.Namespace) -> int:
    from sengen.codegen.builder import write_artifact
    from sengen.codegen.docs import render_docs  # jinja2 templates: only for this command

    out = Path(args.out) if args.out else None
    if args.paths:
        sources = [Path(p) for p in args.paths]
        includes = [Path(p) for p in args.include_paths or ["."]]
        settings = Path(args.settings) if args.settings else None
    else:
        from sengen.stl.project import load_project  # pydantic: only for projects

        project = load_project(Path(args.project or "."))
        sources, settings = project.sources, project.settings
        includes = [*project.include_paths, *(Path(p) for p in args.include_paths)]
        if args.settings:
            settings = Path(args.settings)
        if out is None and project.config.docs:
            out = project.path(project.config.docs)
    # With no file named, neither by --out nor by the project, the reference goes to stdout as
    # `sengen schema`'s does.
    text, diagnostics = write_artifact(
        sources, out, render_docs, include_paths=includes, settings=settings
    )
    _emit(diagnostics, "text")
    if has_errors(diagnostics) or text is None:
        return EXIT_BAD_INPUT
    if out is None:
        sys.stdout.write(text.decode())
    return EXIT_OK


def _schema(args: argparse.Namespace) -> int:
    from sengen.codegen.builder import write_artifact
    from sengen.codegen.schema import render_schema  # pydantic models: only for this command

    out = Path(args.out) if args.out else None
    if args.paths:
        sources = [Path(p) for p in args.paths]
        includes = [Path(p) for p in args.include_paths or ["."]]
        settings = Path(args.settings) if args.settings else None
        classes: dict[str, str] = {}
    else:
        from sengen.stl.project import load_project  # pydantic: only for projects

        project = load_project(Path(args.project or "."))
        sources, settings = project.sources, project.settings
        includes = [*project.include_paths, *(Path(p) for p in args.include_paths)]
        classes = project.config.schema_classes
        if args.settings:
            settings = Path(args.settings)
    text, diagnostics = write_artifact(
        sources,
        out,
        lambda program: render_schema(program, classes),
        include_paths=includes,
        settings=settings,
    )
    _emit(diagnostics, "text")
    if has_errors(diagnostics) or text is None:
        return EXIT_BAD_INPUT
    if out is None:
        sys.stdout.write(text.decode())
    return EXIT_OK


def _init(args: argparse.Namespace) -> int:
    from sengen.cli.scaffold import InitError, init  # jinja2 templates: only for this command

    folder = Path(args.name)
    try:
        project, written = init(folder, args.cls)
    except InitError as error:
        sys.stderr.write(f"sengen: error: {error}\n")
        return EXIT_BAD_INPUT
    sys.stdout.write(f"created {project.package}.{project.cls} in {folder}/:\n")
    sys.stdout.writelines(f"  {path}\n" for path in written)
    sys.stdout.write(f"next:\n  cd {folder}\n  sengen build\n  sengen run config.yaml\n  pytest\n")
    return EXIT_OK


def _run(args: argparse.Namespace) -> int:
    from sengen.cli.summary import run_check_summary
    from sengen.runtime import Duration, TimeValueError
    from sengen.runtime.kernel.config import ConfigurationError, load_config
    from sengen.runtime.kernel.kernel import BuildComponent, Kernel, PreloadError

    until = None
    if args.until is not None:
        try:
            until = Duration.parse(args.until)
        except TimeValueError as error:
            raise UsageError(f"--until: {error}") from None
    path = Path(args.config)
    refused = not_a_configuration(path)
    if refused is not None:
        sys.stderr.write(refused)
        return EXIT_BAD_INPUT
    try:
        config = load_config(path)
    except ConfigurationError as error:
        sys.stderr.write("".join(f"{line}\n" for line in error.problems))
        sys.stderr.write(configuration_note(path))
        return EXIT_BAD_INPUT
    _notes(config)
    if args.start_stop:
        config.kernel.run_mode = "startAndStop"
    if args.print_config:
        sys.stdout.write(config.to_yaml())
        return EXIT_OK
    from sengen.stl.project import config_import_path  # pydantic: not for every command

    config_import_path(path)
    try:
        kernel = Kernel(config)
    except PreloadError as error:
        _preload_problems(error)
        return EXIT_BAD_INPUT
    if args.check:
        if not args.quiet:
            objects = sum(
                len(r.component.objects)
                for r in kernel.components
                if isinstance(r.component, BuildComponent)
            )
            sys.stdout.write(run_check_summary(str(path), len(kernel.components), objects))
        return EXIT_OK
    if not _configure_logging(config.kernel.log_config):
        return EXIT_BAD_INPUT
    ready = os.environ.get("SENGEN_LAUNCH_READY")
    if ready:  # started by `sengen launch`, which waits for this kernel to be up
        from sengen.cli.launch import report_ready

        report_ready(ready)
    progress = _Progress(until.ns) if until is not None and sys.stderr.isatty() else None
    with _signals(kernel):
        code = kernel.run(until, progress if kernel.clock is not None else None)
    if progress is not None:
        progress.end()
    return code


def _launch(args: argparse.Namespace) -> int:
    from sengen.cli.launch import launch

    return launch(args.file)


def _shell(args: argparse.Namespace) -> int:
    from sengen.cli.attach import NoAnswer, joining
    from sengen.runtime import Duration, TimeValueError
    from sengen.runtime.components.shell.component import DEFAULT_WAIT
    from sengen.runtime.components.shell.launch import shell_config, shell_of
    from sengen.runtime.kernel.config import ConfigurationError
    from sengen.runtime.kernel.kernel import Kernel, PreloadError

    wait = DEFAULT_WAIT
    if args.wait is not None:
        try:
            wait = Duration.parse(args.wait)
        except TimeValueError as error:
            raise UsageError(f"--wait: {error}") from None
    paths = [Path(p) for p in args.configs]
    try:
        transport, join = joining(args)
        config = shell_config(paths, transport)
    except ConfigurationError as error:
        sys.stderr.write("".join(f"{line}\n" for line in error.problems))
        return EXIT_BAD_INPUT
    except NoAnswer as error:
        sys.stderr.write(f"sengen: error: {error}\n")
        return EXIT_BAD_INPUT
    _notes(config)
    from sengen.stl.project import config_import_path  # pydantic: not for every command

    for path in paths:
        config_import_path(path)
    try:
        kernel = Kernel(config)
    except PreloadError as error:
        _preload_problems(error)
        return EXIT_BAD_INPUT
    shell = shell_of(kernel)
    if shell is None:
        sys.stderr.write("sengen: error: component 'shell' is not sengen's shell\n")
        return EXIT_BAD_INPUT
    shell.join = join
    if args.commands is not None:
        shell.use_script(args.commands, wait)
    else:
        shell.wait = wait
    if not _configure_logging(config.kernel.log_config):
        return EXIT_BAD_INPUT
    with _signals(kernel):
        return kernel.run()


def _web(args: argparse.Namespace) -> int:
    kernel = web_kernel(args)
    if isinstance(kernel, int):
        return kernel
    if not _configure_logging(kernel.config.kernel.log_config):
        return EXIT_BAD_INPUT
    with _signals(kernel):
        return kernel.run()


def _notes(config: Config) -> None:
    """The configuration's warnings, then its INFO notes (Sen keys accepted and ignored, an
    ignored ``clockMaster``) unless ``logConfig.level`` hides INFO (runtime.md §1.10)."""
    for line in config.warnings:
        sys.stderr.write(f"{line}\n")
    if _LEVELS[config.kernel.log_config.level] <= logging.INFO:
        for line in config.infos:
            sys.stderr.write(f"{line}\n")


def _preload_problems(error: PreloadError) -> None:
    """One line per problem; below the line of a user module that failed to import, its
    traceback, which names the file and line to fix."""
    for line in error.problems:
        sys.stderr.write(f"{line}\n")
        sys.stderr.write(error.tracebacks.get(line, ""))


class _Progress:
    """A one-line progress bar on the terminal for long virtual-time runs."""

    def __init__(self, target: int) -> None:
        self.target = target
        self.shown = 0.0
        self.drawn = False

    def __call__(self, now: int) -> None:
        moment = time.monotonic()
        if moment - self.shown < 0.2:
            return
        self.shown = moment
        share = min(now / self.target, 1.0) if self.target else 1.0
        bar = "#" * int(share * 30)
        sys.stderr.write(f"\rvirtual time [{bar:<30}] {now / 1e9:.3f} s of {self.target / 1e9:g} s")
        sys.stderr.flush()
        self.drawn = True

    def end(self) -> None:
        if self.drawn:
            sys.stderr.write("\n")


_LEVELS = {
    "trace": 5,
    "debug": logging.DEBUG,
    "info": logging.INFO,
    "warn": logging.WARNING,
    "err": logging.ERROR,
    "critical": logging.CRITICAL,
    "off": logging.CRITICAL + 10,
}
_LOG_FORMAT = "%(levelname)s %(name)s: %(message)s"


def _configure_logging(log_config: LogConfig) -> bool:
    """The handlers of ``kernel.logConfig`` (runtime.md §10.4): stderr, and a file if given;
    False, with one line said, when the log file cannot be opened (the configuration checked
    it, but the file system may have changed since)."""
    root = logging.getLogger()
    levels = [log_config.level] + ([log_config.file.level] if log_config.file else [])
    root.setLevel(min(_LEVELS[level or "info"] for level in levels))
    console = logging.StreamHandler()
    console.setLevel(_LEVELS[log_config.level])
    console.setFormatter(logging.Formatter(_LOG_FORMAT))
    root.addHandler(console)
    if log_config.file is not None:
        mode = "w" if log_config.file.truncate else "a"
        try:
            Path(log_config.file.path).parent.mkdir(parents=True, exist_ok=True)
            file = logging.FileHandler(log_config.file.path, mode=mode, encoding="utf-8")
        except OSError as error:
            reason = error.strerror or str(error)
            sys.stderr.write(
                f"sengen: error: cannot open log file '{log_config.file.path}': {reason}\n"
            )
            return False
        file.setLevel(_LEVELS[log_config.file.level or log_config.level])
        file.setFormatter(logging.Formatter("%(asctime)s " + _LOG_FORMAT))
        root.addHandler(file)
    return True


@contextlib.contextmanager
def _signals(kernel: Kernel) -> Iterator[None]:
    """SIGINT and SIGTERM request an orderly shutdown (exit 130 / 143); a second one during the
    shutdown exits at once, after naming the components still stopping (runtime.md §10.3)."""
    codes = {signal.SIGINT: 130, signal.SIGTERM: 143}
    received: list[int] = []

    def handle(number: int, _frame: object) -> None:
        received.append(number)
        if len(received) > 1:
            still = ", ".join(r.name for r in kernel.runners if r.thread and r.thread.is_alive())
            sys.stderr.write(f"sengen: interrupted again; still stopping: {still or 'none'}\n")
            sys.stderr.flush()
            os._exit(codes.get(signal.Signals(number), 130))
        kernel.request_stop(codes.get(signal.Signals(number), 130))

    previous = {number: signal.signal(number, handle) for number in codes}
    try:
        yield
    finally:
        for number, handler in previous.items():
            signal.signal(number, handler)


def _replay(args: argparse.Namespace) -> int:
    from sengen.cli.replay import replay
    from sengen.runtime import Duration

    def run(kernel: Kernel, until: Duration | None) -> int:
        if not _configure_logging(kernel.config.kernel.log_config):
            return EXIT_BAD_INPUT
        with _signals(kernel):
            return kernel.run(until)

    return replay(args, run, _preload_problems)


def main(argv: Sequence[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    handler: Callable[[argparse.Namespace], int] = args.handler
    try:
        return handler(args)
    except InputError as exc:
        _emit(exc.diagnostics, getattr(args, "format", "text"))
        return EXIT_BAD_INPUT
    except UsageError as exc:
        sys.stderr.write(f"sengen: error: {exc}\n")
        return EXIT_USAGE
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:
        # The reader went away (`sengen record show FILE | head`): nothing more to say, and
        # Python's own flush at exit must not fail on the closed pipe either.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0
    except Exception as exc:
        if args.debug:
            traceback.print_exc()
        sys.stderr.write(
            f"internal error in sengen {__version__}: {type(exc).__name__}: {exc}\n"
            "This is a bug in sengen; please report it with the input that caused it"
            " (rerun with --debug for the traceback).\n"
        )
        return EXIT_INTERNAL
