"""MLPerf Storage's unet3d training emulation (DLIO's configs/workload/unet3d_*.yaml): every
rank is an accelerator that reads batches of npz samples through reader threads while it
"computes" (a sleep), and its accelerator utilization (AU) says whether the storage kept up.
`unet3d-datagen` writes the data set once; `unet3d` trains on it (run by `hpcio train`)."""

from __future__ import annotations

import dataclasses
import math
import os
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar

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
from hpcio.workloads.training.dataset import SCALES, UNET3D, DataSet, owns_key
from hpcio.workloads.training.found import FoundDataSet, find_dlio
from hpcio.workloads.training.model import ACCELERATORS, TrainingModel
from hpcio.workloads.training.utilization import (
    EXCLUDED_FIRST_STEPS,
    PASS_AU_PERCENT,
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
#: DLIO's unet3d configs: dataset.record_length_bytes_resize.
RESIZE_BYTES = 2_097_152
#: The loader shapes (--loader): DLIO 2.0.0's, and hpcio's own (before issue 26).
LOADERS = ("dlio", "hpcio")
#: DLIO's shuffle modes (common/enumerations.py, Shuffle).
SHUFFLES = ("off", "seed", "random")
#: np.load reads an npz member in calls of this many bytes (numpy's format.BUFFER_SIZE), so
#: DLIO's npz reader asks the storage for a sample this much at a time.
NUMPY_CHUNK_BYTES = 1 << 18


UNET3D_MODEL = TrainingModel(UNET3D, COMPUTE_S, RESIZE_BYTES, PASS_AU_PERCENT)


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
    MODEL: ClassVar[TrainingModel] = UNET3D_MODEL
    accelerator: str = option(
        "--accelerator", kind=choice(*ACCELERATORS), default="a100",
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
        help="DLIO's read_threads (4): with --loader dlio, the data loader's worker processes, "
        "each reading whole batches; with --loader hpcio, the reads in flight for each batch "
        "being fetched",
    )  # fmt: skip
    epochs: int = option("--epochs", kind=POSITIVE, default=5, help="epochs (DLIO's: 5)")
    compute_time_s: float | None = option(
        "--compute-time", kind=DURATION, default=None, aliases=("--computation-time",),
        help="seconds of emulated compute per step (DLIO's computation_time; default: the "
        "accelerator's, divided by 16 at --scale small)",
    )  # fmt: skip
    prefetch: int = option(
        "--prefetch", kind=POSITIVE, default=2, aliases=("--prefetch-size",),
        help="DLIO's prefetch_size (2): with --loader dlio, each worker is given "
        "ceil(prefetch / read-threads) batches at once (PyTorch's prefetch_factor), so "
        "read-threads x that many batches are in flight; with --loader hpcio, the batches "
        "fetched ahead of the one computed",
    )  # fmt: skip
    compute_stdev_s: float | None = option(
        "--compute-time-stdev", kind=DURATION, default=None,
        aliases=("--computation-time-stdev",),
        help="DLIO's computation_time_stdev: each step's compute drawn from a normal "
        "distribution of this spread around --compute-time (at least 0), seeded per rank "
        "(default: every step the same)",
    )  # fmt: skip
    training_steps: int | None = option(
        "--training-steps", kind=POSITIVE, default=None, aliases=("--total-training-steps",),
        help="DLIO's total_training_steps: at most this many steps an epoch (default: as many "
        "as the data set gives every rank, floor(samples / batch / ranks))",
    )  # fmt: skip
    sample_shuffle: str = option(
        "--sample-shuffle", kind=choice(*SHUFFLES), default="seed",
        help="DLIO's sample_shuffle, --loader dlio: seed (numpy's generator seeded with --seed "
        "before each epoch's shuffle, so runs repeat), random (unseeded: every run its own "
        "order) or off (the files in order)",
    )  # fmt: skip
    loader: str = option(
        "--loader", kind=choice(*LOADERS), default="dlio",
        help="dlio: DLIO 2.0.0's PyTorch loader: read-threads workers, each reading its "
        "batch's files one after another in numpy's 256 KiB reads, each sample handed over "
        "as a --record-length-resize array, and a barrier across ranks after every step; "
        "hpcio: each batch's files read at once by read-threads lanes in whole-file reads "
        "(or --transfer calls), prefetch batches ahead, no hand-over and no barrier (ranks "
        "step independently): hpcio's figures before issue 26",
    )  # fmt: skip
    resize_bytes: int | None = option(
        "--record-length-resize", kind=SIZE, unit="bytes", default=None,
        help="DLIO's record_length_resize: bytes of each sample handed from the loader to the "
        "accelerator, --loader dlio (default: unet3d's 2 MiB, divided by 16 at --scale small)",
    )  # fmt: skip
    transfer_bytes: int | None = _transfer_option()


@dataclass(frozen=True, slots=True, kw_only=True)
class DatagenParams:
    MODEL: ClassVar[TrainingModel] = UNET3D_MODEL
    scale: str = _scale_option()
    samples: int = _samples_option()
    transfer_bytes: int | None = _transfer_option()
    in_flight: int = option(
        "--in-flight", kind=POSITIVE, default=4, help="writes in flight per rank for each sample"
    )


def data_set(run: RunSpec) -> DataSet | FoundDataSet:
    """The files a run writes or reads. Training on a directory reads DLIO's data set when
    it finds one there (listed), else hpcio's: in DLIO's layout, or the flat one hpcio wrote
    before issue 26 when that is what the directory holds."""
    p = run.params
    ours = DataSet(p.scale, p.samples, run.seed, aligned=run.direct, kind=p.MODEL.samples)
    if not isinstance(p, TrainParams) or run.target.is_object_store:
        return ours
    found = find_dlio(run.target.path, p.samples)
    if found is not None:
        return found
    flat = dataclasses.replace(ours, flat=True)
    there = run.target.path
    if not os.path.exists(os.path.join(there, ours.key(0))) and os.path.exists(
        os.path.join(there, flat.key(0))
    ):
        return flat
    return ours


def refuse_missing_data_set(run: RunSpec) -> None:
    """A training run on a directory without the data set its options read (never made, or
    made with another --seed, --samples, --scale or --direct) would fail at its first open,
    after its header: say so at once, with the datagen line that makes it. For `hpcio train`
    and its dry run; a spec built before its data set is written is no error.

    Raises:
        SpecError: naming the data sets of this model the directory holds, if any.
    """
    data, name, target = data_set(run), run.workload.name, run.target
    if not isinstance(data, DataSet) or not isinstance(run.params, TrainParams):
        return  # DLIO's own files were found, or a datagen
    if target.is_object_store or target.in_process or not target.traits.lasting:
        return  # memory:// lays it out itself; an object store is not listed here
    if not os.path.isdir(target.path) or os.path.exists(os.path.join(target.path, data.key(0))):
        return  # a missing directory is the target probe's to say
    own = f"hpcio-{data.kind.model}-"
    others = sorted(n for n in os.listdir(target.path) if n.startswith(own) and owns_key(n))
    p = run.params
    datagen = "datagen" if name == "unet3d" else f"{name}-datagen"
    line = (
        f"hpcio train {datagen} --target {target.url} --scale {p.scale} --samples {p.samples} "
        f"--seed {run.seed}{' --direct' if run.direct else ''}"
        f"{f' -n {run.ranks}' if run.ranks > 1 else ''}"
    )
    held = f"holds {', '.join(others[:3])}, not" if others else "does not hold"
    raise SpecError(
        f"{target.url} {held} the data set {name} reads with these options ({data.folder}); "
        f"make it with: {line}"
    )


def sample_count(data: DataSet | FoundDataSet) -> int:
    """Samples in a data set (DLIO's found files hold one each)."""
    return data.sample_count if isinstance(data, DataSet) else data.samples


def compute_seconds(params: TrainParams) -> float:
    """The emulated compute per step: as given, else the accelerator's (÷16 at small)."""
    if params.compute_time_s is not None:
        return params.compute_time_s
    model = params.MODEL
    if params.accelerator not in model.compute_s:
        raise SpecError(
            f"--accelerator {params.accelerator}: {model.samples.model} has compute times for "
            f"{', '.join(model.compute_s)} only"
        )
    return model.compute_s[params.accelerator] / DataSet(params.scale, 1, 0).divisor


def record_bytes(params: TrainParams) -> float:
    """The configured mean sample size (DLIO's record_length), the figure DLIO multiplies its
    samples/s by for its throughput."""
    return params.MODEL.samples.mean_bytes / DataSet(params.scale, 1, 0).divisor


def handed_over_bytes(params: TrainParams) -> int:
    """Bytes of one sample as the loader hands it over (--loader dlio): DLIO's resized image,
    a square of int(sqrt(record_length_resize)) bytes a side."""
    resize = params.resize_bytes
    if resize is None:
        model = params.MODEL
        resize = model.resize_bytes or model.samples.mean_bytes
        resize //= DataSet(params.scale, 1, 0).divisor
    return math.isqrt(resize) ** 2


def prefetch_factor(params: TrainParams) -> int:
    """Batches each DLIO worker is given at once: ceil(prefetch_size / read_threads)
    (dlio_benchmark/data_loader/torch_data_loader.py)."""
    return -(-params.prefetch // params.read_threads)


def batches_in_flight(params: TrainParams) -> int:
    """Batches the loader has asked for ahead of the accelerator."""
    if params.loader == "dlio":
        return params.read_threads * prefetch_factor(params)
    return params.prefetch


def chunk_bytes(run: RunSpec) -> int | None:
    """Bytes per read call: --transfer, else numpy's chunk (--loader dlio on a file system,
    where np.load reads the open file) or the whole file (None: --loader hpcio, and object
    stores, whose readers fetch an object whole before np.load sees it)."""
    params = run.params
    if params.transfer_bytes is not None or params.loader != "dlio":
        return params.transfer_bytes
    return None if run.target.is_object_store else NUMPY_CHUNK_BYTES


def epoch_steps(params: TrainParams, samples: int, ranks: int) -> int:
    """Steps each rank takes an epoch: the data set's, at most --training-steps."""
    steps = steps_per_epoch(samples, params.batch, ranks)
    return min(steps, params.training_steps or steps)


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
        return f"{data_set(run).samples} sample(s) of {format_bytes(self._mean_bytes(run))} mean"

    def _mean_bytes(self, run: RunSpec) -> int:
        return int(data_set(run).file_bytes().mean())

    def _unit(self, run: RunSpec) -> str:
        return "file" if run.params.MODEL.samples.samples_per_file > 1 else "sample"

    def _writer(self, run: RunSpec) -> str:
        return "np.savez" if run.params.MODEL.samples.format == "npz" else "the TFRecord writer"

    def _datagen_memory(self, run: RunSpec, ranks_per_node: int) -> MemoryNeed:
        largest = int(data_set(run).file_bytes().max())
        return MemoryNeed(
            ranks_per_node * 2 * largest,
            f"{ranks_per_node} rank(s) x the largest {self._unit(run)} "
            f"({format_bytes(largest)}) and its array while {self._writer(run)} builds it",
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
        model = run.params.MODEL
        per_file = model.samples.samples_per_file

        def files_for(batch: int) -> int:
            # A file of many samples (records) is one rank's: at least a file a rank.
            least = run.ranks if per_file > 1 else 1
            return max(least, -(-2 * batch * run.ranks // per_file))

        needed = files_for(1)
        if run.params.samples < needed:
            raise SpecError(
                f"--samples {run.params.samples}: {model.name} on {run.ranks} rank(s) needs "
                f"{needed} or more even at --batch 1 (two steps per rank: AU leaves the first "
                f"out), and {files_for(model.batch)} at its default --batch {model.batch}"
            )

    def body(self, run: RunSpec, phase: Phase, who: RankInfo) -> Body:
        return PythonBody(loader.generate)

    def in_flight(self, run: RunSpec) -> int:
        return run.params.in_flight

    def memory(self, run: RunSpec, ranks_per_node: int) -> MemoryNeed:
        return self._datagen_memory(run, ranks_per_node)

    def describe(self, run: RunSpec) -> str:
        p = run.params
        kind = p.MODEL.samples
        what = (
            f"{kind.format} file(s) of {kind.samples_per_file} sample(s) each"
            if (kind.samples_per_file > 1)
            else f"{kind.format} sample(s)"
        )
        return (
            f"{p.samples} {what}, {format_bytes(self._mean_bytes(run))} mean "
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
        data = data_set(run)
        samples = sample_count(data)
        if isinstance(data, FoundDataSet) and run.direct:
            raise SpecError(
                f"--direct: DLIO's files in {data.folder} are not padded to "
                f"{format_bytes(DIRECT_ALIGN)}, which O_DIRECT needs"
            )
        one_batch = p.batch * run.ranks
        if samples < one_batch:
            raise SpecError(
                f"a data set of {samples} sample(s) is smaller than one batch of --batch "
                f"{p.batch} for each of {run.ranks} rank(s): give --samples {one_batch} or more"
            )
        most = steps_per_epoch(samples, p.batch, run.ranks)
        if p.training_steps is not None and p.training_steps > most:
            # DLIO: "Only have enough data for N steps but M wanted".
            raise SpecError(
                f"--training-steps {p.training_steps}: {samples} sample(s) give each of "
                f"{run.ranks} rank(s) {most} step(s) of --batch {p.batch} an epoch"
            )
        if p.sample_shuffle != "seed" and p.loader != "dlio":
            raise SpecError("--sample-shuffle is DLIO's loader's: give --loader dlio")
        if epoch_steps(p, samples, run.ranks) <= EXCLUDED_FIRST_STEPS:
            what = (
                f"the {samples} file(s) found in {data.folder} give"
                if isinstance(data, FoundDataSet)
                else f"--samples {samples} gives"
            )
            raise SpecError(
                f"{what} each rank one step per epoch, and AU leaves the first step out: give "
                f"--samples {2 * one_batch} or more"
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
        p = run.params
        return batches_in_flight(p) * self._lanes(run)

    def _lane_bytes(self, run: RunSpec) -> int:
        """A reader lane's buffer: a read call, or the largest sample read whole."""
        largest = self._largest(run)
        return min(chunk_bytes(run) or largest, largest)

    def _lanes(self, run: RunSpec) -> int:
        """Lanes of one batch's fetch: one for a DLIO worker, which reads its batch's files
        one after another; else no more than the batch has calls at once."""
        p = run.params
        if p.loader == "dlio":
            return 1
        at_once = p.batch if p.transfer_bytes is None else _transfers(run)
        return min(p.read_threads, at_once)

    def memory(self, run: RunSpec, ranks_per_node: int) -> MemoryNeed:
        """The reader lanes' buffers of the batches fetched ahead and the batch handed over;
        on memory://, also the data set each rank holds, and the larger of those buffers and
        datagen's (which go first)."""
        p = run.params
        lanes, lane = self._lanes(run), self._lane_bytes(run)
        ahead = batches_in_flight(p)
        readers = ahead * lanes * lane
        whole = chunk_bytes(run) is None
        words = (
            f"{ahead} batch(es) ahead x {lanes} reader(s) x {format_bytes(lane)} "
            f"({'the largest sample' if whole else 'a read call'})"
        )
        if p.loader == "dlio":
            handed = (p.batch + 1) * handed_over_bytes(p)
            readers += handed
            words += f" + the batch handed over ({format_bytes(handed)})"
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
        data = data_set(run)
        samples = sample_count(data)
        used = epoch_steps(p, samples, run.ranks) * p.batch * run.ranks
        return p.epochs * data.total_bytes() * used // samples

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
        data = data_set(run)
        steps = epoch_steps(p, sample_count(data), run.ranks)
        per_file = data.kind.samples_per_file if isinstance(data, DataSet) else 1
        return (
            f"{p.accelerator}, {_data_words(data, p.scale)}, batch {p.batch}, "
            f"{steps} step(s) x {p.epochs} epoch(s), {compute_seconds(p):g} s compute per "
            f"step, {_loader_words(p, per_file)}"
        )

    def label(self, settings: dict[str, Any]) -> str:
        return f"{self.name} {settings.get('accelerator', '')}".strip()

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
        dlio_mib = au.dlio_mib_per_s(first["record_bytes"])
        return {
            "au_percent": au.au_percent,
            "au_stdev_percent": au.au_stdev_percent,
            "au_percent_by_epoch": list(au.au_percent_by_epoch),
            "au_passed": au.au_percent >= self.params.MODEL.pass_au_percent,
            "samples_per_s": au.samples_per_s,
            "throughput_mib_per_s": au.mib_per_s,
            "throughput_mb_per_s": au.mib_per_s * (1 << 20) / 1e6,
            "dlio_samples_per_s": au.dlio_samples_per_s,
            "dlio_samples_stdev_per_s": au.dlio_samples_stdev_per_s,
            "dlio_io_mib_per_s": dlio_mib,
            "dlio_io_mb_per_s": dlio_mib * (1 << 20) / 1e6,
            "record_bytes": first["record_bytes"],
            # Samples, not files: resnet50's and bert's files hold many.
            "data_set_samples": first.get("data_set_samples"),
            "loader": first["loader"],
            "io_wait": wait_summary(waits),
            "dlio_step_sums": [_step_sums(m.get("step_times", [])) for m in per_rank],
            "steps_per_epoch": first["steps_per_epoch"],
            "compute_time_s": first["compute_time_s"],
            "accelerators": len(per_rank),
        }


def _step_sums(epochs: Sequence[dict[str, Any]]) -> list[dict[str, float]]:
    """A rank's epochs as the sums DLIO's statistics take of its step times (statscounter.py):
    the wall time, the first step's load and compute, the compute of the steps after it, and
    the steps; small, so the document keeps them for every rank (bench/train_au recomputes
    DLIO's figures from them)."""
    return [
        {
            "wall_s": e["wall_s"],
            "first_step_s": e["load_s"][0] + e["compute_s"][0],
            "compute_after_first_s": float(sum(e["compute_s"][EXCLUDED_FIRST_STEPS:])),
            "steps": len(e["compute_s"]),
        }
        for e in epochs
        if e["compute_s"]
    ]


def _data_words(data: DataSet | FoundDataSet, scale: str) -> str:
    if isinstance(data, FoundDataSet):
        return (
            f"DLIO's data set found in {data.folder}: {data.found} file(s), "
            f"{format_bytes(data.found_bytes)}, the first {data.samples} read "
            f"({format_bytes(data.total_bytes())})"
        )
    per_file = data.kind.samples_per_file
    if per_file > 1:
        return f"{data.samples} file(s) of {per_file} sample(s) ({scale} scale)"
    return f"{data.samples} sample(s) ({scale} scale)"


def _loader_words(p: TrainParams, per_file: int) -> str:
    if per_file > 1:
        what = "DLIO's TFRecord reader" if p.loader == "dlio" else "hpcio's loader"
        return (
            f"{what}: {p.read_threads} file(s) streamed at once, {p.prefetch} batch(es) ahead"
            + (f", {format_bytes(handed_over_bytes(p))} handed over a batch, a barrier a step"
               if p.loader == "dlio" else "")
        )  # fmt: skip
    if p.loader == "dlio":
        return (
            f"DLIO's loader: {p.read_threads} worker(s) x {prefetch_factor(p)} batch(es), "
            f"{format_bytes(handed_over_bytes(p))} handed over a sample, a barrier a step"
        )
    return f"hpcio's loader: {p.prefetch} batch(es) ahead x {p.read_threads} reader(s)"


def _transfers(run: RunSpec) -> int:
    """Transfers in the largest sample."""
    largest = int(data_set(run).file_bytes().max())
    return -(-largest // (run.params.transfer_bytes or largest))
