"""The live status line: during a phase, on a terminal, every rank's figures once a second.

Every rank publishes its engine's running totals (live_counters: bytes, operations, latency
buckets) into a small file of its own in a node-local directory (/dev/shm), twice a second,
from a thread that sleeps otherwise; rank 0 reads every file there once a second, adds them up
and redraws one line on stderr. No message crosses the job while a phase runs, so the phase's
timing is left alone; ranks on other nodes than rank 0's write where rank 0 cannot read, and
the line then says how many ranks it adds up ("4/8 ranks").
"""

from __future__ import annotations

import contextlib
import os
import shutil
import sys
import tempfile
import threading
import time
import uuid
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, TextIO

import numpy as np

from hpcio import _engine
from hpcio.live.terminal import status_line_wanted

if TYPE_CHECKING:
    from hpcio.runner.world import Comm

_MIB = float(1 << 20)
#: How often a rank refreshes its file, and how often rank 0 redraws the line.
PUBLISH_EVERY_S = 0.5
REDRAW_EVERY_S = 1.0
#: A slot: bytes, operations, then operations per latency bucket, as uint64.
_HEADER_WORDS = 2


@dataclass(frozen=True, slots=True)
class Goal:
    """What makes a phase done: bytes all ranks move, or a deadline (fio's time_based)."""

    bytes_total: int = 0
    duration_s: float | None = None


@dataclass(frozen=True, slots=True)
class Totals:
    """Every rank's figures added up, since the phase started."""

    bytes: int
    ops: int
    latency_counts: tuple[int, ...]
    ranks_seen: int


def p99_s(counts: tuple[int, ...] | list[int], tops_ns: list[int]) -> float | None:
    """The 99th percentile of the operations counted per bucket (a bucket's top, as HDR
    reports), seconds; None before any operation."""
    total = sum(counts)
    if total == 0:
        return None
    rank = 0.99 * total
    running = 0
    for count, top in zip(counts, tops_ns, strict=False):
        running += count
        if running >= rank:
            return top / 1e9
    return tops_ns[len(counts) - 1] / 1e9


def format_latency(seconds: float) -> str:
    """0.00421 -> '4.21 ms'; 6.65e-6 -> '6.65 us'; 3 significant digits."""
    if seconds >= 1:
        return f"{seconds:.3g} s"
    if seconds >= 1e-3:
        return f"{seconds * 1e3:.3g} ms"
    return f"{seconds * 1e6:.3g} us"


def format_duration(seconds: float) -> str:
    whole = max(0, round(seconds))
    return f"{whole // 3600}:{whole // 60 % 60:02d}:{whole % 60:02d}"


def format_status(
    phase: str,
    *,
    elapsed_s: float,
    bytes_per_s: float,
    ops_per_s: float,
    p99: float | None,
    goal: Goal,
    bytes_done: int,
    ranks_seen: int,
    ranks: int,
) -> str:
    """One status line, fio's in spirit: `[write] 812.3 MiB/s  203 op/s  p99 4.21 ms  45%
    eta 0:00:22`. Rates are over the last second; p99 over the phase so far."""
    latency = "p99 -" if p99 is None else f"p99 {format_latency(p99)}"
    if goal.duration_s is not None:
        left = f"{format_duration(goal.duration_s - elapsed_s)} left"
    elif goal.bytes_total > 0:
        done = min(1.0, bytes_done / goal.bytes_total)
        eta = f"eta {format_duration(elapsed_s * (1 - done) / done)}" if done > 0 else "eta -"
        left = f"{done:4.0%} {eta}"
    else:
        left = f"{format_duration(elapsed_s)} elapsed"
    who = f"  [{ranks_seen}/{ranks} ranks]" if ranks_seen != ranks else ""
    return (
        f"[{phase}] {bytes_per_s / _MIB:10.1f} MiB/s  {ops_per_s:9.0f} op/s  {latency}  {left}{who}"
    )


def status_directory() -> str:
    """Where the slots go: node-local memory (/dev/shm), else the temporary directory."""
    base = "/dev/shm" if os.path.isdir("/dev/shm") and os.access("/dev/shm", os.W_OK) else None
    return os.path.join(base or tempfile.gettempdir(), f"hpcio-status-{uuid.uuid4().hex[:12]}")


class Slot:
    """This rank's file in the status directory: its totals since the phase began."""

    def __init__(self, directory: str, rank: int) -> None:
        os.makedirs(directory, exist_ok=True)
        self._directory = directory
        self._path = os.path.join(directory, f"rank-{rank}")
        bytes_, ops, counts = _engine.live_counters()
        self._start = np.array([bytes_, ops, *counts], dtype=np.uint64)
        self._map = np.memmap(self._path, dtype=np.uint64, mode="w+", shape=self._start.shape)

    def publish(self) -> None:
        bytes_, ops, counts = _engine.live_counters()
        self._map[:] = np.array([bytes_, ops, *counts], dtype=np.uint64) - self._start

    def remove(self) -> None:
        del self._map
        with contextlib.suppress(OSError):
            os.unlink(self._path)
        with contextlib.suppress(OSError):
            os.rmdir(self._directory)  # the last rank of the node out removes it


def read_totals(directory: str) -> Totals:
    """Every slot in `directory` added up (a slot still being written counts as it is)."""
    total: np.ndarray | None = None
    seen = 0
    with contextlib.suppress(OSError):
        for name in os.listdir(directory):
            try:
                words = np.fromfile(os.path.join(directory, name), dtype=np.uint64)
            except OSError:
                continue
            if words.size <= _HEADER_WORDS:
                continue
            total = words if total is None else total + words
            seen += 1
    if total is None:
        return Totals(0, 0, (), 0)
    return Totals(int(total[0]), int(total[1]), tuple(int(c) for c in total[_HEADER_WORDS:]), seen)


class Ticker:
    """A daemon thread calling `tick` every `every_s` until stopped."""

    def __init__(self, tick: Callable[[], None], every_s: float, name: str) -> None:
        self._tick = tick
        self._every_s = every_s
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, name=name, daemon=True)
        self._thread.start()

    def _loop(self) -> None:
        while not self._stop.wait(self._every_s):
            try:
                self._tick()
            except Exception:  # the line is a courtesy: it must never stop or spoil a run
                return

    def stop(self) -> None:
        self._stop.set()
        self._thread.join()


#: Where a status line goes instead of stderr: a progress bar that owns the terminal's last
#: line (a sweep's, live/console.py). Set only through drawn_by, on rank 0.
_drawers: list[Callable[[str], None]] = []


@contextlib.contextmanager
def drawn_by(draw: Callable[[str], None]) -> Iterator[None]:
    """Within this block, status lines go to `draw` ("" takes the line away), not to stderr."""
    _drawers.append(draw)
    try:
        yield
    finally:
        _drawers.remove(draw)


class StatusLine:
    """Rank 0's line: reads the slots, works out rates since the last redraw, redraws."""

    def __init__(
        self, directory: str, phase: str, goal: Goal, ranks: int, out: TextIO | None = None
    ) -> None:
        self._directory = directory
        self._phase = phase
        self._goal = goal
        self._ranks = ranks
        self._out = out or sys.stderr
        self._tops = _engine.live_bucket_tops()
        self._started = self._last_at = time.monotonic()
        self._last = Totals(0, 0, (), 0)
        self._drawn = False

    def redraw(self) -> None:
        now = time.monotonic()
        totals = read_totals(self._directory)
        interval = max(now - self._last_at, 1e-9)
        line = format_status(
            self._phase,
            elapsed_s=now - self._started,
            bytes_per_s=max(0, totals.bytes - self._last.bytes) / interval,
            ops_per_s=max(0, totals.ops - self._last.ops) / interval,
            p99=p99_s(totals.latency_counts, self._tops),
            goal=self._goal,
            bytes_done=totals.bytes,
            ranks_seen=totals.ranks_seen,
            ranks=self._ranks,
        )
        self._last, self._last_at = totals, now
        self._draw(line)
        self._drawn = True

    def clear(self) -> None:
        """Take the line away, so the phase's own line is printed where it was."""
        if self._drawn:
            self._draw("")

    def _draw(self, line: str) -> None:
        if _drawers:
            _drawers[-1](line)
            return
        with contextlib.suppress(OSError, ValueError):
            self._out.write(f"\r{line}\x1b[K")
            self._out.flush()


@contextlib.contextmanager
def phase_status(
    world: Comm, phase: str, goal: Goal, environ: Mapping[str, str] | None = None
) -> Iterator[None]:
    """Around one phase on every rank (a collective: rank 0 says whether there is a line).
    Without a terminal, -q or a batch log, nothing runs but that one broadcast."""
    wanted = world.rank == 0 and status_line_wanted(os.environ if environ is None else environ)
    directory = world.bcast(status_directory() if wanted else None)
    if directory is None:
        yield
        return
    slot: Slot | None = None
    publisher = redrawer = None
    line = None
    try:
        slot = Slot(directory, world.rank)
        publisher = Ticker(slot.publish, PUBLISH_EVERY_S, "hpcio-status-publish")
        if world.rank == 0:
            line = StatusLine(directory, phase, goal, world.size)
            redrawer = Ticker(line.redraw, REDRAW_EVERY_S, "hpcio-status-line")
    except OSError:
        pass  # no room for a slot: the phase runs without its line
    try:
        yield
    finally:
        for ticker in (redrawer, publisher):
            if ticker is not None:
                ticker.stop()
        if line is not None:
            line.clear()
        if slot is not None:
            slot.remove()
        if world.rank == 0:
            shutil.rmtree(directory, ignore_errors=True)
