"""`hpcio darshan summary LOG`: a real Darshan log read through pydarshan, printed as an hpcio
trace summary is: the POSIX, MPI-IO and STDIO records' own counters, and the counters of its
DXT segments where the log has them."""

from __future__ import annotations

import argparse
from collections.abc import Sequence

from hpcio.commands.trace import add_summary_arguments, show


def add_arguments(parser: argparse.ArgumentParser) -> None:
    actions = parser.add_subparsers(dest="action", required=True)
    summary = actions.add_parser("summary", help="the log's counters, and its DXT segments'")
    summary.add_argument("log", metavar="LOG", help="a .darshan log")
    add_summary_arguments(summary)


def main(args: argparse.Namespace, argv: Sequence[str]) -> int:
    from hpcio.trace import darshanlog, operations, summary

    report = darshanlog.open_log(args.log)
    rows = summary.from_darshan_records(report)
    traced = []
    for module, counted_as in (("DXT_POSIX", "POSIX"), ("DXT_MPIIO", "MPI-IO")):
        ops = operations.dxt_operations(report, module)
        if ops is not None and len(ops):
            traced.append(ops)
            rows += [
                summary.Row(module, r.rank, r.file, r.counters)
                for r in summary.from_operations(ops, module=counted_as)
            ]
    dxt = operations.concat(traced).sorted_by_start() if traced else None
    show(rows, f"darshan {args.log}", args, dxt)
    return 0
