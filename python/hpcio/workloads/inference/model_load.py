"""model-load: an inference server's cold start, loading a large model's weights from
safetensors shards (safetensors_format.py). The shards are laid out untimed; the timed read
phase loads them as servers do: `whole` (each shard read front to back, then its header
parsed, as a plain read of the file), `ranged` (the header read first, then the tensors in
parallel ranged reads, as streaming loaders do on object stores) or `mmap` (POSIX: the file
memory-mapped and each tensor copied out of the mapping, as safetensors' safe_open does).
With several ranks each loads its own shards (tensor-parallel: shard i on rank i % ranks).
Figures: time to load (the slowest rank's), bandwidth, and the latency of each shard and
each tensor (phase metrics); the phase's read operations are whole shards (`whole`) or
tensors (`ranged`, `mmap`), each timed as one read.

The models are Llama 3.1's 8B, 70B and 405B (hidden size, layers, MLP size, 8 key-value
heads of 128, vocabulary 128,256: the published configs), every tensor BF16 (2 bytes a
parameter), in as many shards as Meta's Hugging Face releases ship (4, 30, 191), cut at
tensor boundaries. --scale small divides the hidden, MLP and vocabulary sizes by 16 (about
1/256 of the bytes) and keeps the layers and shards."""

from __future__ import annotations

import mmap
import os
import re
import threading
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from hpcio.errors import SpecError
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
    Written,
)
from hpcio.workloads.inference import safetensors_format as st
from hpcio.workloads.inference.params import (
    MODELS,
    SMALL_DIVISOR,
    ModelLoadParams,
)
from hpcio.workloads.native import _engine
from hpcio.workloads.plans import Op, Plan, PlanBuilder, Runs

if TYPE_CHECKING:
    from hpcio.spec.model import RunSpec


#: Bytes per read call when --transfer is not given.
DEFAULT_TRANSFER_BYTES = 16 << 20
_KEY = re.compile(r"hpcio-model-(8b|70b|405b)-(full|small)/model-[0-9]{5}-of-[0-9]{5}\.safetensors")


def tensors(model: str, scale: str) -> list[st.Tensor]:
    """The model's tensors in Hugging Face's order (embeddings, each layer's, norm, head)."""
    a = MODELS[model]
    d = SMALL_DIVISOR if scale == "small" else 1
    h, m, v, kv = a.hidden // d, a.mlp // d, a.vocabulary // d, a.kv_width // d
    found = [st.Tensor("model.embed_tokens.weight", "BF16", (v, h))]
    for n in range(a.layers):
        at = f"model.layers.{n}."
        found += [
            st.Tensor(at + "self_attn.q_proj.weight", "BF16", (h, h)),
            st.Tensor(at + "self_attn.k_proj.weight", "BF16", (kv, h)),
            st.Tensor(at + "self_attn.v_proj.weight", "BF16", (kv, h)),
            st.Tensor(at + "self_attn.o_proj.weight", "BF16", (h, h)),
            st.Tensor(at + "mlp.gate_proj.weight", "BF16", (m, h)),
            st.Tensor(at + "mlp.up_proj.weight", "BF16", (m, h)),
            st.Tensor(at + "mlp.down_proj.weight", "BF16", (h, m)),
            st.Tensor(at + "input_layernorm.weight", "BF16", (h,)),
            st.Tensor(at + "post_attention_layernorm.weight", "BF16", (h,)),
        ]
    found += [
        st.Tensor("model.norm.weight", "BF16", (h,)),
        st.Tensor("lm_head.weight", "BF16", (v, h)),
    ]
    return found


def shards(model: str, scale: str) -> list[list[st.Tensor]]:
    """The tensors cut into the release's shard count: a shard ends at the first tensor
    boundary past its share of the bytes."""
    every = tensors(model, scale)
    count = MODELS[model].shards
    total = sum(t.nbytes for t in every)
    cut: list[list[st.Tensor]] = [[] for _ in range(count)]
    at = 0
    for tensor in every:
        index = min(count - 1, at * count // total)
        cut[index].append(tensor)
        at += tensor.nbytes
    return [shard for shard in cut if shard]


def shard_key(model: str, scale: str, index: int, count: int) -> str:
    return f"hpcio-model-{model}-{scale}/model-{index + 1:05d}-of-{count:05d}.safetensors"


@dataclass(frozen=True, slots=True)
class Shard:
    key: str
    header: bytes
    tensors: tuple[st.Tensor, ...]

    @property
    def nbytes(self) -> int:
        return len(self.header) + sum(t.nbytes for t in self.tensors)


def model_shards(run: RunSpec) -> list[Shard]:
    p = run.params
    cut = shards(p.model, p.scale)
    metadata = {"format": "pt"}
    return [
        Shard(shard_key(p.model, p.scale, i, len(cut)), st.header_bytes(s, metadata), tuple(s))
        for i, s in enumerate(cut)
    ]


def rank_shards(run: RunSpec, rank: int, ranks: int) -> list[Shard]:
    """Tensor-parallel: every ranks-th shard is this rank's."""
    return model_shards(run)[rank::ranks]


class ModelLoad(Workload):
    name = "model-load"
    family = "inference"
    params = ModelLoadParams
    summary = "an inference server's cold start: a model's safetensors shards loaded, timed"
    own_phases = (Phase.READ,)
    in_suites = False
    lower = {"buffers": "--scale small", "data": "--scale small",  # noqa: RUF012
             "disk": "--scale small or --model 8b"}  # fmt: skip

    def validate(self, run: RunSpec) -> None:
        super().validate(run)
        p = run.params
        if p.load == "mmap" and run.target.is_object_store:
            raise SpecError("--load mmap maps files: give a file:// target, or --load ranged")
        if run.direct:
            raise SpecError(f"--direct: {self.name} reads into unaligned tensor buffers")
        if not run.target.traits.lasting:
            raise SpecError(
                f"{self.name}: {run.target.traits.scheme}:// keeps no shards for the load to "
                "read; give file:// or s3://"
            )
        if len(model_shards(run)) < run.ranks:
            raise SpecError(
                f"--model {p.model} has {len(model_shards(run))} shard(s), fewer than the "
                f"{run.ranks} rank(s) that each load their own"
            )

    def phases(self, run: RunSpec) -> tuple[Phase, ...]:
        return (Phase.READ,)

    def prepare(self, run: RunSpec) -> RunSpec | None:
        """The shards, written untimed before the loads (--phases read: the ones an earlier
        --keep run left)."""
        return None if run.phases is not None else run

    def body(self, run: RunSpec, phase: Phase, who: RankInfo) -> Body:
        return PythonBody(_lay_out if phase is Phase.WRITE else _load)

    def keys(self, run: RunSpec) -> list[str]:
        return [s.key for s in model_shards(run)]

    def owns_key(self, name: str) -> bool:
        return _KEY.fullmatch(name) is not None

    def stored_bytes(self, run: RunSpec) -> int:
        return sum(s.nbytes for s in model_shards(run))

    def moved_bytes(self, run: RunSpec, phase: Phase) -> int:
        return self.stored_bytes(run)

    def objects_written(self, run: RunSpec) -> list[Written]:
        largest = max(s.nbytes for s in model_shards(run))
        return [Written("a shard (the largest)", largest, largest, False)]

    def in_flight(self, run: RunSpec) -> int:
        return int(run.params.in_flight)

    def memory(self, run: RunSpec, ranks_per_node: int) -> MemoryNeed:
        """One shard at a time: a rank builds each shard whole to lay it out, and loads each
        into a buffer it drops before the next (a server keeps them: it has the memory)."""
        largest = max(s.nbytes for s in model_shards(run))
        return MemoryNeed(
            ranks_per_node * largest,
            f"{ranks_per_node} rank(s) x one shard at a time (the largest, "
            f"{format_bytes(largest)})",
            self.lower["buffers"],
        )

    def cache_facts(self, run: RunSpec) -> CacheFacts:
        return CacheFacts(
            data_set_bytes=self.stored_bytes(run), read_back_from="the shards laid out",
            reads_local_data=True,
        )  # fmt: skip

    def describe(self, run: RunSpec) -> str:
        p = run.params
        count = len(model_shards(run))
        return (
            f"Llama 3.1 {p.model.upper()} ({p.scale} scale), {count} shard(s) of "
            f"{format_bytes(self.stored_bytes(run))}, {p.load} load"
            + (f", {p.in_flight} tensor(s) at once" if p.load == "ranged" else "")
        )

    def disk_words(self, run: RunSpec) -> str:
        return f"{len(model_shards(run))} shard(s)"

    def label(self, settings: dict[str, Any]) -> str:
        return f"model-load {settings.get('model', '')} {settings.get('load', '')}".strip()

    def reduce_metrics(self, per_rank: Sequence[dict[str, Any]]) -> dict[str, Any]:
        """Time to load: the slowest rank's (the server is ready when every rank is);
        bandwidth: every rank's bytes over it; latencies of every shard and tensor."""
        loaded = [m for m in per_rank if "load_s" in m]
        if not loaded:
            return {}
        slowest = max(m["load_s"] for m in loaded)
        moved = sum(m["loaded_bytes"] for m in loaded)
        shard_s = [s for m in loaded for s in m["shard_s"]]
        tensor_s = [s for m in loaded for s in m["tensor_s"]]
        return {
            "time_to_load_s": slowest,
            "loaded_bytes": moved,
            "load_mib_per_s": moved / (1 << 20) / slowest if slowest else 0.0,
            "shards": len(shard_s),
            "tensors": sum(m["tensors"] for m in loaded),
            "shard_latency_s": _summary(shard_s),
            "tensor_latency_s": _summary(tensor_s),
            "load": loaded[0]["load"],
        }


def _summary(seconds: Sequence[float]) -> dict[str, float]:
    if not seconds:
        return {}
    values = np.asarray(seconds)
    return {
        "count": len(values),
        "mean": float(values.mean()),
        "p50": float(np.percentile(values, 50)),
        "p99": float(np.percentile(values, 99)),
        "max": float(values.max()),
    }


def _lay_out(context: Context) -> None:
    """This rank's shards, each built whole (header, then the engine's payload as tensors)
    and written through the engine."""
    run, who = context.run, context.who
    transfer = run.params.transfer_bytes or DEFAULT_TRANSFER_BYTES
    if not run.target.is_object_store:
        os.makedirs(os.path.dirname(context.path(model_shards(run)[0].key)), exist_ok=True)
    for shard in rank_shards(run, who.rank, who.size):
        data = np.empty(shard.nbytes, np.uint8)
        data[: len(shard.header)] = np.frombuffer(shard.header, np.uint8)
        _engine.payload_fill(data[len(shard.header) :], run.seed, 0, shard.key, 0)
        context.write_from(_whole_plan(Op.OPEN_WRITE, Op.WRITE, shard.key, shard.nbytes,
                                       transfer), data, 1)  # fmt: skip


def _whole_plan(opening: Op, moving: Op, key: str, length: int, transfer: int) -> Plan:
    return _range_plan(opening, moving, key, 0, length, transfer)


def _range_plan(opening: Op, moving: Op, key: str, start: int, length: int,
                transfer: int) -> Plan:  # fmt: skip
    """Open `key`, move [start, start + length) in `transfer`-byte calls, close it."""
    builder = PlanBuilder().control(opening, key)
    whole, rest = divmod(length, transfer)
    if whole:
        builder.runs(moving, key, Runs.of(start, whole, 0), transfer)
    if rest:
        builder.runs(moving, key, Runs.of(start + whole * transfer, 1, 0), rest)
    return builder.control(Op.CLOSE, key).build()


class _Reader:
    """One engine executor reading ranges into the caller's buffers, each range timed and
    recorded as one read (the phase's operations are shards or tensors)."""

    def __init__(self, context: Context, transfer: int) -> None:
        self._context = context
        self._transfer = transfer
        self._executor = _engine.Executor(context.target, seed=context.run.seed)
        self._executor.start(_engine.clock_ns())
        self._errors = 0

    def read(self, key: str, start: int, into: np.ndarray) -> float | None:
        """[start, start + len(into)) of `key` into `into`; its seconds, None if it failed."""
        plan = _range_plan(Op.OPEN_READ, Op.READ, key, start, len(into), self._transfer)
        began = _engine.clock_ns()
        self._executor.run(plan.for_engine(), sink=into)
        ended = _engine.clock_ns()
        figures = self._executor.figures()
        if figures.errors > self._errors:
            self._errors = figures.errors
            self._context.recorder.error(f"{key}: {figures.first_errors[-1]}")
            return None
        self._context.recorder.record("read", began, ended, len(into), file=key, offset=start)
        return (ended - began) / 1e9


def _load(context: Context) -> None:
    run, who = context.run, context.who
    p = run.params
    transfer = p.transfer_bytes or DEFAULT_TRANSFER_BYTES
    mine = rank_shards(run, who.rank, who.size)
    shard_s: list[float] = []
    tensor_s: list[float] = []
    loaded = 0
    started = _engine.clock_ns()
    readers = [_Reader(context, transfer) for _ in range(p.in_flight if p.load == "ranged" else 1)]
    for shard in mine:
        began = _engine.clock_ns()
        weights = _load_shard(context, shard, p.load, readers, tensor_s)
        if weights is None:
            return  # the phase fails with the engine's message
        shard_s.append((_engine.clock_ns() - began) / 1e9)
        loaded += weights
    context.metrics.update(
        load_s=(_engine.clock_ns() - started) / 1e9,
        loaded_bytes=loaded,
        shard_s=shard_s,
        tensor_s=tensor_s,
        tensors=sum(len(s.tensors) for s in mine),
        load=p.load,
    )


def _load_shard(context: Context, shard: Shard, load: str, readers: list[_Reader],
                tensor_s: list[float]) -> int | None:  # fmt: skip
    """Load one shard as `load` says; the bytes it read, None on a failed read."""
    if load == "mmap":
        return _mmap_shard(context, shard, tensor_s)
    reader = readers[0]
    if load == "whole":
        data = np.empty(shard.nbytes, np.uint8)
        if reader.read(shard.key, 0, data) is None:
            return None
        length = st.header_length(data[: st.LENGTH_BYTES].tobytes())
        st.entries(data[st.LENGTH_BYTES : st.data_start(length)].tobytes())
        return shard.nbytes
    opening = np.empty(st.LENGTH_BYTES, np.uint8)
    if reader.read(shard.key, 0, opening) is None:
        return None
    header = np.empty(st.header_length(opening.tobytes()), np.uint8)
    if reader.read(shard.key, st.LENGTH_BYTES, header) is None:
        return None
    found = st.entries(header.tobytes())
    start = st.data_start(len(header))
    data = np.empty(found[-1].end if found else 0, np.uint8)

    left = iter(found)
    taking = threading.Lock()
    times: list[float] = []

    def lane(reader: _Reader) -> bool:
        """Read the next tensor not yet taken until none is left; False if a read failed."""
        while True:
            with taking:
                entry = next(left, None)
            if entry is None:
                return True
            took = reader.read(shard.key, start + entry.begin, data[entry.begin : entry.end])
            if took is None:
                return False
            times.append(took)

    # Each lane drives its own executor, which releases the GIL while it reads.
    with ThreadPoolExecutor(len(readers)) as pool:
        if not all(pool.map(lane, readers)):
            return None
    tensor_s.extend(times)
    return st.LENGTH_BYTES + len(header) + len(data)


def _mmap_shard(context: Context, shard: Shard, tensor_s: list[float]) -> int:
    """The shard mapped, its header parsed from the mapping, each tensor copied out (the
    page faults are the reads)."""
    path = context.path(shard.key)
    recorder = context.recorder
    began = _engine.clock_ns()
    fd = os.open(path, os.O_RDONLY)
    recorder.record("open", began, _engine.clock_ns(), file=shard.key)
    try:
        with mmap.mmap(fd, 0, access=mmap.ACCESS_READ) as mapped:
            view = np.frombuffer(mapped, np.uint8)
            t = _engine.clock_ns()
            length = st.header_length(bytes(view[: st.LENGTH_BYTES]))
            found = st.entries(bytes(view[st.LENGTH_BYTES : st.data_start(length)]))
            start = st.data_start(length)
            recorder.record("read", t, _engine.clock_ns(), start, file=shard.key, offset=0)
            for entry in found:
                t = _engine.clock_ns()
                np.array(view[start + entry.begin : start + entry.end])  # the copy faults it in
                done = _engine.clock_ns()
                recorder.record("read", t, done, entry.end - entry.begin, file=shard.key,
                                offset=start + entry.begin)  # fmt: skip
                tensor_s.append((done - t) / 1e9)
            del view
    finally:
        t = _engine.clock_ns()
        os.close(fd)
        recorder.record("close", t, _engine.clock_ns(), file=shard.key)
    return shard.nbytes
