"""What one of DLIO's training workloads is: the numbers of its workload files
(configs/workload/<model>_<accelerator>.yaml) that change what storage sees, and the defaults
hpcio's options take from them."""

from __future__ import annotations

from dataclasses import dataclass

from hpcio.workloads.training.dataset import SampleKind

#: Every accelerator a training knows, the one --accelerator choice of `hpcio train` (its
#: option is declared once across the trainings); each training refuses the ones it has no
#: compute time for, by name (unet3d.compute_seconds).
ACCELERATORS = ("a100", "h100", "b200", "v100")


@dataclass(frozen=True, slots=True)
class TrainingModel:
    """A training workload from its DLIO configs (one per accelerator, differing only in
    train.computation_time)."""

    samples: SampleKind
    #: Seconds of compute per step on each accelerator (train.computation_time).
    compute_s: dict[str, float]
    #: Bytes a sample is handed over as (record_length_resize; 0: the record length).
    resize_bytes: int
    #: The AU a run passes at (metric.au; DLIO's default 0.90 where the file has none).
    pass_au_percent: float
    #: The accelerator the options default to.
    accelerator: str = "a100"
    #: dataset.num_files_train.
    files: int = 168
    #: reader.batch_size.
    batch: int = 7
    #: reader.read_threads.
    read_threads: int = 4
    #: train.epochs (DLIO's default: 1).
    epochs: int = 5
    #: train.total_training_steps (None: as many as the data set gives).
    training_steps: int | None = None

    @property
    def name(self) -> str:
        return self.samples.model

    @property
    def data_loader(self) -> str:
        """The DLIO data_loader whose shape hpcio's loader reproduces for these files:
        TensorFlow's TFRecordDataset streams files of many samples (records.py); files of
        one sample go through PyTorch's DataLoader (loader.py), also for cosmoflow, whose
        DLIO files name TensorFlow's loader, whose shape hpcio does not reproduce there."""
        return "tensorflow" if self.samples.samples_per_file > 1 else "pytorch"

    def compute_words(self) -> str:
        """The accelerators and their compute time per step, for a help line."""
        return ", ".join(f"{name} {seconds:g} s" for name, seconds in self.compute_s.items())
