"""The command line's grammar: each subcommand is one module under hpcio/commands/ and one
entry in COMMANDS; argparse errors are one line (hpcio/cli.py runs what it parses)."""

from __future__ import annotations

import argparse
import importlib
import re
import sys
from collections.abc import Iterator, Sequence
from typing import Any, NoReturn

from hpcio.errors import USAGE_EXIT, SpecError
from hpcio.options import peer_help

#: Subcommand -> module with add_arguments(parser) and main(args, argv) -> exit code.
COMMANDS = {
    "run": "hpcio.commands.run",
    "sweep": "hpcio.commands.sweep",
    "report": "hpcio.commands.report",
    "suite": "hpcio.commands.suite",
    "cost": "hpcio.commands.cost",
    "clean": "hpcio.commands.clean",
    "compare": "hpcio.commands.compare",
    "profile": "hpcio.commands.profile",
    "env": "hpcio.commands.env",
    "checkpoint": "hpcio.commands.checkpoint",
    "train": "hpcio.commands.train",
    "template": "hpcio.commands.template",
    "trace": "hpcio.commands.trace",
    "darshan": "hpcio.commands.darshan",
    "replay": "hpcio.commands.replay",
    "tune": "hpcio.commands.tune",
    "completion": "hpcio.commands.completion",
    "man": "hpcio.commands.man",
}
#: Subcommand -> its line in `hpcio --help`, here rather than in its module: listing the
#: commands (`hpcio`, `hpcio --help`, an unknown command) imports none of them.
HELP = {
    "run": "run one pattern",
    "sweep": "run patterns x sizes, resumable",
    "report": "the studies' tables, plots and an HTML page from result documents",
    "suite": "run a suite (TOML grid of points), resumable",
    "cost": "cost of runs (requests, data kept) and what-if scenarios, from a price catalogue",
    "clean": "delete hpcio's own files or objects under a target, abort its unfinished uploads",
    "compare": "two result files side by side: ratio, and differences beyond the spread",
    "profile": (
        "fio-style storage profiles (streaming, latency, random I/O, small working set); iozone"
    ),
    "env": "check the machine: MPI, launcher, engine build, I/O libraries, and a target's storage",
    "checkpoint": (
        "MLPerf Storage's LLM checkpoint: each rank saves its shard 10 times, then loads it"
    ),
    "train": (
        "MLPerf Storage's unet3d, cosmoflow and resnet50 training emulations and DLIO's bert (AU "
        "per accelerator), their datagen"
    ),
    "template": "write a Slurm, PBS or Kubernetes job that runs an hpcio command on a cluster",
    "trace": "summarize a --trace: Darshan's counters per file and rank, plots",
    "darshan": "summarize a Darshan log (pydarshan): the same counters as hpcio trace summary",
    "replay": "replay an application's I/O (a Darshan log or an hpcio trace) on any target",
    "tune": "find the in-flight depth and transfer size that fill the path to a target",
    "completion": "print a shell completion script (bash, zsh)",
    "man": "print the man page, hpcio(1), in roff: hpcio man > ~/.local/share/man/man1/hpcio.1",
}


class _Parser(argparse.ArgumentParser):
    """argparse, but errors are one line and exit code 2."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        # A word like -1MiB is a value (a negative size, refused by its own check), not an
        # option: argparse alone takes only -1 and -1.5 as values and says "expected one
        # argument". hpcio has no option that starts with a digit.
        self._negative_number_matcher = re.compile(r"^-\d")

    def error(self, message: str) -> NoReturn:
        print(error_line(message), file=sys.stderr)
        raise SystemExit(USAGE_EXIT)


def error_line(message: object) -> str:
    """`hpcio: error: MESSAGE` on one line, whatever a server or the OS put in the message:
    job logs and scripts read stderr line by line."""
    return "hpcio: error: " + " ".join(str(message).split())


class _VersionAction(argparse.Action):
    """--version, looking the version up only when asked (importlib.metadata is slow to import)."""

    def __init__(self, option_strings: Sequence[str], dest: str, **kwargs: object) -> None:
        help_text = "show program's version number and exit"  # argparse's own words
        super().__init__(option_strings, dest, nargs=0, help=help_text)

    def __call__(self, parser: argparse.ArgumentParser, *_: object) -> NoReturn:
        import hpcio

        print(f"hpcio {hpcio.__version__}")  # on stdout, as argparse's own version action
        parser.exit()


class _CheckingParser(_Parser):
    """_Parser for a command line that is checked, not run (a job template's): its errors are
    raised, for the command that checks it to report."""

    def error(self, message: str) -> NoReturn:
        raise SpecError(message)


def build_parser(
    parser_class: type[_Parser] = _Parser, only: str | None = None, *, arguments: bool = True
) -> argparse.ArgumentParser:
    """The whole command line, or only subcommand `only`'s: a command that reads documents
    must not import the modules of those that run (and with them the native engine). Without
    `arguments`, the subcommands' names and help lines alone, their modules not imported: all
    a command line that names no subcommand needs (`hpcio`, `--help`, `--version`, a typo)."""
    parser = parser_class(prog="hpcio", description="HPC I/O patterns on POSIX and object storage.")
    parser.add_argument("--version", action=_VersionAction)
    commands = parser.add_subparsers(dest="command", required=True, parser_class=parser_class)
    for name, module_name in COMMANDS.items():
        if only is not None and name != only:
            continue
        command = commands.add_parser(name, help=HELP[name])
        if arguments:
            importlib.import_module(module_name).add_arguments(command)
            _name_peers(command)
    return parser


def _name_peers(parser: argparse.ArgumentParser) -> None:
    """Append to each option's help the IOR, fio or mdtest option it stands for (one table,
    options.PEER_OPTIONS), in this command and its subcommands."""
    for action in walk(parser):
        if action.option_strings:
            action.help = peer_help(action.option_strings, action.help)


def walk(parser: argparse.ArgumentParser) -> Iterator[argparse.Action]:
    """Every argument of `parser` and of its subcommands, depth first."""
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for sub in action.choices.values():
                yield from walk(sub)
        else:
            yield action


def parse_command(argv: Sequence[str]) -> argparse.Namespace:
    """`hpcio argv` parsed as `hpcio` would parse it, without running it.

    Raises:
        SpecError: argparse's message for a command line hpcio would refuse, or one that asks
            for help or the version instead of naming something to run.
    """
    if any(word in ("-h", "--help", "--version") for word in argv):
        raise SpecError("asks for help or the version, not for something to run")
    return build_parser(_CheckingParser).parse_args(list(argv))
