"""The BERT training study 003 names, from DLIO's configs/workload/bert_v100.yaml (DLIO's only
BERT config; MLPerf Storage does not run it): 500 TFRecord files of 313,532 samples each
(record_length 2,500 B, no stdev), batch 48, one reader thread, 0.968 s of compute a step on
a v100, 1,000 training steps, DLIO's default pass mark (AU >= 90 %) and epochs (1). No
record_length_resize: DLIO hands a sample over at its record length. Its files are streamed
as resnet50's (records.py). Its checkpoints (4,034,713,312 B every 250 steps) are `hpcio
checkpoint`'s, not this workload's."""

from __future__ import annotations

from hpcio.workloads.training.configured import workloads
from hpcio.workloads.training.dataset import SampleKind
from hpcio.workloads.training.model import TrainingModel

SAMPLES = SampleKind("bert", 2_500, 0, "tfrecord", samples_per_file=313_532)
MODEL = TrainingModel(
    SAMPLES, {"v100": 0.968}, resize_bytes=0, pass_au_percent=90.0, accelerator="v100",
    files=500, batch=48, read_threads=1, epochs=1, training_steps=1000,
)  # fmt: skip
Bert, BertDatagen = workloads(
    MODEL,
    "DLIO's bert training (study 003): accelerator utilization (AU) of each rank",
    "writes bert's data set once: TFRecord files of 313,532 samples each, timed",
)
BertParams, BertDatagenParams = Bert.params, BertDatagen.params
