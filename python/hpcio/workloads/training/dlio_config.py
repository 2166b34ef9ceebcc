"""A DLIO workload file (configs/workload/*.yaml) as hpcio train's settings for one training
(unet3d, cosmoflow, resnet50, bert): the options that change what storage sees, under DLIO's
names; the ones hpcio cannot emulate, or that differ from the training's own (its format,
samples per file, record length, loader, pass mark), refused by name."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from hpcio.errors import SpecError
from hpcio.workloads.training.dataset import SMALL_DIVISOR
from hpcio.workloads.training.model import TrainingModel


def _same(expected: object) -> Callable[[Any], str | None]:
    """A value hpcio emulates only as `expected`: a reason to refuse any other."""

    def check(value: Any) -> str | None:
        return None if value == expected else f"only {expected!r} is emulated"

    return check


def _none_above(limit: float) -> Callable[[Any], str | None]:
    def check(value: Any) -> str | None:
        return None if float(value) <= limit else f"only up to {limit:g} is emulated"

    return check


#: DLIO's key -> hpcio's field (None: read, but nothing of hpcio's changes with it).
_TAKEN: dict[str, str | None] = {
    "dataset.num_files_train": "samples",
    "dataset.record_length_resize": "resize_bytes",
    "dataset.record_length_bytes_resize": "resize_bytes",
    "reader.batch_size": "batch",
    "reader.read_threads": "read_threads",
    "reader.prefetch_size": "prefetch",
    "reader.transfer_size": "transfer_bytes",
    "train.epochs": "epochs",
    "train.computation_time": "compute_time_s",
    "train.computation_time_stdev": "compute_stdev_s",
    "train.total_training_steps": "training_steps",
    "reader.sample_shuffle": "sample_shuffle",
    "train.seed": "seed",
    # Where the data set is: --target says so.
    "dataset.data_folder": None,
    "dataset.file_prefix": None,
    "dataset.keep_files": None,
    # What is not storage: the model, the framework's name, logging, the host's threads.
    "model": None,
    "model.name": None,
    "model.type": None,
    "model.model_size": None,
    "model.model_size_bytes": None,
    "framework": None,
    "workflow.generate_data": None,
    "workflow.train": None,
    "workflow.debug": None,
    "workflow.profiling": None,
    "reader.computation_threads": None,
    "reader.dont_use_mmap": None,
    "reader.multiprocessing_context": None,
    # TensorFlow's shuffle buffer: records shuffled in memory, after the reads.
    "reader.shuffle_size": None,
    "train.seed_change_epoch": None,
    "output.folder": None,
    "output.log_file": None,
}

#: Fields whose DLIO value 0 (or below) means "not set".
_OFF_AT_ZERO = ("compute_stdev_s", "training_steps")


def _checked(model: TrainingModel) -> dict[str, Callable[[Any], str | None]]:
    """DLIO's key -> the values hpcio emulates for `model` (a reason to refuse any other)."""
    return {
        "dataset.format": _same(model.samples.format),
        "dataset.num_samples_per_file": _same(model.samples.samples_per_file),
        "dataset.num_subfolders_train": _none_above(1),
        "dataset.num_files_eval": _same(0),
        "dataset.compression": _same("none"),
        "reader.data_loader": _same(model.data_loader),
        "reader.file_shuffle": _same("seed"),
        "reader.read_type": _same("on_demand"),
        "metric.au": _same(model.pass_au_percent / 100),
        "workflow.evaluation": _same(False),
    }


_RECORD = ("dataset.record_length", "dataset.record_length_bytes")
_STDEV = ("dataset.record_length_stdev", "dataset.record_length_bytes_stdev")
#: What hpcio train leaves to another command: DLIO's checkpoints are `hpcio checkpoint`'s.
_ELSEWHERE = ("checkpoint", "workflow.checkpoint")


def _flat(tree: Mapping[str, Any], prefix: str = "") -> dict[str, Any]:
    found: dict[str, Any] = {}
    for key, value in tree.items():
        name = f"{prefix}{key}"
        if isinstance(value, Mapping):
            found.update(_flat(value, f"{name}."))
        else:
            found[name] = value
    return found


def read(path: str) -> dict[str, Any]:
    """The YAML file at `path` as a flat {"section.key": value} mapping.

    Raises:
        SpecError: no such file, not YAML, or PyYAML missing.
    """
    try:
        import yaml  # type: ignore[import-untyped]
    except ImportError:
        raise SpecError("--dlio-config needs PyYAML: pip install pyyaml") from None
    try:
        tree = yaml.safe_load(Path(path).read_text())
    except OSError as e:
        raise SpecError(f"--dlio-config {path}: {e.strerror or e}") from None
    except yaml.YAMLError as e:
        raise SpecError(f"--dlio-config {path}: not YAML ({str(e).splitlines()[0]})") from None
    if not isinstance(tree, Mapping):
        raise SpecError(f"--dlio-config {path}: not a DLIO workload (no sections)")
    return _flat(tree)


def settings(path: str, model: TrainingModel) -> dict[str, Any]:
    """hpcio train's settings (field -> value) for `model` from DLIO's workload file at
    `path`. A computation_time that is one of the model's accelerators' names it.

    Raises:
        SpecError: one line naming every option of the file hpcio cannot emulate, and why.
    """
    config = read(path)
    checked = _checked(model)
    found: dict[str, Any] = {}
    refused: list[str] = []
    for key, value in config.items():
        section = key.split(".", 1)[0]
        if key in _TAKEN:
            field = _TAKEN[key]
            # DLIO's "none" for a spread or a step count is 0 (or -1).
            off = field in _OFF_AT_ZERO and isinstance(value, int | float) and value <= 0
            if field is not None and not off:
                found[field] = value
        elif key in checked:
            why = checked[key](value)
            if why is not None:
                refused.append(f"{key}: {value!r} ({why})")
        elif key in _RECORD or key in _STDEV or section in _ELSEWHERE or key in _ELSEWHERE:
            continue
        elif section == "evaluation":
            refused.append(f"{key} (hpcio does not evaluate)")
        else:
            refused.append(f"{key} (unknown to hpcio)")
    scale = _scale(config, model, refused)
    if scale is not None:
        found["scale"] = scale
    if refused:
        raise SpecError(f"--dlio-config {path}: hpcio cannot emulate " + "; ".join(refused))
    named = [name for name, s in model.compute_s.items() if s == found.get("compute_time_s")]
    if named:
        found["accelerator"] = named[0]
    return found


def left_out(path: str) -> list[str]:
    """The options of the file `hpcio train` leaves to `hpcio checkpoint` (set, not false)."""
    return [
        key
        for key, value in read(path).items()
        if (key.split(".", 1)[0] in _ELSEWHERE or key in _ELSEWHERE) and value not in (False, 0)
    ]


def _scale(config: Mapping[str, Any], model: TrainingModel, refused: list[str]) -> str | None:
    """The --scale whose sample sizes are the file's record length and stdev: hpcio's
    samples are the model's (full) or those divided by 16 (small), nothing else yet. DLIO's
    own files give some lengths with a fraction (resnet50's 114660.07): within a byte is
    the same size, as hpcio's sizes are whole bytes."""
    record = next((config[k] for k in _RECORD if k in config), None)
    stdev = next((config[k] for k in _STDEV if k in config), None)
    if record is None and stdev is None:
        return None
    mean_bytes, stdev_bytes = model.samples.mean_bytes, model.samples.stdev_bytes
    for scale, divisor in (("full", 1), ("small", SMALL_DIVISOR)):
        mean_ok = record is None or abs(float(record) - mean_bytes / divisor) < 1
        stdev_ok = stdev is None or abs(float(stdev) - stdev_bytes / divisor) < 1
        if mean_ok and stdev_ok:
            return scale
    refused.append(
        f"dataset.record_length {record} / stdev {stdev} (only {model.name}'s, "
        f"{mean_bytes} / {stdev_bytes} bytes, or those divided by {SMALL_DIVISOR} with "
        "--scale small)"
    )
    return None
