"""What each rank does in unet3d's phases: datagen writes its share of the npz samples through
the engine; training reads batches through engine plans in the background (the reader
threads: the GIL stays free) while the rank "computes", and times every step as DLIO does."""

from __future__ import annotations

import math
import os
import time
from collections import deque
from collections.abc import Callable, Sequence
from dataclasses import asdict

import numpy as np

from hpcio.workloads.contract import Background, Context
from hpcio.workloads.native import _engine
from hpcio.workloads.plans import Op, Plan, PlanBuilder, Runs
from hpcio.workloads.training.dataset import (
    TRAIN_FOLDER,
    VALID_FOLDER,
    DataSet,
    aligned_buffer,
    npz_sample,
)
from hpcio.workloads.training.found import FoundDataSet
from hpcio.workloads.training.records import (
    TFRECORD_BUFFER_BYTES,
    RecordRead,
    ranges_plan,
    rank_files,
    stream_reads,
)
from hpcio.workloads.training.utilization import (
    EXCLUDED_FIRST_STEPS,
    EpochTimes,
    epoch_figures,
)


def _data_set(context: Context) -> DataSet | FoundDataSet:
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
    assert isinstance(data, DataSet), "datagen writes hpcio's data set"
    if not run.target.is_object_store:
        # DLIO reads train/ and needs valid/ to exist (the evaluation's, empty here).
        for folder in (TRAIN_FOLDER, VALID_FOLDER):
            os.makedirs(context.path(f"{data.folder}/{folder}"), exist_ok=True)
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
    """hpcio's loader: the samples in the order an epoch visits them, files (one sample each)
    shuffled with the seed, afresh every epoch (as PyTorch's DistributedSampler)."""
    return np.random.default_rng([seed, epoch, 0x5348]).permutation(samples)


def rank_batches(order: np.ndarray, rank: int, ranks: int, steps: int, batch: int) -> np.ndarray:
    """hpcio's loader: the sample indices of this rank's batches (steps x batch): every rank
    takes every ranks-th sample of the epoch's order, so each sample is read once across
    ranks."""
    used = order[: steps * batch * ranks]
    return used[rank::ranks].reshape(steps, batch)


def dlio_batches(seed: int, epoch: int, samples: int, rank: int, ranks: int, steps: int,
                 batch: int, shuffle: str = "seed") -> np.ndarray:  # fmt: skip
    """DLIO's loader (its dlio_sampler): the list of samples shuffled in place, once more
    each epoch, after seeding numpy's global generator with the seed (sample_shuffle: seed;
    random: unseeded; off: no shuffle), each rank taking a contiguous share of it (samples //
    ranks), batch after batch. Unseeded, each rank shuffles its own way, as in DLIO: a sample
    may then be read by two ranks in an epoch, or by none."""
    order = np.arange(samples)
    if shuffle == "random":
        np.random.default_rng().shuffle(order)
    elif shuffle == "seed":
        for _ in range(epoch + 1):
            np.random.RandomState(seed).shuffle(order)
    share = samples // ranks
    mine = order[rank * share : (rank + 1) * share]
    return mine[: steps * batch].reshape(steps, batch)


class _HpcioLoader:
    """`ahead` batches in flight, each read by its own lanes; a new one as each is taken."""

    def __init__(self, fetch: Callable[[int], Background], steps: int, ahead: int) -> None:
        self._fetch, self._steps, self._ahead = fetch, steps, ahead
        self._pending = deque(fetch(s) for s in range(min(ahead, steps)))

    def take(self, step: int) -> Background:
        fetched = self._pending.popleft()
        fetched.wait()
        return fetched

    def taken(self, step: int) -> None:
        # The next fetch is the loader's work, done while the accelerator computes.
        if step + self._ahead < self._steps:
            self._pending.append(self._fetch(step + self._ahead))


class _DlioLoader:
    """PyTorch's DataLoader as DLIO sets it up: `workers` workers, batch i given to worker
    i % workers, `factor` batches given to each at the start and one more as each is taken;
    a worker reads its batches one after another. A worker's next batch starts when the
    accelerator takes the one before it (at once when the worker has one batch at a time,
    DLIO's unet3d default; with more, the batch waits until then)."""

    def __init__(self, fetch: Callable[[int], Background], steps: int, workers: int,
                 factor: int) -> None:  # fmt: skip
        self._fetch, self._steps, self._workers = fetch, steps, workers
        self._given: list[deque[int]] = [deque() for _ in range(workers)]
        self._reading: list[Background | None] = [None] * workers
        self._next = 0
        for _ in range(min(workers * factor, steps)):
            self._give()

    def _give(self) -> None:
        worker = self._next % self._workers
        self._given[worker].append(self._next)
        self._next += 1
        self._start(worker)

    def _start(self, worker: int) -> None:
        if self._reading[worker] is None and self._given[worker]:
            self._reading[worker] = self._fetch(self._given[worker].popleft())

    def take(self, step: int) -> Background:
        worker = step % self._workers
        fetched = self._reading[worker]
        assert fetched is not None, "batches are taken in order"
        fetched.wait()
        self._reading[worker] = None
        return fetched

    def taken(self, step: int) -> None:
        self._start(step % self._workers)
        if self._next < self._steps:
            self._give()


class _HandOver:
    """DLIO's hand-over of a batch (--loader dlio): each sample's reader returns the same
    resized image (record_length_resize bytes, random), collated into the batch the
    accelerator receives: one copy of batch x that many bytes a step."""

    def __init__(self, batch: int, sample_bytes: int, seed: int) -> None:
        side = math.isqrt(sample_bytes)
        rng = np.random.default_rng([seed, 0x52455A])  # "REZ": apart from payloads
        self._image = rng.integers(0, 255, (side, side), dtype=np.uint8)
        self._batch = np.empty((batch, side, side), np.uint8)

    def collate(self) -> None:
        self._batch[:] = self._image


def train(context: Context) -> None:
    from hpcio.workloads.training.unet3d import (
        batches_in_flight,
        chunk_bytes,
        compute_seconds,
        epoch_steps,
        handed_over_bytes,
        prefetch_factor,
        record_bytes,
    )

    run, who = context.run, context.who
    p = run.params
    dlio = p.loader == "dlio"
    data = _data_set(context)
    file_bytes = data.file_bytes()
    # Files of several samples are streamed as DLIO's TFRecord reader streams them.
    per_file = data.kind.samples_per_file if isinstance(data, DataSet) else 1
    samples = data.samples * per_file
    steps = epoch_steps(p, samples, who.size)
    compute_ns = round(compute_seconds(p) * 1e9)
    # DLIO draws each step's compute from N(computation_time, computation_time_stdev).
    spread = np.random.default_rng([run.seed, who.rank, 0x434F4D50])  # "COMP"
    stdev_ns = (p.compute_stdev_s or 0.0) * 1e9
    chunk = chunk_bytes(run)
    # DLIO's workers each read their batch's files one after another; hpcio's lanes share it.
    lanes = 1 if dlio and per_file == 1 else p.read_threads
    # Each fetch's lanes get buffers for any sample: the executors are reused step to step.
    lane_bytes = min(chunk or int(file_bytes.max()), int(file_bytes.max()))
    if per_file > 1:
        assert isinstance(data, DataSet)
        record_sizes = data.record_bytes()
        file_keys = data.keys()
        mine = rank_files(data.samples, who.rank, who.size)
        lane_bytes = p.transfer_bytes or TFRECORD_BUFFER_BYTES
    # DLIO's barrier after every step stands for the gradients' allreduce.
    step_barrier = dlio and who.size > 1  # DLIO waits for every rank after each step
    # DLIO's TensorFlow loader maps its parse over whole batches: one resized image a batch.
    handed = p.batch if per_file == 1 else 1
    hand_over = _HandOver(handed, handed_over_bytes(p), run.seed) if dlio else None
    epochs, waits, timings = [], [], []

    for epoch in range(p.epochs):
        step_reads: list[list[RecordRead]] = []
        if per_file > 1:
            step_reads = [
                stream_reads(mine, per_file, p.read_threads, (epoch * steps + s) * p.batch, p.batch)
                for s in range(steps)
            ]
            batches = np.empty((steps, 0), np.int64)
            step_bytes = [sum(r.count * int(record_sizes[r.file]) for r in reads)
                          for reads in step_reads]  # fmt: skip
        else:
            if dlio:
                batches = dlio_batches(run.seed, epoch, samples, who.rank, who.size, steps,
                                       p.batch, p.sample_shuffle)  # fmt: skip
            else:
                batches = rank_batches(epoch_order(run.seed, epoch, samples), who.rank,
                                       who.size, steps, p.batch)  # fmt: skip
            step_bytes = [int(file_bytes[b].sum()) for b in batches]

        def fetch(step: int, batches: np.ndarray = batches,
                  reads: list[list[RecordRead]] = step_reads) -> Background:  # fmt: skip
            if per_file > 1:
                plan = ranges_plan(file_keys, reads[step], record_sizes, lane_bytes)
                return context.background(plan, lanes, lane_bytes)
            indices = batches[step]
            keys = [data.key(int(i)) for i in indices]
            plan = files_plan(Op.OPEN_READ, Op.READ, keys, file_bytes[indices], chunk)
            return context.background(plan, lanes, lane_bytes)

        loads, computes = [], []
        epoch_start = step_start = _engine.clock_ns()
        # The loader starts with the epoch (DLIO's first step pays for it); tf.data's
        # prefetches prefetch_size batches, each streamed by the interleave's threads.
        ahead = p.prefetch if per_file > 1 else batches_in_flight(p)
        feeder: _HpcioLoader | _DlioLoader = (
            _DlioLoader(fetch, steps, p.read_threads, prefetch_factor(p))
            if dlio and per_file == 1
            else _HpcioLoader(fetch, steps, ahead)
        )
        for step in range(steps):
            fetched = feeder.take(step)
            if fetched.failed():
                return  # the phase fails with the engine's message; no AU from half an epoch
            if hand_over is not None:
                hand_over.collate()
            loaded = _engine.clock_ns()
            feeder.taken(step)
            step_ns = compute_ns
            if stdev_ns:
                step_ns = max(0, round(spread.normal(compute_ns, stdev_ns)))
            _sleep_until(loaded + step_ns)
            done = _engine.clock_ns()
            loads.append((loaded - step_start) / 1e9)
            computes.append((done - loaded) / 1e9)
            if step_barrier:
                context.barrier()
            step_start = _engine.clock_ns()
        times = EpochTimes(
            wall_s=(step_start - epoch_start) / 1e9,
            load_s=loads,
            compute_s=computes,
            step_bytes=step_bytes,
            batch=p.batch,
        )
        epochs.append(asdict(epoch_figures(times)))
        timings.append({"wall_s": times.wall_s, "load_s": loads, "compute_s": computes})
        waits.extend(loads[EXCLUDED_FIRST_STEPS:])
    context.metrics.update(
        epochs=epochs,
        step_times=timings,
        io_wait_s=waits,
        steps_per_epoch=steps,
        compute_time_s=compute_ns / 1e9,
        record_bytes=record_bytes(p),
        loader=p.loader,
        data_set_samples=samples,
    )


def _sleep_until(deadline_ns: int) -> None:
    """The emulated compute: the accelerator is busy until `deadline_ns` (clock_ns)."""
    left = deadline_ns - _engine.clock_ns()
    if left > 0:
        time.sleep(left / 1e9)
