"""`hpcio run` and `hpcio sweep`: one pattern, or patterns x sizes appended to a results file."""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import json
import os
import stat
import sys
import tempfile
from collections.abc import Callable, Iterator, Sequence
from typing import TYPE_CHECKING

from hpcio.commands import options
from hpcio.errors import HpcioError, SpecError
from hpcio.results import io as results_io
from hpcio.runner import journal
from hpcio.spec import options as spec_options
from hpcio.spec.model import COMMON_OPTIONS, RunSpec
from hpcio.spec.options import Option
from hpcio.spec.target import TargetSpec
from hpcio.units import parse_size_range
from hpcio.workloads import registry

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


#: How the self-launch hands --store-option pairs to its ranks: in their environment (readable
#: by the user alone, /proc/PID/environ), not in their argv (readable by all, ps).
STORE_OPTIONS_VARIABLE = "HPCIO_STORE_OPTIONS"


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
    # The launching hpcio checked these pairs before it passed them on.
    inherited = json.loads(os.environ.get(STORE_OPTIONS_VARIABLE, "[]"))
    return {**dict(p.split("=", 1) for p in inherited), **options}


def argv_without_store_options(argv: Sequence[str]) -> tuple[list[str], list[str]]:
    """`argv` less its --store-option pairs, and the pairs: what the ranks get on their command
    line and what they get in their environment."""
    kept: list[str] = []
    pairs: list[str] = []
    words = iter(argv)
    for word in words:
        if word == "--store-option":
            pairs.append(next(words, ""))
        elif word.startswith("--store-option="):
            pairs.append(word.removeprefix("--store-option="))
        else:
            kept.append(word)
    return kept, pairs


#: The workloads `--pattern` names (`hpcio sweep` and suites cross them with sizes).
PATTERN_FAMILY = "pattern"


def pattern_options() -> list[Option]:
    """The options the patterns' params declare."""
    return registry.options(registry.of_family(PATTERN_FAMILY))


def workload_options() -> list[Option]:
    """The options of every workload `hpcio run --workload` can run (the patterns' first)."""
    return registry.options(registry.runnable())


def add_common_arguments(
    p: argparse.ArgumentParser, *, skip: Sequence[str] = (), flags_only: bool = False
) -> None:
    """--target, --store-option and the settings every run has (spec/model.py declares them)."""
    p.add_argument(
        "--target",
        required=True,
        help="where data goes: file:///scratch/hpcio, s3://bucket/prefix, az://container/prefix, "
        "gs://bucket/prefix, memory://",
    )
    add_store_option_argument(p)
    declared = [o for o in COMMON_OPTIONS if not flags_only or o.kind.flag or o.field == "ranks"]
    spec_options.add_arguments(p, declared, skip=skip)


def add_output_arguments(p: argparse.ArgumentParser, quiet_help: str) -> None:
    p.add_argument("-o", "--output", help="append result documents (JSON Lines) to this file")
    p.add_argument("-q", "--quiet", action="store_true", help=quiet_help)


def add_run_arguments(p: argparse.ArgumentParser, *, sweep: bool) -> None:
    names = ", ".join(registry.names(PATTERN_FAMILY))
    if sweep:
        p.add_argument("--pattern", required=True, help="comma-separated patterns: " + names)
        p.add_argument("--sizes", required=True, help="size per rank, or a doubling range A..B")
        add_common_arguments(p)
        spec_options.add_arguments(p, pattern_options(), skip=["size_per_rank_bytes"])
    else:
        which = p.add_mutually_exclusive_group(required=True)
        which.add_argument("--pattern", help=names)
        others = ", ".join(w.name for w in registry.runnable() if w.family != PATTERN_FAMILY)
        which.add_argument("--workload", help=f"another workload: {others}")
        add_common_arguments(p)
        spec_options.add_arguments(p, workload_options())
    add_output_arguments(p, "print only the summary")
    options.once_each(p, keep=("store_option",))


def typed_options(args: argparse.Namespace) -> set[str]:
    """The options the user typed (store options are repeatable, so not tracked as once)."""
    return options.given(args) | ({"store_option"} if args.store_option else set())


def common_settings(args: argparse.Namespace) -> dict[str, object]:
    """The common settings typed on the command line (ranks aside: the job decides them)."""
    typed = spec_options.values(args, COMMON_OPTIONS)
    typed.pop("ranks", None)
    return typed


def _spec(args: argparse.Namespace, name: str, size: int, ranks: int) -> RunSpec:
    """The run `args` asks for, unvalidated: the workload takes the options its params
    declare (a sweep's other patterns leave them)."""
    registry.get(name, PATTERN_FAMILY)
    settings = {
        **spec_options.values(args, pattern_options()),
        **common_settings(args),
        "size_per_rank_bytes": size,
        "target": TargetSpec.from_url(args.target, **store_options(args.store_option)),
        "ranks": ranks,
    }
    return RunSpec.build(name, **settings)


def _run_spec(args: argparse.Namespace, ranks: int) -> RunSpec:
    """`hpcio run`'s one run: a pattern, or another workload that runs from its params."""
    family = PATTERN_FAMILY if args.pattern is not None else None
    workload = registry.get(args.pattern or args.workload, family)
    if not workload.runs_alone:
        raise SpecError(f"{workload.name} is run by `hpcio {workload.family}`, not `hpcio run`")
    given = spec_options.values(args, workload_options())
    for opt in spec_options.declared(workload.params):
        if opt.default is None and opt.field not in given and _required(workload.params, opt):
            raise SpecError(f"{workload.name} needs {opt.flag}")
    run = RunSpec.build(
        workload.name,
        **{**given, **common_settings(args), "ranks": ranks,
           "target": TargetSpec.from_url(args.target, **store_options(args.store_option))},
    )  # fmt: skip
    options.refuse_inapplicable(run, typed_options(args), workload_options(), family or "")
    return run.validate()


def _required(params: type, opt: Option) -> bool:
    field = next(f for f in dataclasses.fields(params) if f.name == opt.field)
    return field.default is dataclasses.MISSING


def _specs(args: argparse.Namespace, ranks: int) -> list[RunSpec]:
    typed = typed_options(args)
    if args.command == "run":
        return [_run_spec(args, ranks)]
    from hpcio.spec.sweep import grid

    names = [p.strip() for p in args.pattern.split(",") if p.strip()] or [""]
    sizes = parse_size_range(args.sizes)
    bases = [_spec(args, name, sizes[0], ranks) for name in names]
    bases = options.fit_to_each(bases, typed, pattern_options(), PATTERN_FAMILY)
    return [run for base in bases for run in grid(base, sizes)]


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
    return launch_or_join(args, argv, specs, _execute)


def launch_or_join(
    args: argparse.Namespace,
    argv: Sequence[str],
    specs: list[RunSpec],
    execute: Callable[[Comm, argparse.Namespace, list[RunSpec]], int],
) -> int:
    """Outside an MPI job with -n > 1: probe the target, start hpcio again under mpiexec and
    clean up after the job if it fails. Inside one (or with one rank): run `execute` here.

    Args:
        args: parsed options with `ranks` (-n) and `output` (-o).
        argv: the command line, passed unchanged to the ranks.
        specs: validated runs; their `ranks` is set to the MPI world's size here.
        execute: runs the specs on this rank, inside abort_on_error.
    """
    from hpcio.runner import world as world_mod

    ranks = args.ranks or 1
    job = journal.set_up()  # before the launch: every rank inherits it
    if not world_mod.inside_mpi_job() and ranks > 1:
        from hpcio.runner.run import probe_target

        if args.output:
            results_io.recover_partial(args.output)
        probe_target(specs[0])
        rank_argv, pairs = argv_without_store_options(argv)
        os.environ[STORE_OPTIONS_VARIABLE] = json.dumps(pairs)  # the ranks inherit it
        with _spooled(args.output) as output:
            before = _size(output)
            try:
                code = world_mod.relaunch(ranks, rank_argv)
            except KeyboardInterrupt:
                clean_up_after(specs, job, output, before, stopped=True)
                raise
            if (code > 128 or code < 0) and code != 130:
                # A rank died from a signal and could not say so itself.
                signal_number = code - 128 if code > 128 else -code
                print(
                    f"hpcio: error: the MPI job failed: a rank was killed (signal {signal_number})",
                    file=sys.stderr,
                )
            if code != 0:
                clean_up_after(specs, job, output, before, stopped=code > 128 or code < 0)
            return code

    world = world_mod.open_world()
    if args.ranks is not None and args.ranks != world.size:
        raise SpecError(f"-n {args.ranks} but the MPI job has {world.size} ranks")
    specs = [dataclasses.replace(s, ranks=world.size) for s in specs]
    with world_mod.abort_on_error(world):
        return execute(world, args, specs)


@contextlib.contextmanager
def _spooled(output: str | None) -> Iterator[str | None]:
    """-o -: the file rank 0 writes the documents to (results/io.py SPOOL_VARIABLE), printed
    once the job has ended however it ended; any other -o as it is."""
    if output != results_io.STDOUT:
        yield output
        return
    fd, spool = tempfile.mkstemp(prefix="hpcio-stdout-", suffix=".jsonl")
    os.close(fd)
    os.environ[results_io.SPOOL_VARIABLE] = spool  # the ranks inherit it
    try:
        yield spool
    finally:
        results_io.print_spooled(spool)
        os.unlink(spool)
        del os.environ[results_io.SPOOL_VARIABLE]


def _size(path: str | None) -> int:
    try:
        return os.path.getsize(path) if path else 0
    except OSError:
        return 0


def clean_up_after(
    specs: list[RunSpec], job: str, output: str | None, since: int = 0, stopped: bool = False
) -> None:
    """The MPI job failed or was `stopped` by a signal: abort the uploads its ranks could not,
    remove the files they left (unless --keep), and say where the iterations it finished are
    (rank 0 wrote them to `output`, after byte `since`, as they finished)."""
    from hpcio.runner.run import open_target
    from hpcio.runner.sweep import finished_iterations, say_kept

    for spec in {s.target.url: s for s in specs}.values():
        target = spec.target
        if target.is_object_store and target.kind != "memory":
            aborted = journal.abort_abandoned(target.url, target.options, job)
            if aborted:
                print(f"hpcio: aborted {len(aborted)} incomplete upload(s) the job left on "
                      f"{target.url}", file=sys.stderr)  # fmt: skip
        if not spec.keep and spec.writes:
            keys = {k for s in specs if s.writes for k in registry.get(s.workload).keys(s)}
            with contextlib.suppress(OSError, HpcioError):  # `hpcio clean` removes the rest
                open_target(spec).remove(sorted(keys))
    if output and output != results_io.STDOUT:
        interrupted = results_io.interrupted_since(output, since)
        shown = "stdout" if output == os.environ.get(results_io.SPOOL_VARIABLE) else output
        if interrupted is not None or stopped:
            say_kept(shown, finished_iterations(interrupted) if interrupted else 0)


def _execute(world: Comm, args: argparse.Namespace, specs: list[RunSpec]) -> int:
    from hpcio.live.console import Console
    from hpcio.runner.sweep import run_all
    from hpcio.runner.world import topology
    from hpcio.spec.sweep import pending

    with commentary_to_stderr(args.output):
        todo = specs
        if args.output and world.rank == 0:
            results_io.recover_partial(args.output)  # a run launched by hand that did not end
        if args.command == "sweep" and world.rank == 0:
            todo = pending(specs, results_io.done_runs(args.output))
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
