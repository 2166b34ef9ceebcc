"""--api mpiio: a pattern's plan done through MPI-IO (mpi4py's MPI.File), as IOR's -a MPIIO.

The rank's engine plan says which files to open and which transfers to make, in order; here
each open, write, read, sync and close is an MPI-IO call, timed by the Recorder. A shared file
is opened by every rank together on the job's communicator (so MPI-IO can aggregate
collective calls); a file of a rank's own is opened on MPI.COMM_SELF. Payloads are the
engine's, so --verify checks every byte read as it does for posix.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from typing import Any

import numpy as np

from hpcio import _engine
from hpcio.workloads.contract import Context, PythonBody
from hpcio.workloads.plans import Op, Plan


def body(plan: Plan, *, shared: bool, collective: bool, hints: Sequence[str] = ()) -> PythonBody:
    return PythonBody(functools.partial(_run, plan, shared, collective, tuple(hints)))


def _run(
    plan: Plan, shared: bool, collective: bool, hints: tuple[str, ...], context: Context
) -> None:
    from mpi4py import MPI

    comm = context.communicator() if shared else MPI.COMM_SELF
    info = MPI.Info.Create()
    for pair in hints:
        key, _, value = pair.partition("=")
        info.Set(key.strip(), value.strip())
    run, recorder = context.run, context.recorder
    rows = plan.per_transfer()
    buffer = np.empty(max(plan.largest_transfer, 1), np.uint8)
    files: dict[int, Any] = {}
    clock = _engine.clock_ns
    for op, index, offset, length, writer in zip(
        rows.ops.tolist(), rows.key_index.tolist(), rows.offsets.tolist(),
        rows.lengths.tolist(), rows.writers.tolist(), strict=True,
    ):  # fmt: skip
        key = plan.keys[index]
        start = clock()
        try:
            if op in (Op.OPEN_WRITE, Op.OPEN_READ):
                mode = MPI.MODE_WRONLY | MPI.MODE_CREATE if op == Op.OPEN_WRITE else MPI.MODE_RDONLY
                files[index] = MPI.File.Open(comm, context.path(key), mode, info)
                recorder.record("open", start, clock())
                if hints and "mpiio_hints_in_effect" not in context.metrics:
                    context.metrics["mpiio_hints_in_effect"] = _in_effect(files[index], hints)
            elif op == Op.WRITE:
                data = buffer[:length]
                _engine.payload_fill(data, run.seed, writer, key, offset)
                start = clock()  # the payload is made outside the call, as the engine does
                write = files[index].Write_at_all if collective else files[index].Write_at
                write(offset, data)
                recorder.record("write", start, clock(), length)
            elif op == Op.READ:
                data = buffer[:length]
                read = files[index].Read_at_all if collective else files[index].Read_at
                read(offset, data)
                recorder.record("read", start, clock(), length)
                if run.verify:
                    _check(context, key, data, writer, offset)
            elif op == Op.SYNC:
                files[index].Sync()
                recorder.record("sync", start, clock())
            elif op == Op.CLOSE:
                files.pop(index).Close()
                recorder.record("close", start, clock())
        except MPI.Exception as e:
            raise OSError(f"MPI-IO {Op(op).name.lower()} {key}: {e.Get_error_string()}") from None


def _in_effect(handle: Any, hints: tuple[str, ...]) -> str:
    """The asked hints as the MPI library holds them once the file is open ("key=value,...";
    "key=?" where it dropped one), so a result says what MPI-IO really used."""
    held = handle.Get_info()
    found = []
    for pair in hints:
        key = pair.partition("=")[0].strip()
        value = held.Get(key)
        found.append(f"{key}={value if value is not None else '?'}")
    held.Free()
    return ",".join(found)


def _check(context: Context, key: str, data: np.ndarray, writer: int, offset: int) -> None:
    found = _engine.payload_check(data, context.run.seed, writer, key, offset)
    if found is not None:
        at, expected, got = found
        context.recorder.error(
            f"verify failed: {key} offset {at}: expected 0x{expected:02x}, found 0x{got:02x} "
            f"(data of rank {writer})"
        )
