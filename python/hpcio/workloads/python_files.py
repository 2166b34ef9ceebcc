"""python-files: every rank writes, then reads back, N files of its own with plain os.pwrite and
os.pread from Python, each call timed through the engine's Recorder. It checks the Python-body
path end to end (figures as a plan's), and measures what the interpreter adds to the same I/O
an engine plan does (mfmw with --files-per-rank): the baseline for library workloads."""

from __future__ import annotations

import os
import re
from typing import TYPE_CHECKING

import numpy as np

from hpcio.errors import SpecError
from hpcio.units import format_bytes
from hpcio.workloads.contract import (
    Body,
    Context,
    MemoryNeed,
    Phase,
    PythonBody,
    RankInfo,
    Workload,
)
from hpcio.workloads.native import _engine
from hpcio.workloads.python_files_params import PythonFilesParams

if TYPE_CHECKING:
    from hpcio.spec.model import RunSpec

_KEY = re.compile(r"hpcio-py-rank[0-9]{6,}-file[0-9]{6,}\.dat")


def file_key(rank: int, index: int) -> str:
    return f"hpcio-py-rank{rank:06d}-file{index:06d}.dat"


class PythonFiles(Workload):
    name = "python-files"
    family = "python"
    params = PythonFilesParams
    summary = "each rank writes and reads N files with os.pwrite/os.pread, timed by the Recorder"
    lower = {"buffers": "--block", "data": "--file-size or --files",  # noqa: RUF012
             "disk": "--file-size, --files or -n"}  # fmt: skip

    def validate(self, run: RunSpec) -> None:
        super().validate(run)
        p = run.params
        if run.target.is_object_store:
            raise SpecError(f"{self.name} writes files with os.pwrite: give a file:// target")
        if p.file_size_bytes % p.block_bytes:
            raise SpecError(
                f"--file-size {format_bytes(p.file_size_bytes)} is not a multiple of --block "
                f"{format_bytes(p.block_bytes)}"
            )
        if run.direct:
            raise SpecError(f"--direct: {self.name} writes from Python buffers, not aligned ones")

    def body(self, run: RunSpec, phase: Phase, who: RankInfo) -> Body:
        return PythonBody(_write if phase is Phase.WRITE else _read)

    def keys(self, run: RunSpec) -> list[str]:
        return [file_key(r, f) for r in range(run.ranks) for f in range(run.params.files)]

    def owns_key(self, name: str) -> bool:
        return _KEY.fullmatch(name) is not None

    def stored_bytes(self, run: RunSpec) -> int:
        return run.ranks * run.params.files * run.params.file_size_bytes

    def memory(self, run: RunSpec, ranks_per_node: int) -> MemoryNeed:
        block = run.params.block_bytes
        return MemoryNeed(
            ranks_per_node * block,
            f"{ranks_per_node} rank(s) x 1 block of {format_bytes(block)}",
            self.lower["buffers"],
        )

    def describe(self, run: RunSpec) -> str:
        p = run.params
        return (
            f"{p.files} file(s) of {format_bytes(p.file_size_bytes)} per rank, "
            f"{format_bytes(p.block_bytes)} per call"
        )

    def disk_words(self, run: RunSpec) -> str:
        p = run.params
        return f"{run.ranks} rank(s) x {p.files} x {format_bytes(p.file_size_bytes)}"


def _write(context: Context) -> None:
    run, rank, recorder = context.run, context.who.rank, context.recorder
    p = run.params
    payload = _engine.PayloadBuffer(run.seed, p.block_bytes)
    buffer = payload.view
    calls = 0
    for index in range(p.files):
        key = file_key(rank, index)
        t = _engine.clock_ns()
        fd = os.open(context.path(key), os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
        recorder.record("open", t, _engine.clock_ns(), file=key)
        try:
            for offset in range(0, p.file_size_bytes, p.block_bytes):
                payload.fill(rank, key, offset, p.block_bytes)
                t = _engine.clock_ns()
                os.pwrite(fd, buffer.data, offset)
                recorder.record(
                    "write", t, _engine.clock_ns(), p.block_bytes, file=key, offset=offset
                )
                calls += 1
            if run.fsync:
                t = _engine.clock_ns()
                os.fsync(fd)
                recorder.record("sync", t, _engine.clock_ns(), file=key)
        finally:
            t = _engine.clock_ns()
            os.close(fd)
            recorder.record("close", t, _engine.clock_ns(), file=key)
    context.metrics["python_calls"] = calls


def _read(context: Context) -> None:
    run, rank, recorder = context.run, context.who.rank, context.recorder
    p = run.params
    calls = 0
    for index in range(p.files):
        key = file_key(rank, index)
        t = _engine.clock_ns()
        fd = os.open(context.path(key), os.O_RDONLY)
        recorder.record("open", t, _engine.clock_ns(), file=key)
        try:
            for offset in range(0, p.file_size_bytes, p.block_bytes):
                t = _engine.clock_ns()
                data = os.pread(fd, p.block_bytes, offset)
                recorder.record("read", t, _engine.clock_ns(), len(data), file=key, offset=offset)
                calls += 1
                if run.verify:
                    _check(context, key, data, offset)
        finally:
            t = _engine.clock_ns()
            os.close(fd)
            recorder.record("close", t, _engine.clock_ns(), file=key)
    context.metrics["python_calls"] = calls


def _check(context: Context, key: str, data: bytes, offset: int) -> None:
    run = context.run
    if len(data) != run.params.block_bytes:
        context.recorder.error(f"{key} offset {offset}: read {len(data)} bytes, not a block")
        return
    found = _engine.payload_check(
        np.frombuffer(data, np.uint8), run.seed, context.who.rank, key, offset
    )
    if found is not None:
        at, expected, got = found
        context.recorder.error(
            f"verify failed: {key} offset {at}: expected 0x{expected:02x}, found 0x{got:02x}"
        )
