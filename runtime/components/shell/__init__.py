"""The shipped ``shell`` component and ``sengen shell`` (runtime.md §9.1)."""

from sengen.runtime.components.shell.component import Shell, ShellConfig

__all__ = ["Shell", "ShellConfig"]
