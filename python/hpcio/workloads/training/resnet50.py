"""MLPerf Storage's resnet50 training emulation (DLIO's configs/workload/resnet50_*.yaml):
1,024 TFRecord files of 1,251 samples each (record_length 114,660 B, no stdev), batch 400,
8 reader threads, 0.435 s (a100) or 0.224 s (h100) of compute a step, a pass at AU >= 90 %,
each sample handed over as a 150,528 B image (record_length_bytes_resize). Its files hold many
samples, so its batches are read as DLIO's TFRecord reader streams them (records.py): 8 files
at a time, each front to back in 256 KiB calls, prefetch_size batches ahead. DLIO's v100
config (batch 64) is left out."""

from __future__ import annotations

from hpcio.workloads.training.configured import workloads
from hpcio.workloads.training.dataset import SampleKind
from hpcio.workloads.training.model import TrainingModel

SAMPLES = SampleKind("resnet50", 114_660, 0, "tfrecord", samples_per_file=1251)
MODEL = TrainingModel(
    SAMPLES, {"a100": 0.435, "h100": 0.224}, resize_bytes=150_528, pass_au_percent=90.0,
    files=1024, batch=400, read_threads=8, epochs=5,
)  # fmt: skip
Resnet50, Resnet50Datagen = workloads(
    MODEL,
    "MLPerf Storage's resnet50 training: accelerator utilization (AU) of each rank",
    "writes resnet50's data set once: TFRecord files of 1,251 samples each, timed",
)
Resnet50Params, Resnet50DatagenParams = Resnet50.params, Resnet50Datagen.params
