"""Whether hpcio talks to a terminal: decided once, by the process the user started.

Ranks that hpcio starts under mpiexec write to pipes (mpiexec forwards them to the terminal),
so they cannot ask isatty() themselves: the first hpcio process notes what its streams are in
the environment, which every rank inherits (runner/mpiexec.py hands on HPCIO_*).
"""

from __future__ import annotations

import contextlib
import os
import shutil
import sys
from collections.abc import Iterator, Mapping, MutableMapping
from typing import TextIO

#: "1" when a live status line may be drawn (stderr is a terminal and -q was not given).
STATUS_VARIABLE = "HPCIO_STATUS_LINE"
#: The terminal's width when stdout is one (a progress bar may be drawn), else "0".
STDOUT_VARIABLE = "HPCIO_STDOUT_COLUMNS"


def on_terminal(stream: object) -> bool:
    try:
        return bool(stream.isatty())  # type: ignore[attr-defined]
    except (AttributeError, ValueError, OSError):
        return False


def note_streams(
    quiet: bool,
    environ: MutableMapping[str, str] | None = None,
    stdout: TextIO | None = None,
    stderr: TextIO | None = None,
) -> None:
    """Say for this process and the ranks it starts what its streams are. A status line only
    on a terminal, so never on a pipe nor in a batch job's log (a SLURM job's output is a
    file), and never with -q. What a launcher decided stands, except that -q always turns the
    status line off."""
    environ = os.environ if environ is None else environ
    out = stdout or sys.stdout
    columns = shutil.get_terminal_size().columns if on_terminal(out) else 0
    environ.setdefault(STDOUT_VARIABLE, str(columns))
    if quiet:
        environ[STATUS_VARIABLE] = "0"
        return
    environ.setdefault(STATUS_VARIABLE, "1" if on_terminal(stderr or sys.stderr) else "0")


@contextlib.contextmanager
def streams_noted(quiet: bool) -> Iterator[None]:
    """note_streams for the length of one command, then the environment as it was (a command
    run inside another process, as the tests do, leaves nothing behind)."""
    saved = {name: os.environ.get(name) for name in (STATUS_VARIABLE, STDOUT_VARIABLE)}
    note_streams(quiet)
    try:
        yield
    finally:
        for name, value in saved.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value


def status_line_wanted(environ: Mapping[str, str]) -> bool:
    return environ.get(STATUS_VARIABLE) == "1"


def stdout_columns(environ: Mapping[str, str]) -> int | None:
    """The width of the terminal stdout goes to; None when it goes elsewhere."""
    try:
        columns = int(environ.get(STDOUT_VARIABLE, "0"))
    except ValueError:
        return None
    return columns or None
