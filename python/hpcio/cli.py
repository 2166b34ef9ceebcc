"""The hpcio command: parse (commands/parser.py), run the subcommand, print its error on one
line; nothing else."""

from __future__ import annotations

import importlib
import os
import sys
from collections.abc import Sequence

from hpcio.commands.parser import COMMANDS, build_parser, error_line, parse_command
from hpcio.errors import HpcioError
from hpcio.live.terminal import streams_noted

__all__ = ["COMMANDS", "build_parser", "error_line", "main", "parse_command"]


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    chosen = argv[0] if argv and argv[0] in COMMANDS else None
    # A command line that names no subcommand anywhere ends in help, the version or a usage
    # error, whose words need no subcommand's module.
    named = chosen is not None or any(word in COMMANDS for word in argv)
    args = build_parser(only=chosen, arguments=named).parse_args(argv)
    try:
        with streams_noted(quiet=bool(getattr(args, "quiet", False))):
            return importlib.import_module(COMMANDS[args.command]).main(args, argv)
    except HpcioError as e:
        if _is_rank0():
            print(error_line(e), file=sys.stderr)
        from hpcio.runner import exit_status

        return exit_status.of_rank(e.exit_code, e.every_rank)
    except BrokenPipeError:
        from hpcio.live.console import silence_stdout

        silence_stdout()  # `hpcio report ... | head` is not an error
        return 0
    except KeyboardInterrupt as e:
        # SIGINT, or SIGTERM made alike (runner.interrupts): 128 + the signal's number.
        code = getattr(e, "exit_code", 130)
        if _is_rank0():
            print(f"hpcio: interrupted ({getattr(e, 'signal_name', 'SIGINT')})", file=sys.stderr)
        return code


def _is_rank0() -> bool:
    for name in ("OMPI_COMM_WORLD_RANK", "PMI_RANK", "PMIX_RANK"):
        if name in os.environ:
            return os.environ[name] == "0"
    return True
