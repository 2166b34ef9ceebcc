"""`hpcio suite run FILE.toml`: a suite's grid of points, appended to -o and resumable;
`hpcio suite show FILE.toml`: its points and which are already done."""

from __future__ import annotations

import argparse
from collections.abc import Sequence

from hpcio import shipped
from hpcio.commands import spine
from hpcio.commands.run import add_dry_run_argument
from hpcio.spec.suite import Suite, describe, load_suite


def add_arguments(parser: argparse.ArgumentParser) -> None:
    actions = parser.add_subparsers(dest="suite_command", required=True)
    run = actions.add_parser("run", help="run the suite's points not yet in -o")
    _common(run)
    spine.add_group_arguments(run)
    add_dry_run_argument(run)
    show = actions.add_parser("show", help="list the suite's points and which are done")
    _common(show, output_required=False)
    actions.add_parser("list", help="the suites hpcio ships, one line each")


def _common(parser: argparse.ArgumentParser, *, output_required: bool = True) -> None:
    parser.add_argument(
        "suite", help="a suite file, or the name of a shipped one (hpcio suite list): output"
    )
    parser.add_argument(
        "-o",
        "--output",
        required=output_required,
        help="results file (JSON Lines): documents are appended, points already there skipped"
        if output_required
        else "a results file (read only): mark the points it already holds as done",
    )
    parser.add_argument(
        "--target",
        action="append",
        default=[],
        metavar="URL",
        help="run against URL instead of the suite's targets (repeatable): file:///dir, "
        "s3://bucket/prefix, az://container/prefix, gs://bucket/prefix, memory://, null://",
    )
    parser.add_argument("--scale", help="a scale the suite defines, e.g. small")


def main(args: argparse.Namespace, argv: Sequence[str]) -> int:
    if args.suite_command == "list":
        return _list()
    path = shipped.find(args.suite, shipped.SUITES, "suite")
    suite = load_suite(path, scale=args.scale, targets=args.target)
    if args.suite_command == "show":
        return _show(suite, args.output)
    scale = f" at scale {suite.scale}" if suite.scale else ""
    return spine.run(
        args,
        argv,
        spine.Spine(
            "suite",
            lambda ranks: list(suite.points),
            grouped=True,
            title=f"{suite.name}{scale}",
            left_out=suite.left_out,
        ),
    )


def _list() -> int:
    for name in shipped.names(shipped.SUITES):
        print(f"{name:<10}  {shipped.about(shipped.SUITES / f'{name}.toml', 'suite')}")
    print(f"(in {shipped.SUITES}; run one by name: hpcio suite run NAME -o FILE --target URL)")
    return 0


def _show(suite: Suite, output: str | None) -> int:
    todo = {id(p) for p in spine.pending(suite.points, output)}
    scale = f" at scale {suite.scale}" if suite.scale else ""
    print(f"{suite.name}{scale}: {len(suite.points)} points, {len(todo)} to run")
    for index, point in enumerate(suite.points, start=1):
        status = "todo" if id(point) in todo else "done"
        print(f"{index:>4}  {status}  {describe(point)}")
    _say_left_out(suite)
    return 0


def _say_left_out(suite: Suite) -> None:
    """The points a target's store would refuse, which the suite leaves out on it."""
    for line in suite.left_out:
        print(f"hpcio suite: left out: {line}")
