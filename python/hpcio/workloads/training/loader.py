"""What each rank does in unet3d's phases: datagen writes its share of the npz samples through
the engine; training reads batches through engine plans in the background (the reader
threads: the GIL stays free) while the rank "computes", and times every step as DLIO does."""

from __future__ import annotations

import time
from collections import deque
from collections.abc import Sequence
from dataclasses import asdict

import numpy as np

from hpcio import _engine
from hpcio.workloads.contract import Background, Context
from hpcio.workloads.plans import Op, Plan, PlanBuilder, Runs
from hpcio.workloads.training.dataset import DataSet, aligned_buffer, npz_sample
from hpcio.workloads.training.utilization import (
    EXCLUDED_FIRST_STEPS,
    EpochTimes,
    epoch_figures,
)


def _data_set(context: Context) -> DataSet:
    from hpcio.workloads.training.unet3d import data_set

    return data_set(context.run)


def files_plan(
    opening: Op, moving: Op, keys: Sequence[str], lengths: Sequence[int],
    transfer: int | None, *, sync: bool = False,
) -> Plan:  # fmt: skip
    """Open, move whole and close each file. Without `transfer`, each file is one call (a
    whole-object GET or PUT) and the files make one batch, so the lanes (reader threads)
    each take a file, as DLIO's readers do; with it, each file in `transfer`-byte calls that
    the lanes share, file after file (the engine's batches need as many calls per file)."""
    builder = PlanBuilder()
    if transfer is None:
        builder.controls(opening, keys)
        for key, length in zip(keys, lengths, strict=True):
            builder.runs(moving, key, Runs.of(0, 1, 0), int(length))
        if sync:
            builder.controls(Op.SYNC, keys)
        return builder.controls(Op.CLOSE, keys).build()
    for key, length in zip(keys, lengths, strict=True):
        builder.control(opening, key)
        whole, rest = divmod(int(length), transfer)
        if whole:
            builder.runs(moving, key, Runs.of(0, whole, 0), transfer)
        if rest:
            builder.runs(moving, key, Runs.of(whole * transfer, 1, 0), rest)
        if sync:
            builder.control(Op.SYNC, key)
        builder.control(Op.CLOSE, key)
    return builder.build()


def generate(context: Context) -> None:
    """This rank's samples (every rank's on memory://, which lives in one process), each built
    by np.savez and written through the engine from those bytes."""
    run, who = context.run, context.who
    p = run.params
    data = _data_set(context)
    sizes = data.array_bytes()
    everyone = run.target.in_process
    mine = range(data.samples) if everyone else range(who.rank, data.samples, who.size)
    if not len(mine):
        return
    lanes = getattr(p, "in_flight", None) or p.read_threads
    out = aligned_buffer(int(data.file_bytes()[mine.start :: mine.step].max()))
    for index in mine:
        sample = npz_sample(data, index, int(sizes[index]), out)
        plan = files_plan(
            Op.OPEN_WRITE, Op.WRITE, [data.key(index)], [len(sample)], p.transfer_bytes,
            sync=run.fsync,
        )  # fmt: skip
        context.write_from(plan, sample, lanes)
    context.metrics["samples_written"] = len(mine)


def epoch_order(seed: int, epoch: int, samples: int) -> np.ndarray:
    """The samples in the order an epoch visits them: files (one sample each) shuffled with
    the seed, afresh every epoch (as PyTorch's DistributedSampler: seed and epoch)."""
    return np.random.default_rng([seed, epoch, 0x5348]).permutation(samples)


def rank_batches(order: np.ndarray, rank: int, ranks: int, steps: int, batch: int) -> np.ndarray:
    """The sample indices of this rank's batches (steps x batch): every rank takes every
    ranks-th sample of the epoch's order, so each sample read is read once across ranks."""
    used = order[: steps * batch * ranks]
    return used[rank::ranks].reshape(steps, batch)


def train(context: Context) -> None:
    from hpcio.workloads.training.unet3d import compute_seconds, steps_per_epoch

    run, who = context.run, context.who
    p = run.params
    data = _data_set(context)
    file_bytes = data.file_bytes()
    steps = steps_per_epoch(p.samples, p.batch, who.size)
    compute_ns = round(compute_seconds(p) * 1e9)
    epochs, waits = [], []

    # Each fetch's lanes get buffers for any sample: the executors are reused step to step.
    lane_bytes = min(p.transfer_bytes or int(file_bytes.max()), int(file_bytes.max()))

    def fetch(indices: np.ndarray) -> Background:
        keys = [data.key(int(i)) for i in indices]
        plan = files_plan(Op.OPEN_READ, Op.READ, keys, file_bytes[indices], p.transfer_bytes)
        return context.background(plan, p.read_threads, lane_bytes)

    for epoch in range(p.epochs):
        batches = rank_batches(epoch_order(run.seed, epoch, p.samples), who.rank, who.size,
                               steps, p.batch)  # fmt: skip
        loads, computes = [], []
        epoch_start = step_start = _engine.clock_ns()
        # The loader starts with the epoch (DLIO's first step pays for it): `prefetch`
        # batches in flight, a new one as each is taken.
        pending = deque(fetch(batches[s]) for s in range(min(p.prefetch, steps)))
        for step in range(steps):
            fetched = pending.popleft()
            fetched.wait()
            loaded = _engine.clock_ns()
            if fetched.failed():
                return  # the phase fails with the engine's message; no AU from half an epoch
            # The accelerator starts now; the next fetch is the data loader's work, done
            # while it computes, so it starts inside the compute window.
            if step + p.prefetch < steps:
                pending.append(fetch(batches[step + p.prefetch]))
            _sleep_until(loaded + compute_ns)
            done = _engine.clock_ns()
            loads.append((loaded - step_start) / 1e9)
            computes.append((done - loaded) / 1e9)
            step_start = done
        times = EpochTimes(
            wall_s=(step_start - epoch_start) / 1e9,
            load_s=loads,
            compute_s=computes,
            step_bytes=[int(file_bytes[b].sum()) for b in batches],
            batch=p.batch,
        )
        epochs.append(asdict(epoch_figures(times)))
        waits.extend(loads[EXCLUDED_FIRST_STEPS:])
    context.metrics.update(
        epochs=epochs,
        io_wait_s=waits,
        steps_per_epoch=steps,
        compute_time_s=compute_ns / 1e9,
    )


def _sleep_until(deadline_ns: int) -> None:
    """The emulated compute: the accelerator is busy until `deadline_ns` (clock_ns)."""
    left = deadline_ns - _engine.clock_ns()
    if left > 0:
        time.sleep(left / 1e9)
