"""`hpcio sweep`: the options of run, with a list of patterns and a doubling range of sizes;
appends to -o and skips the points already there, so an interrupted sweep resumes."""

from __future__ import annotations

import argparse
from collections.abc import Sequence

from hpcio.commands import run


def add_arguments(parser: argparse.ArgumentParser) -> None:
    run.add_run_arguments(parser, sweep=True)
    parser.add_argument(
        "--display",
        choices=("auto", "bar", "lines"),
        default="auto",
        help="progress: a bar on a terminal, one line per point otherwise (auto), as suite run",
    )


def main(args: argparse.Namespace, argv: Sequence[str]) -> int:
    return run.main(args, argv)
