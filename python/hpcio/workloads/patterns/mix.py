"""A mixed phase (fio's rwmixread, elbencho's --rwmixpct, warp's mixed): each of a rank's
transfers in its own files is drawn a read or a write from a seeded generator, so that over
the phase the share of reads is the asked percentage (as fio draws each I/O's direction), the
same draw for the same seed and rank. Reads and writes interleave in the same files: each
side goes through a file in order from its start (the writes rewrite the data the untimed
layout wrote, the same bytes, so reads may be verified whatever the writes have reached)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np

from hpcio.workloads.plans import Op, Plan, PlanBuilder

if TYPE_CHECKING:
    from hpcio.spec.model import RunSpec

#: Names the mix's stream of the seeded generator ("mixed"), apart from the payload's and the
#: random order's.
_MIX_STREAM = 0x6D69786564


def mixed(run: RunSpec) -> bool:
    """The run's timed phase is mixed (--rwmix-read)."""
    return getattr(run.params, "rwmix_read_pct", None) is not None


def draws(seed: int, rank: int, files: int, per_file: int, read_pct: int) -> np.ndarray:
    """Which transfers read (True) and which write, as [file, transfer in file in order]."""
    generator = np.random.default_rng([seed % (1 << 64), rank, _MIX_STREAM])
    return generator.random((files, per_file)) < read_pct / 100


def mixed_plan(
    run: RunSpec,
    keys: Sequence[str],
    per_file: int,
    rank: int,
    shuffle: tuple[int, int, int] | None = None,
) -> Plan:
    """Open the keys that are written for writing, then those that are read for reading (a
    key that is both has two handles), the drawn transfers of each key as runs of one side,
    fsync with --fsync, close each key once."""
    p = run.params
    reads = draws(run.seed, rank, len(keys), per_file, p.rwmix_read_pct)
    builder = PlanBuilder()
    written = [k for k, r in zip(keys, reads, strict=True) if not r.all()]
    builder.controls(Op.OPEN_WRITE, written)
    builder.controls(Op.OPEN_READ, [k for k, r in zip(keys, reads, strict=True) if r.any()])
    for key, read in zip(keys, reads, strict=True):
        builder.sides(key, *side_runs(read), length=p.transfer_bytes, writer=rank)
    if run.fsync:
        builder.controls(Op.SYNC, written)
    builder.controls(Op.CLOSE, list(keys))
    return builder.build(shuffle)


def side_runs(read: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The drawn sides of one file's transfers as runs: (reads or not, the first transfer's
    index in its side's walk through the file, transfers in the run)."""
    n = len(read)
    starts = np.flatnonzero(np.r_[True, read[1:] != read[:-1]]) if n else np.zeros(0, np.int64)
    counts = np.diff(np.r_[starts, n])
    reads_before = np.cumsum(read) - read
    is_read = read[starts]
    first = np.where(is_read, reads_before[starts], starts - reads_before[starts])
    return is_read, first.astype(np.uint64), counts.astype(np.uint64)
