"""Accelerator utilization (AU) as MLPerf Storage computes it, through DLIO's statistics
(dlio_benchmark/utils/statscounter.py, compute_metrics_train and end_run):

- per rank and epoch: AU = the compute time of the steps after the first, divided by the
  epoch's wall time less the first step's whole time (its load and its compute);
- per epoch: the mean of the ranks' AU;
- the run: the mean over epochs; it passes at AU >= 90 % (the unet3d configs' metric.au).

Throughput follows the same window: each rank's samples (and bytes) after the first step over
that rank's same time, summed over ranks, then the mean over epochs. DLIO counts `steps - 2`
samples there and multiplies by the nominal record length, printing MiB/s as "MB/second";
hpcio counts the steps it times (steps - 1) and the bytes it read, in MiB/s."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

#: MLPerf Storage's pass mark (unet3d configs: metric.au: 0.90).
PASS_AU_PERCENT = 90.0
#: DLIO's metric_exclude_start_steps: the first step carries the loader's start.
EXCLUDED_FIRST_STEPS = 1
#: Edges of the per-step I/O-wait histogram, in seconds (the last bin is open).
WAIT_EDGES_S = (0.0, 1e-4, 1e-3, 5e-3, 0.01, 0.05, 0.1, 0.5, 1.0, 5.0, 10.0)
WAIT_QUANTILES = (0.5, 0.9, 0.99)


@dataclass(frozen=True, slots=True)
class EpochTimes:
    """One rank's epoch: its wall time and, step by step, the time waiting for the batch and
    the time computing on it, all in seconds; bytes read in each step."""

    wall_s: float
    load_s: Sequence[float]
    compute_s: Sequence[float]
    step_bytes: Sequence[int]
    batch: int

    def __post_init__(self) -> None:
        if not len(self.load_s) == len(self.compute_s) == len(self.step_bytes):
            raise ValueError("load, compute and bytes need one entry per step")


@dataclass(frozen=True, slots=True)
class EpochFigures:
    au_percent: float
    #: Seconds the AU divides by: the wall time less the excluded steps' time.
    timed_s: float
    samples: int
    bytes: int


def epoch_figures(epoch: EpochTimes) -> EpochFigures:
    """One rank's AU, samples and bytes for one epoch, the first step left out.

    Raises:
        ValueError: an epoch with no step after the excluded one(s): no AU can be computed.
    """
    skip = EXCLUDED_FIRST_STEPS
    steps = len(epoch.compute_s)
    if steps <= skip:
        raise ValueError(
            f"an epoch of {steps} step(s) leaves none after the first: give more --samples"
        )
    excluded_s = sum(epoch.load_s[:skip]) + sum(epoch.compute_s[:skip])
    timed_s = epoch.wall_s - excluded_s
    compute_s = float(sum(epoch.compute_s[skip:]))
    au = 100.0 * compute_s / timed_s if timed_s > 0 else 0.0
    return EpochFigures(
        au_percent=au,
        timed_s=timed_s,
        samples=(steps - skip) * epoch.batch,
        bytes=int(sum(epoch.step_bytes[skip:])),
    )


@dataclass(frozen=True, slots=True)
class RunUtilization:
    au_percent: float
    au_stdev_percent: float
    au_percent_by_epoch: tuple[float, ...]
    samples_per_s: float
    mib_per_s: float

    @property
    def passed(self) -> bool:
        return self.au_percent >= PASS_AU_PERCENT


def run_utilization(per_rank: Sequence[Sequence[EpochFigures]]) -> RunUtilization:
    """The run's figures from each rank's epochs (ranks x epochs, every rank the same
    number of epochs): AU averaged over ranks per epoch, then over epochs; samples/s and
    MiB/s summed over ranks per epoch, then averaged over epochs."""
    au = np.array([[e.au_percent for e in epochs] for epochs in per_rank], dtype=float)
    rate = np.array(
        [[e.samples / e.timed_s if e.timed_s > 0 else 0.0 for e in epochs]
         for epochs in per_rank], dtype=float,
    )  # fmt: skip
    bandwidth = np.array(
        [[e.bytes / e.timed_s if e.timed_s > 0 else 0.0 for e in epochs]
         for epochs in per_rank], dtype=float,
    )  # fmt: skip
    by_epoch = au.mean(axis=0)
    return RunUtilization(
        au_percent=float(by_epoch.mean()),
        au_stdev_percent=float(by_epoch.std()),
        au_percent_by_epoch=tuple(float(a) for a in by_epoch),
        samples_per_s=float(rate.sum(axis=0).mean()),
        mib_per_s=float(bandwidth.sum(axis=0).mean() / (1 << 20)),
    )


def wait_summary(waits_s: Sequence[float]) -> dict[str, object]:
    """Percentiles, mean and max of the per-step I/O waits, and their histogram."""
    waits = np.asarray(waits_s, dtype=float)
    if not len(waits):
        return {"steps": 0}
    edges = np.array([*WAIT_EDGES_S, max(float(waits.max()), WAIT_EDGES_S[-1]) + 1.0])
    counts, _ = np.histogram(waits, bins=edges)
    return {
        "steps": len(waits),
        "mean_s": float(waits.mean()),
        "max_s": float(waits.max()),
        **{f"p{round(q * 100)}_s": float(np.quantile(waits, q)) for q in WAIT_QUANTILES},
        "histogram": {"edges_s": list(WAIT_EDGES_S), "counts": [int(c) for c in counts]},
    }
