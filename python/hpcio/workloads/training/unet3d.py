"""MLPerf Storage's unet3d training emulation (DLIO's configs/workload/unet3d_*.yaml): every
rank is an accelerator that reads batches of npz samples through reader threads while it
"computes" (a sleep), and its accelerator utilization (AU) says whether the storage kept up.
`unet3d-datagen` writes the data set once; `unet3d` trains on it (run by `hpcio train`)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from hpcio.errors import SpecError
from hpcio.options import DURATION, POSITIVE, SIZE, choice, option
from hpcio.units import format_bytes
from hpcio.workloads.contract import (
    Body,
    CacheFacts,
    MemoryNeed,
    Phase,
    PythonBody,
    RankInfo,
    Workload,
    Written,
)
from hpcio.workloads.patterns.common import DIRECT_ALIGN
from hpcio.workloads.training import loader
from hpcio.workloads.training.dataset import SCALES, DataSet, owns_key
from hpcio.workloads.training.utilization import (
    EXCLUDED_FIRST_STEPS,
    EpochFigures,
    run_utilization,
    wait_summary,
)

if TYPE_CHECKING:
    from hpcio.spec.model import RunSpec

#: Seconds of compute per step (a batch of 7) on each accelerator: DLIO's unet3d_a100.yaml and
#: unet3d_h100.yaml (train.computation_time), and MLPerf Storage's b200 figure.
COMPUTE_S = {"a100": 0.636, "h100": 0.323, "b200": 0.162}
#: DLIO's unet3d configs: dataset.num_files_train (one sample per file).
DEFAULT_SAMPLES = 168


def _scale_option() -> Any:
    return option(
        "--scale", kind=choice(*SCALES), default="full",
        help="full: DLIO's sample sizes (mean 146,600,628 B, stdev 68,341,808 B); small: "
        "sizes and the default compute time divided by 16, so a step asks the same bytes per "
        "second of compute and one machine runs it in minutes",
    )  # fmt: skip


def _samples_option() -> Any:
    return option(
        "--samples", kind=POSITIVE, default=DEFAULT_SAMPLES,
        help="samples (files or objects) in the data set (DLIO's num_files_train: 168)",
    )  # fmt: skip


def _transfer_option() -> Any:
    return option(
        "--transfer", kind=SIZE, unit="bytes", default=None,
        help="bytes per read or write call (ranged GETs, parts), the calls of a sample shared "
        "by the reader threads (default: each sample in one call, a whole-object GET or PUT, "
        "each reader thread taking a sample, as DLIO's readers do)",
    )  # fmt: skip


@dataclass(frozen=True, slots=True, kw_only=True)
class TrainParams:
    accelerator: str = option(
        "--accelerator", kind=choice(*COMPUTE_S), default="a100",
        help="the simulated accelerator: its compute time per step (a100 0.636 s, h100 "
        "0.323 s, b200 0.162 s)",
    )  # fmt: skip
    scale: str = _scale_option()
    samples: int = _samples_option()
    batch: int = option(
        "--batch",
        kind=POSITIVE,
        default=7,
        help="samples per step and accelerator (DLIO's batch_size: 7)",
    )
    read_threads: int = option(
        "--read-threads", kind=POSITIVE, default=4,
        help="reads in flight per accelerator for each batch being fetched (DLIO's "
        "read_threads: 4)",
    )  # fmt: skip
    epochs: int = option("--epochs", kind=POSITIVE, default=5, help="epochs (DLIO's: 5)")
    compute_time_s: float | None = option(
        "--compute-time", kind=DURATION, default=None,
        help="seconds of emulated compute per step (default: the accelerator's, divided by "
        "16 at --scale small)",
    )  # fmt: skip
    prefetch: int = option(
        "--prefetch", kind=POSITIVE, default=2,
        help="batches fetched ahead of the one computed (PyTorch's prefetch_factor: 2)",
    )  # fmt: skip
    transfer_bytes: int | None = _transfer_option()


@dataclass(frozen=True, slots=True, kw_only=True)
class DatagenParams:
    scale: str = _scale_option()
    samples: int = _samples_option()
    transfer_bytes: int | None = _transfer_option()
    in_flight: int = option(
        "--in-flight", kind=POSITIVE, default=4, help="writes in flight per rank for each sample"
    )


def data_set(run: RunSpec) -> DataSet:
    return DataSet(run.params.scale, run.params.samples, run.seed, aligned=run.direct)


def compute_seconds(params: TrainParams) -> float:
    """The emulated compute per step: as given, else the accelerator's (÷16 at small)."""
    if params.compute_time_s is not None:
        return params.compute_time_s
    return COMPUTE_S[params.accelerator] / DataSet(params.scale, 1, 0).divisor


def steps_per_epoch(samples: int, batch: int, ranks: int) -> int:
    """Steps each rank takes per epoch: DLIO's floor(samples / batch / ranks); the samples
    left over (fewer than a batch for every rank) are not read in that epoch."""
    return samples // (batch * ranks)


class _Unet3dBase(Workload):
    family = "training"
    runs_alone = False
    # Datagen is made once, before the training points that read it: not a suite's point.
    in_suites = False
    lower = {"buffers": "--transfer, --read-threads or --prefetch",  # noqa: RUF012
             "data": "--samples or --scale small",
             "disk": "--samples or --scale small"}  # fmt: skip

    def validate(self, run: RunSpec) -> None:
        super().validate(run)
        if run.verify:
            raise SpecError(
                f"--verify: {self.name}'s samples are npz files (headers around the payload), "
                "which the engine does not check"
            )
        transfer = getattr(run.params, "transfer_bytes", None)
        if run.direct and transfer is not None and transfer % DIRECT_ALIGN:
            raise SpecError(
                f"--direct: --transfer must be a multiple of {format_bytes(DIRECT_ALIGN)} "
                f"(O_DIRECT's alignment), got {format_bytes(transfer)}"
            )

    def keys(self, run: RunSpec) -> list[str]:
        return data_set(run).keys()

    def owns_key(self, name: str) -> bool:
        return owns_key(name)

    def stored_bytes(self, run: RunSpec) -> int:
        return data_set(run).total_bytes()

    def objects_written(self, run: RunSpec) -> list[Written]:
        largest = int(data_set(run).file_bytes().max())
        part = run.params.transfer_bytes or largest
        return [Written("each sample's object", largest, part, False)]

    def disk_words(self, run: RunSpec) -> str:
        return f"{run.params.samples} sample(s) of {format_bytes(self._mean_bytes(run))} mean"

    def _mean_bytes(self, run: RunSpec) -> int:
        return int(data_set(run).file_bytes().mean())

    def _datagen_memory(self, run: RunSpec, ranks_per_node: int) -> MemoryNeed:
        largest = int(data_set(run).file_bytes().max())
        return MemoryNeed(
            ranks_per_node * 2 * largest,
            f"{ranks_per_node} rank(s) x the largest sample ({format_bytes(largest)}) and its "
            "array while np.savez builds it",
            "--scale small",
        )


class Unet3dDatagen(_Unet3dBase):
    name = "unet3d-datagen"
    params = DatagenParams
    summary = "writes unet3d's data set once: one npz sample per file or object, timed"
    own_phases = (Phase.WRITE,)

    def validate(self, run: RunSpec) -> None:
        super().validate(run)
        # A data set that unet3d on the same ranks refuses at every --batch (two steps of one
        # sample per rank, AU leaving the first out) is refused before it is written. One that
        # only the default --batch refuses is not: training it with a smaller batch is usual.
        needed = 2 * run.ranks
        if run.params.samples < needed:
            raise SpecError(
                f"--samples {run.params.samples}: unet3d on {run.ranks} rank(s) needs {needed} "
                f"or more even at --batch 1 (two steps per rank: AU leaves the first out), and "
                f"{2 * TrainParams().batch * run.ranks} at its default --batch "
                f"{TrainParams().batch}"
            )

    def body(self, run: RunSpec, phase: Phase, who: RankInfo) -> Body:
        return PythonBody(loader.generate)

    def in_flight(self, run: RunSpec) -> int:
        return run.params.in_flight

    def memory(self, run: RunSpec, ranks_per_node: int) -> MemoryNeed:
        return self._datagen_memory(run, ranks_per_node)

    def describe(self, run: RunSpec) -> str:
        p = run.params
        return (
            f"{p.samples} npz sample(s), {format_bytes(self._mean_bytes(run))} mean "
            f"({p.scale} scale), {format_bytes(self.stored_bytes(run))} in all"
        )

    def reduce_metrics(self, per_rank: Sequence[dict[str, Any]]) -> dict[str, Any]:
        return {"samples_written": sum(int(m.get("samples_written", 0)) for m in per_rank)}


class Unet3d(_Unet3dBase):
    name = "unet3d"
    in_suites = True
    params = TrainParams
    summary = "MLPerf Storage's unet3d training: accelerator utilization (AU) of each rank"
    own_phases = (Phase.READ,)

    def validate(self, run: RunSpec) -> None:
        super().validate(run)
        if run.keep:
            raise SpecError(
                "--keep: unet3d only reads the data set, which stays as datagen left it; "
                "drop --keep"
            )
        p = run.params
        one_batch = p.batch * run.ranks
        if p.samples < one_batch:
            raise SpecError(
                f"a data set of {p.samples} sample(s) is smaller than one batch of --batch "
                f"{p.batch} for each of {run.ranks} rank(s): give --samples {one_batch} or more"
            )
        if steps_per_epoch(p.samples, p.batch, run.ranks) <= EXCLUDED_FIRST_STEPS:
            raise SpecError(
                f"--samples {p.samples} gives each rank one step per epoch, and AU leaves the "
                f"first step out: give --samples {2 * one_batch} or more"
            )

    def phases(self, run: RunSpec) -> tuple[Phase, ...]:
        return (Phase.READ,)

    def prepare(self, run: RunSpec) -> RunSpec | None:
        """memory:// lives in one process: each rank lays out the whole data set in its own
        store first (untimed); every other target reads what `hpcio train datagen` left."""
        return run if run.target.in_process else None

    def body(self, run: RunSpec, phase: Phase, who: RankInfo) -> Body:
        if phase is Phase.WRITE:
            return PythonBody(loader.generate)
        return PythonBody(loader.train)

    def in_flight(self, run: RunSpec) -> int:
        return run.params.read_threads * run.params.prefetch

    def _lane_bytes(self, run: RunSpec) -> int:
        """A reader lane's buffer: a transfer, or the largest sample read whole."""
        largest = self._largest(run)
        return min(run.params.transfer_bytes or largest, largest)

    def _lanes(self, run: RunSpec) -> int:
        """Lanes of one batch's fetch: no more than it has calls at once."""
        p = run.params
        at_once = p.batch if p.transfer_bytes is None else _transfers(run)
        return min(p.read_threads, at_once)

    def memory(self, run: RunSpec, ranks_per_node: int) -> MemoryNeed:
        """The reader lanes' buffers of the batches fetched ahead; on memory://, also the data
        set each rank holds, and the larger of those buffers and datagen's (which go first)."""
        p = run.params
        lanes, lane = self._lanes(run), self._lane_bytes(run)
        readers = p.prefetch * lanes * lane
        words = (
            f"{p.prefetch} batch(es) ahead x {lanes} reader(s) x {format_bytes(lane)} "
            f"({'a transfer' if p.transfer_bytes else 'the largest sample'})"
        )
        if run.target.in_process:
            generating = 2 * self._largest(run)
            return MemoryNeed(
                ranks_per_node * (data_set(run).total_bytes() + max(readers, generating)),
                f"{ranks_per_node} rank(s) x (the data set in its own memory:// store + the "
                f"larger of {words} and the largest sample twice while np.savez builds it)",
                self.lower["data"],
            )
        return MemoryNeed(
            ranks_per_node * readers, f"{ranks_per_node} rank(s) x {words}", self.lower["buffers"]
        )

    def _largest(self, run: RunSpec) -> int:
        return int(data_set(run).file_bytes().max())

    def stored_bytes(self, run: RunSpec) -> int:
        """Nothing written: training reads what datagen left (but on memory://, where each
        rank holds the data set it lays out itself)."""
        return data_set(run).total_bytes() if run.target.in_process else 0

    def moved_bytes(self, run: RunSpec, phase: Phase) -> int:
        """Bytes read in one iteration: every epoch reads the samples its steps cover, about
        the data set (the leftover samples aside)."""
        p = run.params
        if phase is Phase.WRITE:
            return data_set(run).total_bytes()
        used = steps_per_epoch(p.samples, p.batch, run.ranks) * p.batch * run.ranks
        return p.epochs * data_set(run).total_bytes() * used // p.samples

    def cache_facts(self, run: RunSpec) -> CacheFacts:
        return CacheFacts(
            data_set_bytes=data_set(run).total_bytes(),
            whole_data_per_node=True,
            read_back_from="samples of the whole data set, reshuffled every epoch",
            reads_local_data=True,
            rereads=True,
        )

    def describe(self, run: RunSpec) -> str:
        p = run.params
        steps = steps_per_epoch(p.samples, p.batch, run.ranks)
        return (
            f"{p.accelerator}, {p.samples} sample(s) ({p.scale} scale), batch {p.batch}, "
            f"{steps} step(s) x {p.epochs} epoch(s), {compute_seconds(p):g} s compute per "
            f"step, {p.read_threads} reader(s)"
        )

    def label(self, settings: dict[str, Any]) -> str:
        return f"unet3d {settings.get('accelerator', '')}".strip()

    def reduce_metrics(self, per_rank: Sequence[dict[str, Any]]) -> dict[str, Any]:
        """AU and throughput as DLIO reduces them (utilization.py), the I/O wait of every
        step of every rank, and the sizing figures."""
        per_rank = [m for m in per_rank if "epochs" in m]
        if not per_rank:
            return {}
        figures = [[EpochFigures(**e) for e in m["epochs"]] for m in per_rank]
        au = run_utilization(figures)
        waits = [w for m in per_rank for w in m["io_wait_s"]]
        first = per_rank[0]
        return {
            "au_percent": au.au_percent,
            "au_stdev_percent": au.au_stdev_percent,
            "au_percent_by_epoch": list(au.au_percent_by_epoch),
            "au_passed": au.passed,
            "samples_per_s": au.samples_per_s,
            "throughput_mib_per_s": au.mib_per_s,
            "io_wait": wait_summary(waits),
            "steps_per_epoch": first["steps_per_epoch"],
            "compute_time_s": first["compute_time_s"],
            "accelerators": len(per_rank),
        }


def _transfers(run: RunSpec) -> int:
    """Transfers in the largest sample."""
    largest = int(data_set(run).file_bytes().max())
    return -(-largest // (run.params.transfer_bytes or largest))
