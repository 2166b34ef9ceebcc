"""mdtest's rate arithmetic (mdtest.c: updateResult, summarize_results_rank0). A rank's rate in
a phase is its items over its time from the barrier before the phase to the barrier after
it; an iteration's rate is the slowest rank's rate times the ranks (mdtest's SUMMARY rate);
the summary over iterations is their max, min, mean and sample standard deviation. The tree's
phases are rank 0's alone: one tree's directories over rank 0's time, as mdtest counts them."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

#: mdtest's phases, in the order an iteration makes them; a key names its metrics
#: (`file_create_ops_per_s`) and a title its row ("File creation", as mdtest prints it).
PHASES: tuple[tuple[str, str], ...] = (
    ("tree_create", "Tree creation"),
    ("dir_create", "Directory creation"),
    ("dir_stat", "Directory stat"),
    ("dir_remove", "Directory removal"),
    ("file_create", "File creation"),
    ("file_stat", "File stat"),
    ("file_list", "File list"),
    ("file_read", "File read"),
    ("file_remove", "File removal"),
    ("tree_remove", "Tree removal"),
)
TREE_PHASES = ("tree_create", "tree_remove")


def iteration_rate(phase: str, items: Sequence[int], seconds: Sequence[float]) -> float:
    """Operations per second of one iteration's `phase`, from each rank's items and time (in
    rank order). 0 where no rank did any."""
    if phase in TREE_PHASES:
        return items[0] / seconds[0] if items[0] and seconds[0] > 0 else 0.0
    if not any(items):
        return 0.0
    slowest = min(n / s if s > 0 else math.inf for n, s in zip(items, seconds, strict=True))
    return len(items) * slowest


@dataclass(frozen=True, slots=True)
class RateSummary:
    """mdtest's SUMMARY line of one phase, ops/s over the iterations."""

    max: float
    min: float
    mean: float
    #: Sample standard deviation (n - 1), 0 for a single iteration (as mdtest prints it).
    stddev: float


def summarize(rates: Sequence[float]) -> RateSummary:
    mean = sum(rates) / len(rates)
    if len(rates) < 2:
        return RateSummary(max(rates), min(rates), mean, 0.0)
    variance = sum((r - mean) ** 2 for r in rates) / (len(rates) - 1)
    return RateSummary(max(rates), min(rates), mean, math.sqrt(variance))
