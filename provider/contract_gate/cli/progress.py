"""A progress line on stderr while a command waits for Spark or Airflow, on a terminal only.

Piped or redirected, the command writes nothing extra. With ``--verbose`` the logs show the
progress instead, and a spinner redrawn between log lines would only garble them. Without it,
the engines' own output goes to the command's log file (``contract_gate.cli.quiet``), so nothing
breaks the line.
"""

from __future__ import annotations

import sys
from contextlib import ExitStack, contextmanager
from pathlib import Path
from typing import Iterator, TextIO

from rich.console import Console
from rich.progress import Progress, SpinnerColumn, TaskID, TextColumn, TimeElapsedColumn

from contract_gate.cli.quiet import engine_output_to


class Shown:
    """The progress line: ``contract-gate: <step> <spinner> <elapsed>``, erased when closed."""

    def __init__(self, line: Progress, task: TaskID) -> None:
        self._line = line
        self._task = task

    def step(self, step: str) -> None:
        """Name the step the command has reached."""
        self._line.update(self._task, description=f"contract-gate: {step}")


class _Silent:
    """What a command holds when no progress line is drawn."""

    def step(self, step: str) -> None:
        pass


@contextmanager
def progress(step: str, verbose: bool = False, stream: TextIO | None = None,
             log: Path | None = None) -> Iterator[Shown | _Silent]:
    """A progress line on ``stream`` (default: the terminal's stderr) while the block runs, when
    it is a terminal and the command is not verbose. Without ``--verbose``, what the engines
    write to descriptor 2 in the block goes to ``log`` (when given)."""
    with ExitStack() as stack:
        terminal = stack.enter_context(engine_output_to(log)) if log is not None and not verbose else None
        stream = stream or terminal or sys.stderr
        if verbose or not stream.isatty():
            yield _Silent()
            return
        line = Progress(SpinnerColumn("line"), TextColumn("{task.description}"), TimeElapsedColumn(),
                        console=Console(file=stream, stderr=True), transient=True,
                        redirect_stdout=False, redirect_stderr=False)
        stack.enter_context(line)
        yield Shown(line, line.add_task(f"contract-gate: {step}", total=None))
