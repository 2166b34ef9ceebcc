"""`hpcio trace summary`: Darshan-style counters of an hpcio trace (a rank's file or a run's
directory), as a table or JSON, with --plots its heat map and offset scatters."""

from __future__ import annotations

import argparse
import os
from collections.abc import Sequence
from pathlib import Path

from hpcio.errors import SpecError


def add_arguments(parser: argparse.ArgumentParser) -> None:
    actions = parser.add_subparsers(dest="action", required=True)
    summary = actions.add_parser("summary", help="Darshan-style counters per file and rank")
    summary.add_argument(
        "path", metavar="FILE|DIR", help="a rank's trace file or a run's directory"
    )
    add_summary_arguments(summary)


def add_summary_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--json", action="store_true", help="print the counters as JSON")
    parser.add_argument(
        "--plots", metavar="DIR", help="draw heatmap.png and offsets-FILE.png into DIR"
    )


def main(args: argparse.Namespace, argv: Sequence[str]) -> int:
    from hpcio.trace import operations, summary

    if args.action != "summary":
        raise SpecError(f"unknown action {args.action}")
    ops = operations.load(args.path)
    module = summary.module_for(operations.kind_of(args.path))
    show(summary.from_operations(ops, module), f"hpcio trace {args.path}", args, ops)
    return 0


def show(rows: list, title: str, args: argparse.Namespace, ops=None) -> None:
    """Print rows as --json or a table; draw --plots from ops (where there are any)."""
    from hpcio.trace import summary

    if args.plots:
        from hpcio.report.plots import require_matplotlib

        require_matplotlib("--plots")
        plots_directory(args.plots)
    if args.json:
        print(summary.to_json(rows))
    else:
        summary.render(rows, title)
    if args.plots:
        if ops is None:
            print(f"no plots: {title} has no per-operation segments (DXT)")
            return
        from hpcio.trace import plots

        for path in plots.draw(ops, args.plots):
            if not args.json:
                print(f"wrote {path}")


def plots_directory(path: str) -> Path:
    """The --plots directory, made if missing, before anything is printed.

    Raises:
        SpecError: `path` is a file, or cannot be made (a read-only or virtual file system).
    """
    directory = Path(path)
    if directory.exists() and not directory.is_dir():
        raise SpecError(f"--plots {path} is a file: give a directory for the plots")
    try:
        directory.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        raise SpecError(f"--plots {path}: cannot make the directory: {e.strerror or e}") from None
    if not os.access(directory, os.W_OK | os.X_OK):
        raise SpecError(f"--plots {path}: the directory is not writable by this user")
    return directory
