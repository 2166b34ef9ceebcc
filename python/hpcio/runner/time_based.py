"""fio's time_based: a rank repeats its plan's transfers, a chunk at a time, until a deadline."""

from __future__ import annotations

from collections.abc import Callable
from typing import Protocol

import numpy as np

from hpcio import _engine
from hpcio.workloads._base import Op, Plan

#: Bytes in the first chunk: a guess, before the rank has measured its own rate.
CHUNK_BYTES = 64 << 20
#: Rows in the first chunk, at most (4 KiB transfers: 16,384 rows, 64 MiB).
CHUNK_ROWS_MAX = 16_384
#: Later chunks are sized from the rate measured so far to last about this long, or to end at
#: the deadline when less is left: every chunk spawns its lanes and drains them at its end,
#: and at a million operations per second 64 MiB chunks did that 70 times a second.
CHUNK_NS = 100_000_000


class PlanRunner(Protocol):
    def run(self, *columns: object) -> None: ...


def chunk_rows(transfer_bytes: int, in_flight: int) -> int:
    """Transfer rows in the first chunk: about CHUNK_BYTES, at least 8 per lane in flight."""
    rows = min(CHUNK_BYTES // max(transfer_bytes, 1), CHUNK_ROWS_MAX)
    return max(rows, 8 * in_flight)


def run_until(
    executor: PlanRunner,
    plan: Plan,
    deadline_ns: int,
    first_rows: int,
    min_rows: int = 1,
    clock: Callable[[], int] = _engine.clock_ns,
) -> None:
    """Run `plan` with its transfers repeated until `deadline_ns`.

    The rows before the first transfer (open) run once, then chunks of the transfer rows,
    wrapping around to the first transfer at the end, while `clock()` is before the deadline
    (at least one chunk), then the rows after the last transfer (sync, close) once. Payloads
    depend only on (seed, writer, key, offset), so a rewrite writes the same bytes and a
    verified reread checks them again.

    Args:
        executor: the engine executor of this rank and phase.
        plan: the rank's plan.
        deadline_ns: when to stop starting chunks, on `clock`'s scale.
        first_rows: transfer rows in the first engine call; later calls are sized from the
            measured rate to last CHUNK_NS or to end at the deadline.
        min_rows: the fewest rows in a call (enough to keep every lane busy).
        clock: monotonic ns clock (the engine's).
    """
    moving = np.flatnonzero((plan.ops == Op.WRITE) | (plan.ops == Op.READ))
    if not len(moving):
        _run(executor, plan)
        return
    first, end = int(moving[0]), int(moving[-1]) + 1
    _run(executor, plan.rows(0, first))
    transfers = plan.rows(first, end)
    start, rows, done, began = 0, max(first_rows, 1), 0, clock()
    while True:
        stop = min(start + rows, len(transfers))
        _run(executor, transfers.rows(start, stop))
        done += stop - start
        start = 0 if stop == len(transfers) else stop
        now = clock()
        if now >= deadline_ns:
            break
        rate = done / max(now - began, 1)
        rows = max(int(rate * min(CHUNK_NS, deadline_ns - now)), min_rows, 1)
    _run(executor, plan.rows(end))


def _run(executor: PlanRunner, plan: Plan) -> None:
    if len(plan):
        executor.run(
            plan.ops, plan.key_index, plan.offsets, plan.lengths, plan.writers, list(plan.keys)
        )
