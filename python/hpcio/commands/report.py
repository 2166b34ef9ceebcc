"""`hpcio report`: the studies' tables from result documents, and their plots and HTML page."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from hpcio.errors import SpecError

if TYPE_CHECKING:
    from hpcio.report.plots import PlotSet
    from hpcio.results.schema import ResultDocument


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("results", nargs="+", help="JSON Lines files written by -o")
    parser.add_argument(
        "--format",
        choices=("md", "csv", "json", "rows"),
        default="md",
        help="tables on stdout (default md), or rows: one CSV row per run and phase with every "
        "spec field and metric (pandas.read_csv reads it); with --plots or --html the written "
        "paths instead",
    )
    parser.add_argument(
        "--across",
        metavar="FIELD",
        default="target",
        help="the compared axis in the tables' columns: a spec field such as api, "
        "stripe_count, transfer_bytes, ranks_per_node (default target)",
    )
    parser.add_argument(
        "--per-iteration",
        action="store_true",
        help="with --format rows: one row per iteration of each run and phase",
    )
    add_output_arguments(parser)


def add_output_arguments(parser: argparse.ArgumentParser) -> None:
    """--plots and --html, shared with `hpcio compare`."""
    parser.add_argument(
        "--plots",
        metavar="DIR",
        help="write each figure as DIR/<name>.png and .svg (DIR is created); print the paths",
    )
    parser.add_argument(
        "--html",
        metavar="FILE",
        help="write one self-contained page (tables, plots, environment, specs, warnings)",
    )


def main(args: argparse.Namespace, argv: Sequence[str]) -> int:
    from hpcio.report.tables import render, study_tables

    plots_dir, html_path = check_outputs(args)
    if args.per_iteration and args.format != "rows":
        raise SpecError("--per-iteration is for --format rows")
    docs = read_documents(args.results)
    if args.format == "rows" and plots_dir is None and html_path is None:
        from hpcio.report.rows import render_rows, rows

        sys.stdout.write(render_rows(rows(docs, per_iteration=args.per_iteration)))
        return 0
    if plots_dir is None and html_path is None:
        from hpcio.report.families import family_grids

        grids = [] if args.format == "md" else family_grids(docs)
        text = render(study_tables(docs, _across(args, docs)), args.format, grids)
        if args.format == "md":
            text += _profile_tables(docs)
            from hpcio.report.checkpoints import checkpoint_table

            checkpoints = checkpoint_table(docs)
            if checkpoints:
                text += "\n" + checkpoints
            from hpcio.report.mdtest import mdtest_table

            metadata = mdtest_table(docs)
            if metadata:
                text += "\n" + metadata
            from hpcio.report.targets import render_markdown, target_grids

            several = target_grids(docs)
            if several:
                text += "\n" + render_markdown(several)
            # Each family's table is set off from the one before by a blank line; with no
            # study table before the first, that line would open the report.
            text = text.lstrip("\n")
        sys.stdout.write(text)
        return 0
    from hpcio.report import plots

    figures = plots.report_plots(docs)
    written = []
    if plots_dir is not None:
        written += write_plots(figures, plots_dir)
    if html_path is not None:
        from hpcio.report.html import report_page

        across = _across(args, docs)
        written += write_page(html_path, report_page(docs, figures, args.results, across))
    say(written)
    return 0


def _across(args: argparse.Namespace, docs: Sequence[ResultDocument]) -> str:
    """--across, checked against the documents' spec fields.

    Raises:
        SpecError: no document has that field (the fields they have named).
    """
    from hpcio.report.tables import known_fields

    known = known_fields(docs)
    if args.across != "target" and args.across not in known:
        raise SpecError(
            f"--across {args.across}: not a spec field of these runs; choose from "
            f"{', '.join(sorted(known))}"
        )
    return str(args.across)


def read_documents(paths: Sequence[str]) -> list[ResultDocument]:
    """Every document in these files, in order.

    Raises:
        ResultsError: a file is missing or not hpcio's (one line naming file and line).
        SpecError: the files hold no document at all.
    """
    from hpcio.results import io as results_io

    docs = [doc for path in paths for doc in results_io.read(path)]
    if not docs:
        raise SpecError(f"no result documents in {', '.join(paths)}")
    return docs


def check_outputs(args: argparse.Namespace) -> tuple[Path | None, Path | None]:
    """Refuse unusable --plots/--html destinations, or no matplotlib to draw them, before
    reading or drawing anything."""
    from hpcio.report.plots import require_matplotlib

    plots_dir = Path(args.plots) if args.plots else None
    html_path = Path(args.html) if args.html else None
    for option, wanted in (("--plots", plots_dir), ("--html", html_path)):
        if wanted is not None:
            require_matplotlib(option)
    if plots_dir is not None and plots_dir.exists() and not plots_dir.is_dir():
        raise SpecError(f"--plots {plots_dir}: exists and is not a directory")
    if html_path is not None:
        if html_path.is_dir():
            raise SpecError(f"--html {html_path}: is a directory")
        if not html_path.absolute().parent.is_dir():
            raise SpecError(
                f"--html {html_path}: directory {html_path.absolute().parent} does not exist"
            )
    return plots_dir, html_path


def write_plots(figures: PlotSet, directory: Path) -> list[str]:
    """Write every figure as PNG and SVG; return the lines to print: each path, then which
    figures were skipped and why."""
    from hpcio.report.plots import write_files

    lines: list[str] = []
    try:
        directory.mkdir(parents=True, exist_ok=True)
        for plot in figures.plots:
            lines.extend(str(path) for path in write_files(plot, directory))
    except OSError as e:
        raise SpecError(f"--plots {directory}: cannot write ({e.strerror})") from None
    return [*lines, *figures.skipped]


def write_page(path: Path, page: str) -> list[str]:
    """Write the HTML page; return the line to print (its path)."""
    try:
        path.write_text(page, encoding="utf-8")
    except OSError as e:
        raise SpecError(f"--html {path}: cannot write ({e.strerror})") from None
    return [str(path)]


def say(lines: Sequence[str]) -> None:
    """Print once every file is written, so a reader that goes away early (`| head`) never
    leaves a figure or the page half done."""
    for line in lines:
        print(line)


def _profile_tables(docs: Sequence[ResultDocument]) -> str:
    """The fio study's tables for profile runs, IOzone's table for iozone runs, the RTM
    study's library table for volume and imaging runs, the AU table for training runs, each
    after a blank line."""
    from hpcio.report.iozone import iozone_table, is_iozone
    from hpcio.report.libraries import library_table
    from hpcio.report.profiles import is_profile, profile_tables

    text = ""
    profiled = [doc for doc in docs if is_profile(doc)]
    if profiled:
        text += "\n" + profile_tables(profiled) + "\n"
    if any(is_iozone(doc) for doc in docs):
        text += "\n" + iozone_table(docs) + "\n"
    libraries = library_table(docs)
    if libraries:
        text += "\n" + libraries
    from hpcio.report.training import au_table, sizing_lines

    trained = au_table(docs)
    if trained:
        text += "\n" + "\n".join([*sizing_lines(docs), trained]) + "\n"
    return text
