"""The BERT training study 003 names, from DLIO's configs/workload/bert_v100.yaml (DLIO's only
BERT config; MLPerf Storage does not run it): 500 TFRecord files of 313,532 samples each
(record_length 2,500 B, no stdev), batch 48, one reader thread, 0.968 s of compute a step on
a v100, 1,000 training steps, DLIO's default pass mark (AU >= 90 %). Its files are streamed
as resnet50's (records.py). Its checkpoints (4,034,713,312 B every 250 steps) are `hpcio
checkpoint`'s, not this workload's."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

from hpcio.options import POSITIVE, choice, option
from hpcio.workloads.training.dataset import SampleKind
from hpcio.workloads.training.resnet50 import Resnet50, Resnet50Datagen
from hpcio.workloads.training.unet3d import DatagenParams, TrainingModel, TrainParams

#: bert_v100.yaml: train.computation_time (batch 48).
COMPUTE_S = {"v100": 0.968}
#: dataset.num_files_train.
DEFAULT_FILES = 500
SAMPLES = SampleKind("bert", 2_500, 0, "tfrecord", samples_per_file=313_532)
#: No record_length_resize: DLIO hands a sample over at its record length; no metric.au:
#: DLIO's default, 0.90.
MODEL = TrainingModel(SAMPLES, COMPUTE_S, resize_bytes=0, pass_au_percent=90.0)


def _files_option() -> Any:
    return option(
        "--samples", kind=POSITIVE, default=DEFAULT_FILES,
        help="files in the data set, 313,532 samples each (DLIO's num_files_train: 500)",
    )  # fmt: skip


@dataclass(frozen=True, slots=True, kw_only=True)
class BertParams(TrainParams):
    MODEL: ClassVar[TrainingModel] = MODEL
    accelerator: str = option(
        "--accelerator", kind=choice(*COMPUTE_S), default="v100",
        help="the simulated accelerator: its compute time per step",
    )  # fmt: skip
    samples: int = _files_option()
    batch: int = option("--batch", kind=POSITIVE, default=48, help="samples per step")
    read_threads: int = option(
        "--read-threads", kind=POSITIVE, default=1,
        help="files streamed at once (DLIO's read_threads: TFRecordDataset's parallel reads)",
    )  # fmt: skip
    epochs: int = option("--epochs", kind=POSITIVE, default=1, help="epochs (DLIO's: 1)")
    training_steps: int | None = option(
        "--training-steps", kind=POSITIVE, default=1000, aliases=("--total-training-steps",),
        help="DLIO's total_training_steps: at most this many steps an epoch (bert's: 1000)",
    )  # fmt: skip


@dataclass(frozen=True, slots=True, kw_only=True)
class BertDatagenParams(DatagenParams):
    MODEL: ClassVar[TrainingModel] = MODEL
    samples: int = _files_option()


class BertDatagen(Resnet50Datagen):
    name = "bert-datagen"
    params = BertDatagenParams
    summary = "writes bert's data set once: TFRecord files of 313,532 samples each, timed"


class Bert(Resnet50):
    name = "bert"
    params = BertParams
    summary = "DLIO's bert training (study 003): accelerator utilization (AU) of each rank"

    def label(self, settings: dict[str, Any]) -> str:
        return f"bert {settings.get('accelerator', '')}".strip()
