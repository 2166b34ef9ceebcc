"""`hpcio compare A B`: the same points of two result files side by side, their ratio, and the
differences larger than the run-to-run spread."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from hpcio.commands.report import (
    add_output_arguments,
    check_outputs,
    read_documents,
    say,
    write_page,
    write_plots,
)
from hpcio.errors import SpecError


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("a", metavar="A", help="JSON Lines results: the baseline")
    parser.add_argument("b", metavar="B", help="JSON Lines results: compared with A (ratio B/A)")
    parser.add_argument(
        "--metric",
        choices=("bandwidth", "latency", "au", "ops", "read-bandwidth", "write-bandwidth"),
        default="bandwidth",
        help="bandwidth (MiB/s, default), latency (mean phase time, s), au (training "
        "runs' accelerator utilization, %%), ops (mdtest runs' rate of each of its phases, "
        "ops/s), or read-bandwidth and write-bandwidth (a mixed phase's sides, --rwmix-read)",
    )
    parser.add_argument(
        "--ignore",
        metavar="FIELDS",
        help="comma-separated spec fields not to match on, e.g. target to compare two file systems",
    )
    parser.add_argument("--format", choices=("md", "csv", "json"), default="md")
    add_output_arguments(parser)


def main(args: argparse.Namespace, argv: Sequence[str]) -> int:
    from hpcio.report.compare import compare, render

    if args.metric.endswith("-bandwidth") and (args.plots or args.html):
        raise SpecError(
            f"--metric {args.metric} has no plots: compare its figures as text (drop --plots "
            "and --html), or plot bandwidth"
        )
    plots_dir, html_path = check_outputs(args)
    a_docs, b_docs = read_documents([args.a]), read_documents([args.b])
    ignore = [name.strip() for name in (args.ignore or "").split(",") if name.strip()]
    comparison = compare(
        a_docs, b_docs, metric=args.metric, a_name=args.a, b_name=args.b, ignore=ignore
    )
    if plots_dir is None and html_path is None:
        sys.stdout.write(render(comparison, args.format))
        return 0

    from hpcio.report.plots import comparison_plots

    figures = comparison_plots({"A": a_docs, "B": b_docs}, args.metric, ignore)
    written = []
    if plots_dir is not None:
        written += write_plots(figures, plots_dir)
    if html_path is not None:
        from hpcio.report.html import comparison_page

        written += write_page(html_path, comparison_page(comparison, figures, a_docs, b_docs))
    say(written)
    return 0
