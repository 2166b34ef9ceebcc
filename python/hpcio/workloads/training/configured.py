"""The shared base of the trainings DLIO configures (cosmoflow, resnet50, bert, and the next):
a new one is its TrainingModel (the numbers of its DLIO workload files) in a small module, the
two workloads `workloads(MODEL)` makes of it, and their registry entries. Its options are
unet3d's with the model's defaults; its loader, AU and data set are unet3d's (unet3d.py), and
files of several samples are streamed as DLIO's TFRecord reader streams them (records.py)."""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING, Any, cast

from hpcio.errors import SpecError
from hpcio.options import POSITIVE, choice, declared, option
from hpcio.units import format_bytes
from hpcio.workloads.contract import MemoryNeed
from hpcio.workloads.training.dataset import DataSet
from hpcio.workloads.training.model import ACCELERATORS, TrainingModel
from hpcio.workloads.training.records import TFRECORD_BUFFER_BYTES
from hpcio.workloads.training.unet3d import (
    DatagenParams,
    TrainParams,
    Unet3d,
    Unet3dDatagen,
    data_set,
    epoch_steps,
    handed_over_bytes,
    sample_count,
)

if TYPE_CHECKING:
    from hpcio.spec.model import RunSpec

#: What one entry of a rank's list of an epoch's reads (records.RecordRead, in its list)
#: holds at most: the object and three ints.
READ_ENTRY_BYTES = 160


def _samples_option(model: TrainingModel) -> Any:
    per_file = model.samples.samples_per_file
    if per_file > 1:
        words = f"files in the data set, {per_file:,} samples each"
    else:
        words = "samples (files or objects) in the data set"
    return option(
        "--samples", kind=POSITIVE, default=model.files,
        help=f"{words} (DLIO's num_files_train: {model.files:,})",
    )  # fmt: skip


def _base_option(field: str, default: Any) -> Any:
    """unet3d's option for `field`, with another default."""
    (base,) = (o for o in declared(TrainParams) if o.field == field)
    return option(base.flag, kind=base.kind, default=default, help=base.help,
                  aliases=base.aliases, unit=base.unit)  # fmt: skip


def _train_fields(model: TrainingModel) -> list[tuple[str, Any, Any]]:
    records = model.samples.samples_per_file > 1
    steps = model.training_steps
    return [
        ("accelerator", str, option(
            "--accelerator", kind=choice(*ACCELERATORS), default=model.accelerator,
            help=f"the simulated accelerator: its compute time per step "
            f"({model.compute_words()})",
        )),
        ("samples", int, _samples_option(model)),
        ("batch", int, option(
            "--batch", kind=POSITIVE, default=model.batch,
            help=f"samples per step and accelerator (DLIO's batch_size: {model.batch})",
        )),
        ("read_threads", int, option(
            "--read-threads", kind=POSITIVE, default=model.read_threads,
            help=f"files streamed at once (DLIO's read_threads: {model.read_threads}, "
            "TFRecordDataset's parallel reads)",
        ) if records else _base_option("read_threads", model.read_threads)),
        ("epochs", int, option(
            "--epochs", kind=POSITIVE, default=model.epochs,
            help=f"epochs (DLIO's: {model.epochs})",
        )),
        ("training_steps", int | None, option(
            "--training-steps", kind=POSITIVE, default=steps,
            aliases=("--total-training-steps",),
            help="DLIO's total_training_steps: at most this many steps an epoch "
            f"({model.name}'s: {steps})",
        ) if steps is not None else _base_option("training_steps", None)),
    ]  # fmt: skip


def _params(model: TrainingModel, base: type, suffix: str, fields: list) -> type:
    name = f"{model.name.capitalize()}{suffix}"
    made = dataclasses.make_dataclass(
        name, fields, bases=(base,), namespace={"MODEL": model},
        frozen=True, slots=True, kw_only=True,
    )  # fmt: skip
    # Pickled by name (a run spec crosses processes): it lives in the model's module.
    made.__module__ = f"hpcio.workloads.training.{model.name}"
    return made


class ConfiguredDatagen(Unet3dDatagen):
    """Writes a configured training's data set (its samples, its container)."""


class Configured(Unet3d):
    """A configured training of one sample per file: unet3d's, with the model's numbers."""


class RecordsTraining(Configured):
    """A configured training whose files hold many samples, streamed as DLIO's TFRecord
    reader streams them (records.py): `read_threads` files at once, each front to back in
    its read buffer, `prefetch` batches ahead."""

    def validate(self, run: RunSpec) -> None:
        super().validate(run)
        if run.params.samples < run.ranks:
            # DLIO then shards records instead of files, which hpcio does not emulate.
            raise SpecError(
                f"--samples {run.params.samples}: {self.name}'s files are streamed one rank "
                f"each; give at least one file a rank ({run.ranks})"
            )

    def _lanes(self, run: RunSpec) -> int:
        """The interleave's threads, each streaming one file."""
        return int(run.params.read_threads)

    def in_flight(self, run: RunSpec) -> int:
        """tf.data's prefetch_size batches, each streamed by the interleave's threads."""
        return int(run.params.prefetch) * self._lanes(run)

    def _lane_bytes(self, run: RunSpec) -> int:
        return int(run.params.transfer_bytes or TFRECORD_BUFFER_BYTES)

    def _reads_at_once(self, run: RunSpec) -> int:
        """The read calls of one file's run of records in a batch, the most the engine has
        in flight for a fetch (its lanes are no more than its largest batch of calls)."""
        p = run.params
        per_file_run = -(-p.batch // min(p.read_threads, p.samples))
        data = data_set(run)
        sizes = data.record_bytes() if isinstance(data, DataSet) else data.file_bytes()
        record = int(sizes.max())
        return max(1, min(self._lanes(run), -(-per_file_run * record // self._lane_bytes(run))))

    def memory(self, run: RunSpec, ranks_per_node: int) -> MemoryNeed:
        """What a rank holds: the read buffers of the batches prefetched (each fetch's lanes
        no more than its largest batch of calls), the one resized image DLIO's TensorFlow
        loader hands over a batch and the batch made of it, and the epoch's list of reads;
        on memory://, also the data set each rank holds."""
        p = run.params
        lanes, lane = self._reads_at_once(run), self._lane_bytes(run)
        readers = p.prefetch * lanes * lane
        words = f"{p.prefetch} batch(es) ahead x {lanes} read(s) x {format_bytes(lane)}"
        if p.loader == "dlio":
            handed = 2 * handed_over_bytes(p)
            readers += handed
            words += f" + the image handed over and its batch ({format_bytes(handed)})"
        steps = epoch_steps(p, sample_count(data_set(run)), run.ranks)
        listed = steps * (min(p.batch, p.read_threads) + 1) * READ_ENTRY_BYTES
        readers += listed
        words += f" + the epoch's {steps} step(s) of reads listed ({format_bytes(listed)})"
        if run.target.in_process:
            return MemoryNeed(
                ranks_per_node * (data_set(run).total_bytes() + readers),
                f"{ranks_per_node} rank(s) x (the data set in its own memory:// store + {words})",
                self.lower["data"],
            )
        return MemoryNeed(
            ranks_per_node * readers, f"{ranks_per_node} rank(s) x {words}", self.lower["buffers"]
        )


def workloads(
    model: TrainingModel, summary: str, datagen_summary: str
) -> tuple[type[Configured], type[ConfiguredDatagen]]:
    """The training and datagen workloads of `model` (registered as `<name>` and
    `<name>-datagen`), their params made of the model's defaults."""
    train_params = _params(model, TrainParams, "Params", _train_fields(model))
    datagen_params = _params(
        model, DatagenParams, "DatagenParams", [("samples", int, _samples_option(model))]
    )
    records = model.samples.samples_per_file > 1
    module = f"hpcio.workloads.training.{model.name}"
    title = model.name.capitalize()
    training = type(title, (RecordsTraining if records else Configured,), {
        "name": model.name, "params": train_params, "summary": summary, "__module__": module,
    })  # fmt: skip
    datagen = type(f"{title}Datagen", (ConfiguredDatagen,), {
        "name": f"{model.name}-datagen", "params": datagen_params, "summary": datagen_summary,
        "__module__": module,
    })  # fmt: skip
    return cast("type[Configured]", training), cast("type[ConfiguredDatagen]", datagen)
