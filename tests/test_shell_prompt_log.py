"""Log lines written while the interactive prompt waits are printed above it, and the prompt is
drawn again below them with what was typed (a real pseudo-terminal, as in test_shell_cli.py)."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pexpect  # type: ignore[import-untyped]

CHATTY = """\
import logging

from sengen.runtime import Component


class Chatty(Component):
    '''Logs a warning every 100 ms until it is stopped.'''

    def run(self, api):
        count = 0
        while not api.wait_for_stop(0.1):
            count += 1
            logging.getLogger("chatty").warning("line %d", count)
"""

# Whatever prompt_toolkit puts between the prompt and the text typed: colours, erasing.
ESCAPES = r"(?:\x1b\[[0-9;?]*[A-Za-z])*"


def test_a_log_line_goes_above_the_prompt_and_the_typed_text_stays(tmp_path: Path) -> None:
    (tmp_path / "chatty.py").write_text(CHATTY)
    history = tmp_path / "history"
    (tmp_path / "chatty.yaml").write_text(
        "kernel: {logConfig: {level: warning}}\n"
        "load:\n"
        "  - {name: chatty, component: 'chatty:Chatty'}\n"
        f"  - {{name: shell, historyFile: '{history}'}}\n"
    )
    env = {**os.environ, "PROMPT_TOOLKIT_NO_CPR": "1", "TERM": "xterm"}
    child = pexpect.spawn(
        sys.executable,
        ["-m", "sengen", "shell", "chatty.yaml"],
        cwd=str(tmp_path),
        env=env,
        encoding="utf-8",
        timeout=10,
        dimensions=(40, 160),
    )
    try:
        child.expect_exact("sen> ")
        child.send("ls")
        child.expect(r"WARNING chatty: line (\d+)\r\n")
        first = int(child.match.group(1))
        # Drawn again below the line, with the text being typed; not yet submitted.
        child.expect("sen> " + ESCAPES + "ls")
        child.expect(r"WARNING chatty: line (\d+)\r\n")
        assert int(child.match.group(1)) > first
        child.expect("sen> " + ESCAPES + "ls")
        child.send("\x15shutdown\r")  # Ctrl-U clears the line first
        child.expect(pexpect.EOF)
    finally:
        child.close(force=True)
    assert child.exitstatus == 0
