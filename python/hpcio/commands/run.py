"""`hpcio run` and `hpcio sweep`: one pattern, or patterns x sizes appended to a results file."""

from __future__ import annotations

import argparse
import dataclasses
from collections.abc import Sequence
from typing import TYPE_CHECKING

from hpcio import options as spec_options
from hpcio.commands import options, spine
from hpcio.commands.store_options import add_store_option_argument, store_options
from hpcio.errors import SpecError
from hpcio.options import Option
from hpcio.spec.model import COMMON_OPTIONS, RunSpec, workload_named
from hpcio.spec.target import TargetSpec, parse_targets
from hpcio.units import parse_size_range
from hpcio.workloads import registry
from hpcio.workloads.contract import Workload

if TYPE_CHECKING:
    pass


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_run_arguments(parser, sweep=False)


def main(args: argparse.Namespace, argv: Sequence[str]) -> int:
    return _run(args, argv)


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
        "gs://bucket/prefix, memory://, or null:// (writes discarded, reads generated: hpcio's "
        "own ceiling; null://?delay=2ms adds a delay per operation). Several object targets of "
        "one kind, comma-separated (s3://b1/p,s3://b2/p?endpoint=http://host:9000): rank r "
        "uses target r mod K, each may name its own endpoint",
    )
    add_store_option_argument(p)
    declared = [o for o in COMMON_OPTIONS if not flags_only or o.kind.flag or o.field == "ranks"]
    spec_options.add_arguments(p, declared, skip=skip)


def add_output_arguments(
    p: argparse.ArgumentParser, quiet_help: str, output_help: str = ""
) -> None:
    p.add_argument(
        "-o",
        "--output",
        help=output_help or "append result documents (JSON Lines) to this file",
    )
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
    output_help = (
        "required (but with --dry-run): append result documents (JSON Lines) to this file; "
        "a sweep run again resumes from it"
        if sweep
        else ""
    )
    add_output_arguments(p, "print only the summary", output_help)
    add_link_argument(p)
    add_dry_run_argument(p)
    options.once_each(p, keep=("store_option",))


def add_link_argument(p: argparse.ArgumentParser) -> None:
    p.add_argument("--link", type=_link_mib_s, metavar="RATE",
                   help="the cap of the link to the target (1Gbit, 400Mbit, 119MiB a second, or "
                   "a condition of `hpcio.conditions`: cross-region): the summary says whether "
                   "each phase filled it and, where not, the setting that would")  # fmt: skip


def _link_mib_s(text: str) -> float:
    from hpcio.conditions_hint import link_mib_s

    try:
        return link_mib_s(text)
    except SpecError as e:
        raise argparse.ArgumentTypeError(str(e).removeprefix(f"--link '{text}': ")) from None


def add_dry_run_argument(p: argparse.ArgumentParser) -> None:
    p.add_argument("--dry-run", action="store_true",
                   help="print what would run (ranks, files or objects, bytes and transfers per "
                   "phase, memory, space) and exit without moving a byte")  # fmt: skip


def typed_options(args: argparse.Namespace) -> set[str]:
    """The options the user typed (store options are repeatable, so not tracked as once)."""
    return options.given(args) | ({"store_option"} if args.store_option else set())


def common_settings(args: argparse.Namespace) -> dict[str, object]:
    """The common settings typed on the command line (ranks aside: the job decides them)."""
    typed = spec_options.values(args, COMMON_OPTIONS)
    typed.pop("ranks", None)
    return typed


def target_settings(args: argparse.Namespace) -> dict[str, TargetSpec | tuple[TargetSpec, ...]]:
    """--target (one URL, or several comma-separated) and --store-option as RunSpec fields."""
    targets = parse_targets(args.target, **store_options(args.store_option))
    return {"target": targets[0], "extra_targets": targets[1:]}


def _spec(args: argparse.Namespace, name: str, size: int, ranks: int) -> RunSpec:
    """The run `args` asks for, unvalidated: the workload takes the options its params
    declare (a sweep's other patterns leave them)."""
    pattern = _named(name, PATTERN_FAMILY)
    settings = {
        **spec_options.values(args, pattern_options()),
        **common_settings(args),
        "size_per_rank_bytes": size,
        **target_settings(args),
        "ranks": ranks,
    }
    return RunSpec.build(pattern, **settings)


def _run_spec(args: argparse.Namespace, ranks: int) -> RunSpec:
    """`hpcio run`'s one run: a pattern, or another workload that runs from its params."""
    family = PATTERN_FAMILY if args.pattern is not None else None
    workload = _named(args.pattern or args.workload, family)
    if not workload.runs_alone:
        raise SpecError(f"{workload.name} is run by `hpcio {workload.family}`, not `hpcio run`")
    given = spec_options.values(args, workload_options())
    for opt in spec_options.declared(workload.params):
        if opt.default is None and opt.field not in given and _required(workload.params, opt):
            raise SpecError(f"{workload.name} needs {opt.flag}")
    run = RunSpec.build(
        workload,
        **{**given, **common_settings(args), "ranks": ranks, **target_settings(args)},
    )  # fmt: skip
    options.refuse_inapplicable(run, typed_options(args), workload_options(), family or "")
    return run.validate()


def _named(name: str, family: str | None) -> Workload:
    """The workload (of `family`) a name typed on the command line means.

    Raises:
        SpecError: no such workload: the closest name, or the list of them.
    """
    return workload_named(name, family)


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


def _run(args: argparse.Namespace, argv: Sequence[str]) -> int:
    sweeping = args.command == "sweep"
    return spine.run(
        args,
        argv,
        spine.Spine(args.command, lambda ranks: _specs(args, ranks), resumes=sweeping),
    )
