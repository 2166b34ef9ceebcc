"""Accelerator utilization (AU) as MLPerf Storage computes it, through DLIO 2.0.0's statistics
(dlio_benchmark/utils/statscounter.py, compute_metrics_train, end_train and end_run):

- per rank and epoch: AU = the compute time of the steps after the first, divided by the
  epoch's wall time less the first step's whole time (its load and its compute); the wall
  time runs from the epoch's start to its last step's end, the per-step barriers included;
- per epoch: the mean of the ranks' AU;
- the run: the mean over epochs; it passes at AU >= 90 % (the unet3d configs' metric.au).

Samples/s and throughput, both ways:

- DLIO's: every step's samples over the rank's whole epoch (first step included), summed over
  ranks, the mean over epochs; its "MB/second" is that rate times the configured record
  length divided by 2^20 (MiB/s printed as MB/s), a nominal figure, not bytes read;
- hpcio's window: the samples of the steps after the first over the same time AU divides
  by; hpcio's throughput is the bytes the rank read in the epoch over the epoch's wall time,
  all of which the storage delivered inside that time, so it never exceeds what the storage
  delivered (bytes read ahead during the first step are not counted in a shorter window)."""

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
    #: Samples of the timed steps (hpcio's window).
    samples: int
    #: Bytes of the timed steps' batches (hpcio's window; kept for older documents' sake).
    bytes: int
    #: The epoch's wall time and steps, for DLIO's whole-epoch samples/s.
    wall_s: float = 0.0
    steps: int = 0
    batch: int = 0
    #: Every byte the rank read in the epoch (each within its wall time).
    read_bytes: int = 0


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
        wall_s=epoch.wall_s,
        steps=steps,
        batch=epoch.batch,
        read_bytes=int(sum(epoch.step_bytes)),
    )


@dataclass(frozen=True, slots=True)
class RunUtilization:
    au_percent: float
    au_stdev_percent: float
    au_percent_by_epoch: tuple[float, ...]
    #: hpcio's window: the steps after the first over the time AU divides by.
    samples_per_s: float
    #: Bytes read over the epochs' wall time, in MiB/s (2^20 bytes a second).
    mib_per_s: float
    #: DLIO's: every step over the whole epoch.
    dlio_samples_per_s: float = 0.0
    dlio_samples_stdev_per_s: float = 0.0

    @property
    def passed(self) -> bool:
        return self.au_percent >= PASS_AU_PERCENT

    def dlio_mib_per_s(self, record_bytes: float) -> float:
        """DLIO's "Training I/O Throughput (MB/second)": its samples/s times the configured
        record length, over 2^20 (so MiB/s, whatever its label says)."""
        return self.dlio_samples_per_s * record_bytes / (1 << 20)


def _per_second(amount: np.ndarray, seconds: np.ndarray) -> np.ndarray:
    return np.divide(amount, seconds, out=np.zeros_like(amount), where=seconds > 0)


def run_utilization(per_rank: Sequence[Sequence[EpochFigures]]) -> RunUtilization:
    """The run's figures from each rank's epochs (ranks x epochs, every rank the same
    number of epochs): AU averaged over ranks per epoch, then over epochs; samples/s and
    MiB/s summed over ranks per epoch, then averaged over epochs."""

    def each(field: str) -> np.ndarray:
        return np.array([[getattr(e, field) for e in epochs] for epochs in per_rank], float)

    au = each("au_percent")
    rate = _per_second(each("samples"), each("timed_s")).sum(axis=0)
    bandwidth = _per_second(each("read_bytes"), each("wall_s")).sum(axis=0)
    # DLIO 2.0.0: len(compute) / (end - start) * batch_size, every step, the whole epoch.
    dlio_rate = _per_second(each("steps") * each("batch"), each("wall_s")).sum(axis=0)
    by_epoch = au.mean(axis=0)
    return RunUtilization(
        au_percent=float(by_epoch.mean()),
        au_stdev_percent=float(by_epoch.std()),
        au_percent_by_epoch=tuple(float(a) for a in by_epoch),
        samples_per_s=float(rate.mean()),
        mib_per_s=float(bandwidth.mean() / (1 << 20)),
        dlio_samples_per_s=float(dlio_rate.mean()),
        dlio_samples_stdev_per_s=float(dlio_rate.std()),
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
