"""MLPerf Storage's resnet50 training emulation (DLIO's configs/workload/resnet50_*.yaml):
1,024 TFRecord files of 1,251 samples each (record_length 114,660 B, no stdev), batch 400,
8 reader threads, 0.435 s (a100) or 0.224 s (h100) of compute a step, a pass at AU >= 90 %.
Its files hold many samples, so its batches are read as DLIO's TFRecord reader streams them
(records.py): 8 files at a time, each front to back in 256 KiB calls (8 calls in flight, on
one file at a time: records.ranges_plan says why), prefetch_size batches ahead. AU and the
data set are unet3d's (unet3d.py), with these samples. DLIO's v100 config (batch 64) is left
out."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar

from hpcio.errors import SpecError
from hpcio.options import POSITIVE, choice, option
from hpcio.workloads.training.dataset import SampleKind
from hpcio.workloads.training.records import TFRECORD_BUFFER_BYTES
from hpcio.workloads.training.unet3d import (
    DatagenParams,
    TrainingModel,
    TrainParams,
    Unet3d,
    Unet3dDatagen,
)

if TYPE_CHECKING:
    from hpcio.spec.model import RunSpec

#: resnet50_a100.yaml and resnet50_h100.yaml: train.computation_time (batch 400).
COMPUTE_S = {"a100": 0.435, "h100": 0.224}
#: dataset.num_files_train.
DEFAULT_FILES = 1024
SAMPLES = SampleKind("resnet50", 114_660, 0, "tfrecord", samples_per_file=1251)
#: dataset.record_length_bytes_resize: the image DLIO hands over.
MODEL = TrainingModel(SAMPLES, COMPUTE_S, resize_bytes=150_528, pass_au_percent=90.0)


def _files_option() -> Any:
    return option(
        "--samples", kind=POSITIVE, default=DEFAULT_FILES,
        help="files in the data set, 1,251 samples each (DLIO's num_files_train: 1024)",
    )  # fmt: skip


@dataclass(frozen=True, slots=True, kw_only=True)
class Resnet50Params(TrainParams):
    MODEL: ClassVar[TrainingModel] = MODEL
    accelerator: str = option(
        "--accelerator", kind=choice(*COMPUTE_S), default="a100",
        help="the simulated accelerator: its compute time per step",
    )  # fmt: skip
    samples: int = _files_option()
    batch: int = option("--batch", kind=POSITIVE, default=400, help="samples per step")
    read_threads: int = option(
        "--read-threads", kind=POSITIVE, default=8,
        help="files streamed at once (DLIO's read_threads: TFRecordDataset's parallel reads)",
    )  # fmt: skip


@dataclass(frozen=True, slots=True, kw_only=True)
class Resnet50DatagenParams(DatagenParams):
    MODEL: ClassVar[TrainingModel] = MODEL
    samples: int = _files_option()


class Resnet50Datagen(Unet3dDatagen):
    name = "resnet50-datagen"
    params: type[DatagenParams] = Resnet50DatagenParams
    summary = "writes resnet50's data set once: TFRecord files of 1,251 samples each, timed"


class Resnet50(Unet3d):
    name = "resnet50"
    params: type[TrainParams] = Resnet50Params
    summary = "MLPerf Storage's resnet50 training: accelerator utilization (AU) of each rank"

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

    def label(self, settings: dict[str, Any]) -> str:
        return f"resnet50 {settings.get('accelerator', '')}".strip()
