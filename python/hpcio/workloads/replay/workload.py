"""replay: an application's reads and writes, as a Darshan log or an hpcio trace recorded
them, made again on any target by hpcio's ranks (schedule.py says who does what, when, and
under which names). The write phase makes the application's writes, the read phase its
reads, each rank in the application's order; every operation is a transfer of the engine
(one plan per run of operations without a wait between them), so the figures, `hpcio report`
and `hpcio cost` are those of any run.

Before each iteration, untimed, the files the reads need are laid out whole (every byte up to
the furthest read), so a read of a range the application read but never wrote finds data.
Every byte written, laid out or read is the payload of writer 0 at its offset, so
`--verify` checks each read whoever wrote the range."""

from __future__ import annotations

import dataclasses
import os
import re
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from hpcio.errors import SpecError
from hpcio.options import POSITIVE, Kind, choice, option
from hpcio.units import format_bytes
from hpcio.workloads.contract import (
    Body,
    CacheFacts,
    Context,
    MemoryNeed,
    Phase,
    PythonBody,
    RankInfo,
    Workload,
)
from hpcio.workloads.plans import Op, Plan
from hpcio.workloads.replay import counters, schedule, source

if TYPE_CHECKING:
    from hpcio.spec.model import RunSpec

_KEY = re.compile(r"hpcio-replay-[0-9]{5}-[A-Za-z0-9._-]*")
#: Lay-out writes go in pieces of this size (parts of an upload on object stores).
LAYOUT_PIECE = 8 << 20


def _path(value: Any) -> str:
    if not isinstance(value, str) or not value:
        raise ValueError(f"must be a path, got {value!r}")
    return value


PATH = Kind("path", _path)


@dataclass(frozen=True, slots=True, kw_only=True)
class ReplayParams:
    log: str = option(None, kind=PATH, key="log", help="the Darshan log or hpcio trace to replay")
    gaps: str = option(
        "--gaps", kind=choice("keep", "none"), default="keep",
        help="replay: keep the application's waits between operations, or none",
    )  # fmt: skip
    shrink: int = option(
        "--shrink", kind=POSITIVE, default=1, metavar="K",
        help="replay: divide every offset and length by K (lengths at least 1 byte), to "
        "replay a large application's pattern on a small machine",
    )  # fmt: skip
    #: The bytes the replayed files hold (stored_bytes), recorded so that a document is
    #: priced and reported without its log; 0: not yet read from the log.
    data_set_bytes: int = 0


@dataclass(frozen=True, slots=True, kw_only=True)
class _LayingOut(ReplayParams):
    """The untimed write that lays out what the reads need."""


def loaded(run: RunSpec) -> source.Source:
    return source.load(run.params.log, run.params.shrink)


def _extents(ops, kind: str) -> dict[str, int]:
    """Target name -> the furthest byte of `kind` ops in it."""
    keys = source.key_of(ops.file)
    chosen = ops.op == kind
    ends: dict[str, int] = {}
    for app_path, end in zip(ops.file[chosen], (ops.offset + ops.length)[chosen], strict=True):
        key = keys[app_path]
        ends[key] = max(ends.get(key, 0), int(end))
    return ends


class Replay(Workload):
    name = "replay"
    family = "replay"
    params = ReplayParams
    summary = "an application's I/O from a Darshan log or an hpcio trace (hpcio replay)"
    runs_alone = False
    moves_data_set = False
    lower = {"buffers": "--shrink", "data": "--shrink", "disk": "--shrink"}  # noqa: RUF012

    def phases(self, run: RunSpec) -> tuple[Phase, ...]:
        ops = loaded(run).ops
        return tuple(p for p in self.own_phases if (ops.op == p.value).any())

    def validate(self, run: RunSpec) -> None:
        super().validate(run)
        found = loaded(run)
        if run.ranks > found.app_ranks:
            raise SpecError(
                f"-n {run.ranks}: the application ran {found.app_ranks} rank(s); replay it "
                f"with -n {found.app_ranks} or fewer (application rank r runs on rank r % n)"
            )
        ops = found.ops
        if run.direct and ((ops.offset % 4096).any() or (ops.length % 4096).any()):
            raise SpecError(
                "--direct: the application's offsets and lengths are not all multiples of "
                "4 KiB, which O_DIRECT needs; drop --direct"
            )
        if run.fsync and Phase.WRITE not in self.phases(run):
            raise SpecError("--fsync: the application only reads; drop --fsync")

    def _objects(self, run: RunSpec) -> dict[str, str] | None:
        if not run.target.is_object_store:
            return None
        return schedule.object_mapping(loaded(run).ops, run.ranks, run.target.kind)

    def body(self, run: RunSpec, phase: Phase, who: RankInfo) -> Body:
        if isinstance(run.params, _LayingOut):
            mine = sorted(_extents(loaded(run).ops, "read").items())[who.rank :: run.ranks]
            return PythonBody(lambda context: _lay_out(context, mine))
        found = loaded(run)
        steps = schedule.steps(
            found.ops, who.rank, run.ranks, phase.value, keep_gaps=run.params.gaps == "keep",
            objects=self._objects(run),
        )  # fmt: skip
        words = self._words(run, phase) if who.rank == 0 else {}
        return PythonBody(lambda context: _replay(context, steps, words))

    def _words(self, run: RunSpec, phase: Phase) -> dict[str, Any]:
        """What rank 0 puts in the phase's metrics: how the replay was made."""
        found = loaded(run)
        words: dict[str, Any] = {
            "replayed_from": found.replayed_from,
            "app_ranks": found.app_ranks,
            "rank_mapping": f"application rank r on rank r % {run.ranks}",
            "gaps": run.params.gaps,
            "shrink": run.params.shrink,
        }
        if found.replayed_from == source.COUNTERS:
            words["counters_exact"] = found.exact
        if phase is Phase.READ:
            words["laid_out_bytes"] = sum(_extents(found.ops, "read").values())
        objects = self._objects(run)
        if objects is not None and phase is Phase.WRITE:
            for how in (schedule.PUT, schedule.PARTS, schedule.SHARED, schedule.SEPARATE):
                words[f"files_as_{how}"] = sum(1 for h in objects.values() if h == how)
        return words

    def lay_out(self, run: RunSpec) -> RunSpec | None:
        if Phase.READ not in self.phases(run):
            return None
        fields = {f.name: getattr(run.params, f.name) for f in dataclasses.fields(ReplayParams)}
        return dataclasses.replace(run, params=_LayingOut(**fields), verify=False)

    def planned_transfers(self, run: RunSpec, phase: Phase, sample: int = 64) -> int | None:
        return int((loaded(run).ops.op == phase.value).sum())

    def keys(self, run: RunSpec) -> list[str]:
        ops = loaded(run).ops
        names = source.key_of(ops.file)
        keys = set(names.values())
        objects = self._objects(run) or {}
        for app_path, how in objects.items():
            if how != schedule.SEPARATE:
                continue
            chosen = (ops.op == "write") & (ops.file == app_path)
            for rank in range(run.ranks):
                count = int((schedule.hpcio_rank(ops.rank[chosen], run.ranks) == rank).sum())
                keys.update(schedule.separate_key(names[app_path], rank, n) for n in range(count))
        return sorted(keys)

    def owns_key(self, name: str) -> bool:
        return _KEY.fullmatch(name) is not None

    def moved_bytes(self, run: RunSpec, phase: Phase) -> int:
        ops = loaded(run).ops
        return int(ops.length[ops.op == phase.value].sum())

    def stored_bytes(self, run: RunSpec) -> int:
        return run.params.data_set_bytes or files_bytes(run)

    def memory(self, run: RunSpec, ranks_per_node: int) -> MemoryNeed:
        ops = loaded(run).ops
        lays_out = bool((ops.op == "read").any())
        largest = max(int(ops.length.max()), LAYOUT_PIECE if lays_out else 0)
        return MemoryNeed(
            ranks_per_node * largest,
            f"{ranks_per_node} rank(s) x 1 in flight x {format_bytes(largest)} (the largest "
            "operation, or a lay-out piece)",
            self.lower["buffers"],
        )

    def cache_facts(self, run: RunSpec) -> CacheFacts:
        return CacheFacts(data_set_bytes=self.stored_bytes(run), reads_local_data=True)

    def describe(self, run: RunSpec) -> str:
        found = loaded(run)
        shrunk = f", sizes / {run.params.shrink}" if run.params.shrink > 1 else ""
        return (
            f"{os.path.basename(run.params.log)} ({found.replayed_from}): "
            f"{found.app_ranks} application rank(s) on {run.ranks}, {len(found.ops)} reads "
            f"and writes, gaps {run.params.gaps}{shrunk}"
        )

    def label(self, settings: dict[str, Any]) -> str:
        log = settings.get("log")
        return f"replay {os.path.basename(log)}" if log else self.name


def files_bytes(run: RunSpec) -> int:
    """Bytes the replayed files hold: each up to the furthest byte written or read in it."""
    ops = loaded(run).ops
    written = _extents(ops, "write")
    read = _extents(ops, "read")
    return sum(max(written.get(k, 0), read.get(k, 0)) for k in {*written, *read})


def with_data_set(run: RunSpec) -> RunSpec:
    """`run` with the bytes its files hold recorded in its params, read from the log now, so
    that its documents are reported and priced without the log."""
    params = dataclasses.replace(run.params, data_set_bytes=files_bytes(run))
    return dataclasses.replace(run, params=params)


def _plan(key: str, op: str, offsets: np.ndarray, lengths: np.ndarray, *, opens: bool,
          closes: bool, sync: bool) -> Plan:  # fmt: skip
    """One engine plan: (open), the transfers in order, one row each, (sync, close)."""
    transfer = Op.WRITE if op == "write" else Op.READ
    codes = [int(Op.OPEN_WRITE if op == "write" else Op.OPEN_READ)] if opens else []
    codes += [int(transfer)] * len(offsets)
    codes += ([int(Op.SYNC)] if sync else []) + ([int(Op.CLOSE)] if closes else [])
    head = 1 if opens else 0
    n = len(codes)
    offset_column = np.zeros(n, np.uint64)
    length_column = np.zeros(n, np.uint64)
    offset_column[head : head + len(offsets)] = offsets
    length_column[head : head + len(offsets)] = lengths
    return Plan(
        ops=np.array(codes, np.uint8),
        key_index=np.zeros(n, np.uint32),
        offsets=offset_column,
        lengths=length_column,
        counts=np.ones(n, np.uint64),
        strides=length_column.copy(),
        # Writer 0's payload everywhere: a read checks its bytes whoever wrote them.
        writers=np.zeros(n, np.uint32),
        keys=(key,),
    )


def _replay(context: Context, steps: list[schedule.Step], words: dict[str, Any]) -> None:
    """This rank's steps, each after its wait, on one executor of one lane (so in order);
    a name stays open from its first step to its last. Steps of an upload all ranks share
    are made by every rank, whatever happened before (the ranks meet in them)."""
    largest = max((int(s.lengths.max()) for s in steps if len(s.lengths)), default=1)
    last = {s.key: i for i, s in enumerate(steps)}
    opened: set[str] = set()
    waited_ns = 0
    failed = False
    for i, step in enumerate(steps):
        if step.shared_part_bytes:
            plan = _plan(step.key, step.op, step.offsets, step.lengths, opens=True,
                         closes=True, sync=False)  # fmt: skip
            context.shared_upload(plan, step.shared_part_bytes)
            continue
        if failed:
            continue  # the error is in the figures; the phase fails on every rank
        if step.gap_ns:
            before = time.monotonic_ns()
            time.sleep(step.gap_ns / 1e9)
            waited_ns += time.monotonic_ns() - before
        closes = last[step.key] == i
        plan = _plan(step.key, step.op, step.offsets, step.lengths,
                     opens=step.key not in opened, closes=closes,
                     sync=closes and step.op == "write" and context.run.fsync)  # fmt: skip
        opened.add(step.key)
        running = context.background(plan, 1, largest)
        running.wait()
        failed = running.failed()
    context.metrics.update(words)
    context.metrics["operations"] = sum(len(s.offsets) for s in steps)
    context.metrics["waited_s"] = waited_ns / 1e9
    if steps:
        done = counters.histogram(np.concatenate([s.lengths for s in steps]))
        for bucket, count in zip(counters.BUCKETS, done.tolist(), strict=True):
            context.metrics[f"accesses_{bucket}"] = count


def _lay_out(context: Context, extents: list[tuple[str, int]]) -> None:
    """Write each (name, extent) whole, in LAYOUT_PIECE pieces, fsync'd on a file system."""
    for key, extent in extents:
        offsets = np.arange(0, extent, LAYOUT_PIECE, dtype=np.int64)
        lengths = np.minimum(LAYOUT_PIECE, extent - offsets)
        plan = _plan(key, "write", offsets, lengths, opens=True, closes=True,
                     sync=not context.run.target.is_object_store)  # fmt: skip
        context.background(plan, 1, LAYOUT_PIECE).wait()
