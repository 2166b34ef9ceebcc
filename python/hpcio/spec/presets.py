"""Presets: the RunSpecs a command builds from a few choices (a storage profile, IOzone's
automatic mode, a model's checkpoint), each over the workload that runs it."""

from __future__ import annotations

from collections.abc import Sequence

from hpcio.errors import SpecError
from hpcio.spec.model import RunSpec, workload_named
from hpcio.spec.target import TargetSpec
from hpcio.units import format_bytes
from hpcio.workloads.checkpoint import IN_FLIGHT, LOADS, SAVES, TRANSFER_BYTES, Model, shard_bytes
from hpcio.workloads.patterns.params import FilePerRankParams
from hpcio.workloads.profiles.iozone import STEPS, TESTS, Iozone, IozoneParams
from hpcio.workloads.profiles.storage import OBJECT_STORE_SMALL_SIZE, Profile

MiB = 1 << 20


def profile_run(
    profile: Profile,
    target: TargetSpec,
    *,
    ranks: int,
    size_bytes: int | None,
    node_ram_bytes: int,
    direct: bool = False,
    verify: bool = False,
    seed: int = 1,
    iterations: int = 1,
    keep: bool = False,
    duration_s: float | None = None,
    in_flight: int | None = None,
    drop_caches: bool = False,
    nodes: int = 1,
    reorder: bool = False,
    rwmix_read_pct: int | None = None,
) -> RunSpec:
    """The run that measures `profile` on `target`.

    Args:
        profile: what to measure.
        target: where.
        ranks: MPI ranks; the data set is split evenly between them.
        size_bytes: the data set of the whole run (all ranks); None for the profile's default
            (on object stores, 64 MiB for the 4 KiB profiles).
        node_ram_bytes: this node's RAM, for streaming's default of twice that.
        direct: bypass the page cache even where the profile does not (POSIX only).
        verify: check every byte read.
        seed: payload and random-order seed.
        iterations: repetitions.
        keep: keep the files afterwards.
        duration_s: repeat each phase's transfers for this long (fio's time_based); None: once.
        in_flight: requests in flight per rank; None for the profile's own.
        drop_caches: drop the page cache on every node before each read phase (root).
        nodes: nodes the ranks run on: streaming's default is twice the RAM of each of them.
        reorder: read another rank's data (another node's when there are several; IOR -C).
        rwmix_read_pct: one mixed phase of this percentage of reads (fio's rwmixread)
            instead of the profile's phases; None: its phases.

    Raises:
        SpecError: a size too small for one transfer per rank.
    """
    size = size_bytes if size_bytes is not None else profile.default_size_bytes
    if size_bytes is None and target.is_object_store and profile.transfer_bytes < MiB:
        size = OBJECT_STORE_SMALL_SIZE
    if size is None:
        if not node_ram_bytes:
            raise SpecError(f"{profile.name}: this node's RAM is unknown; give --size")
        size = 2 * node_ram_bytes * nodes
    transfer = profile.transfer_bytes
    lanes = profile.in_flight if in_flight is None else in_flight
    if target.is_object_store:
        files = max(1, size // ranks // transfer)  # an object per transfer
    else:
        # A file per request in flight, as fio's jobs each have theirs (numjobs).
        files = max(1, min(lanes, size // ranks // transfer))
    per_rank = size // ranks // (transfer * files) * (transfer * files)
    if per_rank < transfer:
        raise SpecError(
            f"--size {format_bytes(size)} over {ranks} rank(s) is less than one "
            f"{format_bytes(transfer)} transfer per rank; use --size "
            f"{format_bytes(ranks * transfer).replace(' ', '')} or more"
        )
    params = FilePerRankParams(
        size_per_rank_bytes=per_rank,
        transfer_bytes=transfer,
        in_flight=lanes,
        reorder=reorder,
        files_per_rank=files,
        random_offsets=profile.order == "random",
        duration_s=duration_s,
        rwmix_read_pct=rwmix_read_pct,
    )
    return RunSpec(
        workload=workload_named(profile.name),
        params=params,
        target=target,
        ranks=ranks,
        iterations=iterations,
        direct=(profile.bypass_cache or direct) and not target.is_object_store,
        verify=verify,
        keep=keep,
        seed=seed,
        drop_caches=drop_caches,
    ).validate()


def iozone_runs(
    target: TargetSpec,
    *,
    ranks: int,
    file_sizes: Sequence[int],
    record_sizes: Sequence[int],
    direct: bool = False,
    verify: bool = False,
    seed: int = 1,
    iterations: int = 1,
    keep: bool = False,
    in_flight: int = 1,
) -> list[RunSpec]:
    """Six runs per (file size, record size) whose record fits in the file, in IOzone's order.

    Each run times one phase of one file per rank: the first writes it and keeps it, the
    following ones rewrite or read it, the last (random write) removes it unless `keep`.

    Args:
        target: where the files go.
        ranks: MPI ranks, each with its own file (IOzone's throughput mode).
        file_sizes: bytes per file.
        record_sizes: bytes per I/O call.
        direct: O_DIRECT (POSIX).
        verify: check every byte the reads return.
        seed: payload and random-order seed.
        iterations: repetitions of each test.
        keep: keep the files after the last test.
        in_flight: requests in flight per rank (IOzone: 1).

    Raises:
        SpecError: no record size fits in any file size, or a size a run refuses.
    """
    runs = []
    for file_size in file_sizes:
        for record in record_sizes:
            if record > file_size or file_size % record:
                continue
            for test in TESTS:
                phase, random = STEPS[test]
                params = IozoneParams(
                    size_per_rank_bytes=file_size,
                    transfer_bytes=record,
                    in_flight=in_flight,
                    random_offsets=random,
                    test=test,
                )
                runs.append(
                    RunSpec(
                        workload=workload_named(Iozone.name),
                        params=params,
                        target=target,
                        ranks=ranks,
                        direct=direct,
                        verify=verify and phase == "read",
                        keep=keep or test != TESTS[-1],
                        seed=seed,
                        iterations=iterations,
                        phases=(phase,),
                    ).validate()
                )
    if not runs:
        raise SpecError(
            f"no record size ({format_bytes(min(record_sizes))} and up) fits in a file size "
            f"(at most {format_bytes(max(file_sizes))})"
        )
    return runs


def checkpoint_runs(
    model: Model,
    target: TargetSpec,
    *,
    ranks: int,
    scale: int = 1,
    transfer: int = TRANSFER_BYTES,
    in_flight: int = IN_FLIGHT,
    reorder: bool = False,
    drop_caches: bool = False,
    verify: bool = False,
    seed: int = 1,
) -> tuple[RunSpec, RunSpec]:
    """The save run (10 writes of every shard, kept) and the load run (10 reads of them).

    Raises:
        SpecError: the wrong number of ranks, a bad scale, or a store limit.
    """
    shard, transfer = shard_bytes(model, scale, transfer)
    params = FilePerRankParams(
        size_per_rank_bytes=shard, transfer_bytes=transfer, in_flight=in_flight, reorder=reorder
    )
    workload = workload_named(model.name)
    save = RunSpec(
        workload=workload, params=params, target=target, ranks=ranks, iterations=SAVES,
        phases=("write",), fsync=not target.is_object_store, keep=True, seed=seed,
    ).validate()  # fmt: skip
    load = RunSpec(
        workload=workload, params=params, target=target, ranks=ranks, iterations=LOADS,
        phases=("read",), verify=verify, drop_caches=drop_caches, seed=seed,
    ).validate()  # fmt: skip
    return save, load
