"""`hpcio run` and `hpcio sweep`: one pattern, or patterns x sizes appended to a results file."""

from __future__ import annotations

import argparse
import contextlib
import os
import stat
import sys
from collections.abc import Sequence
from typing import TYPE_CHECKING

from hpcio.commands import options
from hpcio.errors import SpecError
from hpcio.results import io as results_io
from hpcio.runner import launch
from hpcio.spec.model import PATTERNS, RunSpec
from hpcio.spec.target import TargetSpec
from hpcio.units import parse_size, parse_size_range

if TYPE_CHECKING:
    from hpcio.runner.world import Comm

HELP = "run one pattern"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_run_arguments(parser, sweep=False)


def main(args: argparse.Namespace, argv: Sequence[str]) -> int:
    return _run(args, argv)


def add_store_option_argument(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--store-option",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="object store setting (object_store's keys, e.g. endpoint, region, allow_http; "
        "max_retries, retry_timeout_s); repeatable. Never printed or recorded, and passed to "
        "the ranks in their environment, not their command line; but your own command line is "
        "visible to every user of the node (ps): give secrets in the environment (AWS_*, "
        "AZURE_STORAGE_*, GOOGLE_*) instead",
    )


def store_options(pairs: Sequence[str]) -> dict[str, str]:
    """--store-option key=value pairs (after those the launching hpcio passed in the
    environment) as a dict; later ones win.

    Raises:
        SpecError: a pair without `=`, named by its position: its text may be a secret.
    """
    options = {}
    for number, pair in enumerate(pairs, start=1):
        key, sep, value = pair.partition("=")
        if not sep or not key.strip():
            raise SpecError(
                f"--store-option number {number} is not KEY=VALUE (it has no '='; its text is "
                "not shown, as it may hold a secret)"
            )
        options[key.strip()] = value
    return {**launch.inherited_store_options(), **options}


def add_drop_caches_argument(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--drop-caches",
        action="store_true",
        help="root: write back and drop the page cache on every node before each read phase "
        "(/proc/sys/vm/drop_caches), so reads come from storage",
    )


def add_run_arguments(p: argparse.ArgumentParser, *, sweep: bool) -> None:
    if sweep:
        p.add_argument(
            "--pattern", required=True, help="comma-separated patterns: " + ", ".join(PATTERNS)
        )
        p.add_argument("--sizes", required=True, help="size per rank, or a doubling range A..B")
    else:
        p.add_argument("--pattern", required=True, help=", ".join(PATTERNS))
        p.add_argument("--size-per-rank", required=True, help="bytes each rank writes (256MiB)")
    p.add_argument(
        "--target",
        required=True,
        help="where data goes: file:///scratch/hpcio, s3://bucket/prefix, az://container/prefix, "
        "gs://bucket/prefix, memory://",
    )
    add_store_option_argument(p)
    p.add_argument("-n", "--ranks", type=int, help="MPI ranks; starts mpiexec when needed")
    p.add_argument(
        "--transfer",
        "--part-size",
        dest="transfer",
        default="1MiB",
        help="bytes per I/O call: one pwrite/pread, one part or block, one ranged GET "
        "(default 1MiB; --part-size is the same option)",
    )
    p.add_argument("-i", "--iterations", type=int, default=1, help="repetitions (default 1)")
    p.add_argument(
        "--files-per-rank",
        type=int,
        default=1,
        metavar="K",
        help="mfmw/mfmr: K files or objects per rank, all in flight together (fio's nrfiles)",
    )
    p.add_argument(
        "--segments", type=int, default=1, help="interleave each rank's data in S segments (IOR -s)"
    )
    p.add_argument("--fsync", action="store_true", help="fsync before close, inside the timing")
    p.add_argument("--direct", action="store_true", help="O_DIRECT: bypass the page cache")
    add_drop_caches_argument(p)
    p.add_argument("--verify", action="store_true", help="check every byte read")
    p.add_argument("--keep", action="store_true", help="keep files after each iteration")
    p.add_argument(
        "--phases",
        help="write, read or write,read (default: the pattern's); "
        "read alone reads what an earlier --keep run wrote",
    )
    p.add_argument(
        "--reorder",
        action="store_true",
        help="read back another rank's data (another node's when there are several)",
    )
    p.add_argument(
        "--read-scope",
        choices=("all", "own"),
        default="all",
        help="sfmr: every rank reads the whole file (all) or its region (own)",
    )
    p.add_argument(
        "--random",
        action="store_true",
        help="mfmw/mfmr: visit each rank's transfers in a seeded random order (fio's randrw)",
    )
    p.add_argument(
        "--duration",
        type=float,
        metavar="SECONDS",
        help="mfmw/mfmr: repeat each phase's transfers for this long (fio's time_based)",
    )
    p.add_argument("--gather-chunk", default="64MiB", help="sfsw: bytes per gather message")
    p.add_argument(
        "--in-flight",
        "--concurrency",
        dest="in_flight",
        type=int,
        default=1,
        help="transfers (parts, GETs) in flight per rank (--concurrency is the same option)",
    )
    p.add_argument("--seed", type=int, default=1, help="payload seed")
    add_no_space_check_argument(p)
    p.add_argument("-o", "--output", help="append result documents (JSON Lines) to this file")
    p.add_argument("-q", "--quiet", action="store_true", help="print only the summary")
    options.once_each(p, keep=("store_option",))


def add_no_space_check_argument(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--no-space-check",
        action="store_true",
        help="POSIX: run even if the data will not fit in the target's free space (for file "
        "systems that report free space wrongly)",
    )


def typed_options(args: argparse.Namespace) -> set[str]:
    """The options the user typed (store options are repeatable, so not tracked as once)."""
    return options.given(args) | ({"store_option"} if args.store_option else set())


def _spec(args: argparse.Namespace, pattern: str, size: int, ranks: int) -> RunSpec:
    """The run `args` asks for, unvalidated (a sweep fits options to each pattern first)."""
    return RunSpec(
        pattern=pattern,
        target=TargetSpec.from_url(args.target, **store_options(args.store_option)),
        ranks=ranks,
        size_per_rank_bytes=size,
        transfer_bytes=parse_size(args.transfer),
        segments=args.segments,
        files_per_rank=args.files_per_rank,
        iterations=args.iterations,
        fsync=args.fsync,
        direct=args.direct,
        verify=args.verify,
        keep=args.keep,
        reorder=args.reorder,
        read_scope=args.read_scope,
        gather_chunk_bytes=parse_size(args.gather_chunk),
        in_flight=args.in_flight,
        seed=args.seed,
        phases=tuple(p.strip() for p in args.phases.split(",")) if args.phases else None,
        random_offsets=args.random,
        duration_s=args.duration,
        drop_caches=args.drop_caches,
        space_check=not args.no_space_check,
    )


def _specs(args: argparse.Namespace, ranks: int) -> list[RunSpec]:
    typed = typed_options(args)
    if args.command == "run":
        run = _spec(args, args.pattern, parse_size(args.size_per_rank), ranks)
        options.refuse_inapplicable(run, typed)
        return [run.validate()]
    from hpcio.spec.sweep import grid

    patterns = [p.strip() for p in args.pattern.split(",") if p.strip()] or [""]
    sizes = parse_size_range(args.sizes)
    bases = options.fit_to_each([_spec(args, p, sizes[0], ranks) for p in patterns], typed)
    return [run for base in bases for run in grid(base, [base.pattern], sizes)]


def check_output(path: str | None) -> None:
    """Fail before anything runs if the results file -o cannot be appended to."""
    if path is None or path == results_io.STDOUT:
        return
    if os.path.exists(path) and not os.path.isdir(path) and not stat.S_ISREG(os.stat(path).st_mode):
        raise SpecError(
            f"-o {path}: not a regular file (results are appended to a file and a sweep resumes "
            "from it); use -o - to write them to stdout"
        )
    directory = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(directory):
        raise SpecError(f"-o {path}: directory {directory} does not exist")
    try:
        with open(path, "a", encoding="utf-8"):
            pass
    except OSError as e:
        raise SpecError(f"-o {path}: cannot write ({e.strerror})") from None


def _run(args: argparse.Namespace, argv: Sequence[str]) -> int:
    if args.ranks is not None and args.ranks < 1:
        raise SpecError(f"-n must be at least 1, got {args.ranks}")
    if args.command == "sweep" and not args.output:
        raise SpecError("sweep needs -o FILE: it appends there and resumes from it")
    specs = _specs(args, args.ranks or 1)  # validates options before anything starts
    check_output(args.output)
    return launch.launch_or_join(
        specs, argv, lambda world, todo: _execute(world, args, todo), args.ranks, args.output
    )


def _execute(world: Comm, args: argparse.Namespace, specs: list[RunSpec]) -> int:
    from hpcio.live.console import Console
    from hpcio.runner.sweep import resume, run_all
    from hpcio.runner.world import topology

    with commentary_to_stderr(args.output):
        todo = specs
        if args.command == "sweep" and world.rank == 0:
            todo = resume(specs, args.output)
            print(
                f"hpcio sweep: {len(specs)} points, {len(specs) - len(todo)} already in "
                f"{args.output}, {len(todo)} to run"
            )
        todo = world.bcast(todo)
        console = Console(topology(world), quiet=args.quiet)
        output = results_io.destination(args.output)
        run_all(world, todo, output, console.progress, console.announce, console.finished)
    return 0


def commentary_to_stderr(output: str | None) -> contextlib.AbstractContextManager[object]:
    """With -o -, stdout carries the result documents alone: what hpcio says goes to stderr."""
    if output == results_io.STDOUT:
        return contextlib.redirect_stdout(sys.stderr)
    return contextlib.nullcontext()
