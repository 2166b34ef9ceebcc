"""MLPerf Storage's cosmoflow training emulation (DLIO's configs/workload/cosmoflow_*.yaml):
524,288 TFRecord files of one sample each (record_length 2,828,486 B, stdev 71,311 B), batch
1, 4 reader threads, 0.00551 s (a100) or 0.00350 s (h100) of compute a step, a pass at AU >=
70 %. The loader, AU and data set are unet3d's (unet3d.py), with these samples."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

from hpcio.options import POSITIVE, choice, option
from hpcio.workloads.training.dataset import SampleKind
from hpcio.workloads.training.unet3d import (
    DatagenParams,
    TrainingModel,
    TrainParams,
    Unet3d,
    Unet3dDatagen,
)

#: cosmoflow_a100.yaml and cosmoflow_h100.yaml: train.computation_time (batch 1).
COMPUTE_S = {"a100": 0.00551, "h100": 0.00350}
#: dataset.num_files_train (one sample per file).
DEFAULT_SAMPLES = 524_288
SAMPLES = SampleKind("cosmoflow", 2_828_486, 71_311, "tfrecord")
#: No record_length_resize: DLIO hands each sample over at its record length.
MODEL = TrainingModel(SAMPLES, COMPUTE_S, resize_bytes=0, pass_au_percent=70.0)


@dataclass(frozen=True, slots=True, kw_only=True)
class CosmoflowParams(TrainParams):
    MODEL: ClassVar[TrainingModel] = MODEL
    accelerator: str = option(
        "--accelerator", kind=choice(*COMPUTE_S), default="a100",
        help="the simulated accelerator: its compute time per step",
    )  # fmt: skip
    samples: int = option(
        "--samples", kind=POSITIVE, default=DEFAULT_SAMPLES, help="samples in the data set"
    )
    batch: int = option("--batch", kind=POSITIVE, default=1, help="samples per step")


@dataclass(frozen=True, slots=True, kw_only=True)
class CosmoflowDatagenParams(DatagenParams):
    MODEL: ClassVar[TrainingModel] = MODEL
    samples: int = option(
        "--samples", kind=POSITIVE, default=DEFAULT_SAMPLES, help="samples in the data set"
    )


class CosmoflowDatagen(Unet3dDatagen):
    name = "cosmoflow-datagen"
    params = CosmoflowDatagenParams
    summary = "writes cosmoflow's data set once: one TFRecord sample per file or object, timed"


class Cosmoflow(Unet3d):
    name = "cosmoflow"
    params = CosmoflowParams
    summary = "MLPerf Storage's cosmoflow training: accelerator utilization (AU) of each rank"

    def label(self, settings: dict[str, Any]) -> str:
        return f"cosmoflow {settings.get('accelerator', '')}".strip()
