"""`hpcio report`: the studies' tables from result documents."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from hpcio.errors import SpecError

HELP = "the studies' tables from result documents"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("results", nargs="+", help="JSON Lines files written by -o")
    parser.add_argument("--format", choices=("md", "csv", "json"), default="md")


def main(args: argparse.Namespace, argv: Sequence[str]) -> int:
    from hpcio.report.tables import render, study_tables
    from hpcio.results import io as results_io

    docs = [doc for path in args.results for doc in results_io.read(path)]
    if not docs:
        raise SpecError(f"no result documents in {', '.join(args.results)}")
    sys.stdout.write(render(study_tables(docs), args.format))
    return 0
