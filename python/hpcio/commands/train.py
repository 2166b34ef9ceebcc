"""`hpcio train unet3d|datagen`: MLPerf Storage's unet3d training emulation, its data set
written once by datagen, and its accelerator utilization (AU) table."""

from __future__ import annotations

import argparse
import dataclasses
import sys
from collections.abc import Sequence
from typing import TYPE_CHECKING

from hpcio import options as spec_options
from hpcio.commands import options, spine
from hpcio.commands.run import (
    add_common_arguments,
    add_dry_run_argument,
    add_output_arguments,
    common_settings,
    store_options,
    typed_options,
)
from hpcio.spec.model import RunSpec, workload_named
from hpcio.spec.target import TargetSpec
from hpcio.workloads import registry
from hpcio.workloads.training import bert, cosmoflow, resnet50, unet3d

if TYPE_CHECKING:
    from hpcio.results.schema import ResultDocument
    from hpcio.runner.world import Comm, Topology
    from hpcio.workloads.contract import Workload


#: What `hpcio train NAME` runs.
WORKLOADS = {
    "unet3d": unet3d.Unet3d.name,
    "datagen": unet3d.Unet3dDatagen.name,
    "cosmoflow": cosmoflow.Cosmoflow.name,
    "cosmoflow-datagen": cosmoflow.CosmoflowDatagen.name,
    "resnet50": resnet50.Resnet50.name,
    "resnet50-datagen": resnet50.Resnet50Datagen.name,
    "bert": bert.Bert.name,
    "bert-datagen": bert.BertDatagen.name,
}
#: Each training and the datagen that writes its data set.
_TRAININGS = {
    "unet3d": "datagen", "cosmoflow": "cosmoflow-datagen", "resnet50": "resnet50-datagen",
    "bert": "bert-datagen",
}  # fmt: skip


def _workloads() -> list[registry.Entry]:
    """The registered training workloads `hpcio train` runs, in the order of WORKLOADS."""
    return [w for w in registry.of_family("training") if w.name in WORKLOADS.values()]


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "name",
        choices=tuple(WORKLOADS),
        help="unet3d, cosmoflow, resnet50, bert: train on the data set (every rank an "
        "accelerator); datagen, cosmoflow-datagen, resnet50-datagen, bert-datagen: write its "
        "data set once (same --scale, --samples and --seed as the training runs; resnet50's "
        "and bert's --samples counts their files)",
    )
    add_common_arguments(p, skip=("phases", "stripe_count", "stripe_size_bytes"))
    spec_options.add_arguments(p, registry.options(_workloads()))
    p.add_argument(
        "--dlio-config", metavar="FILE", default=None,
        help="a DLIO workload file (configs/workload/*.yaml): its options that change what "
        "storage sees, under DLIO's names, as defaults the flags given override; hpcio "
        "refuses, by name, the ones it cannot emulate",
    )  # fmt: skip
    add_output_arguments(p, "print only the AU table")
    add_dry_run_argument(p)
    options.once_each(p, keep=("store_option",))


def spec(args: argparse.Namespace, ranks: int) -> RunSpec:
    """The run `args` asks for, validated; the compute time each step takes is recorded as
    it is used (the accelerator's unless --compute-time gave one).

    Raises:
        SpecError: an option of the other command, or a value unet3d refuses.
    """
    workload = workload_named(WORKLOADS[args.name])
    every = registry.options(_workloads())
    given = spec_options.values(args, every)
    settings = {
        **_from_dlio_config(args, workload),
        **given,
        **common_settings(args),
        "ranks": ranks,
        "target": TargetSpec.from_url(args.target, **store_options(args.store_option)),
    }
    if args.name not in _TRAININGS:
        settings["keep"] = True  # the data set is for the training runs that follow
    run = RunSpec.build(workload, **settings)
    options.refuse_inapplicable(run, typed_options(args), every, "training")
    if isinstance(run.params, unet3d.TrainParams):
        # The document says what ran: the compute time used, the samples found.
        run = dataclasses.replace(
            run,
            params=dataclasses.replace(
                run.params,
                compute_time_s=unet3d.compute_seconds(run.params),
                samples=unet3d.data_set(run).samples,
            ),
        )
    run = run.validate()
    unet3d.refuse_missing_data_set(run)
    return run


def _from_dlio_config(args: argparse.Namespace, workload: Workload) -> dict[str, object]:
    if args.dlio_config is None:
        return {}
    from hpcio.workloads.training import dlio_config

    params = workload.params
    # Every training's and datagen's params are unet3d's or made from them (configured.py).
    assert issubclass(params, unet3d.TrainParams | unet3d.DatagenParams)
    found = dlio_config.settings(args.dlio_config, params.MODEL)
    if args.name not in _TRAININGS:  # a datagen takes what shapes the data set
        datagen = {o.field for o in registry.options([workload])}
        found = {k: v for k, v in found.items() if k in datagen or k == "seed"}
    return found


def main(args: argparse.Namespace, argv: Sequence[str]) -> int:
    if args.dlio_config is not None:
        from hpcio.workloads.training import dlio_config

        spec(args, args.ranks or 1)  # a file hpcio refuses is refused before any note on it
        left = dlio_config.left_out(args.dlio_config)
        if left:
            print(f"hpcio: {args.dlio_config}: left to hpcio checkpoint: {', '.join(left)}",
                  file=sys.stderr)  # fmt: skip

    def rejoin(world: Comm, layout: Topology, todo: list[RunSpec]) -> list[RunSpec]:
        # -n decides the ranks only now the job runs (a launcher of the user's own).
        return [spec(args, world.size)] if todo[0].ranks != world.size else todo

    return spine.run(
        args,
        argv,
        spine.Spine(
            f"train {args.name}",
            lambda ranks: [spec(args, ranks)],
            rejoin=rejoin,
            quiet_hides_summary=True,
            closing=_au_table if args.name in _TRAININGS else None,
        ),
    )


def _au_table(docs: list[ResultDocument]) -> None:
    from hpcio.live.console import say
    from hpcio.report.training import au_table, sizing_lines

    if not docs:
        return
    say("")
    for line in sizing_lines(docs):
        say(line)
    say(au_table(docs))
