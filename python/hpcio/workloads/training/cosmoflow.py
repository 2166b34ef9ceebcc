"""MLPerf Storage's cosmoflow training emulation (DLIO's configs/workload/cosmoflow_*.yaml):
524,288 TFRecord files of one sample each (record_length 2,828,486 B, stdev 71,311 B), batch
1, 4 reader threads, 0.00551 s (a100) or 0.00350 s (h100) of compute a step, a pass at AU >=
70 %. No record_length_resize: DLIO hands each sample over at its record length."""

from __future__ import annotations

from hpcio.workloads.training.configured import workloads
from hpcio.workloads.training.dataset import SampleKind
from hpcio.workloads.training.model import TrainingModel

SAMPLES = SampleKind("cosmoflow", 2_828_486, 71_311, "tfrecord")
MODEL = TrainingModel(
    SAMPLES, {"a100": 0.00551, "h100": 0.00350}, resize_bytes=0, pass_au_percent=70.0,
    files=524_288, batch=1, read_threads=4, epochs=5,
)  # fmt: skip
Cosmoflow, CosmoflowDatagen = workloads(
    MODEL,
    "MLPerf Storage's cosmoflow training: accelerator utilization (AU) of each rank",
    "writes cosmoflow's data set once: one TFRecord sample per file or object, timed",
)
CosmoflowParams, CosmoflowDatagenParams = Cosmoflow.params, CosmoflowDatagen.params
