"""Stubs for hpcio._engine, the Rust engine (engine/src/lib.rs)."""

import builtins
from typing import Any, TypedDict

import numpy as np
import numpy.typing as npt

#: Storage request kinds the engine counts, in its order (phases[].requests keys).
REQUEST_KINDS: list[str]

def cancel(cancelled: bool) -> None:
    """Stop (True) every running and later Executor.run after the transfers in flight, or
    allow runs again (False)."""

def clock_ns() -> int:
    """Monotonic clock in ns, the same one the engine's figures use."""

def debug_build() -> bool:
    """True when the engine was compiled without optimisations."""

class Target:
    """A storage target opened from a URL (file:///path)."""

    def __init__(
        self,
        url: str,
        *,
        direct: bool = False,
        in_flight: int = 1,
        options: dict[str, str] = ...,
    ) -> None: ...
    @property
    def kind(self) -> str: ...
    def probe(self, write: bool) -> None:
        """Raise OSError unless the target exists (and, with write, takes a direct write)."""
    def limits(self) -> dict[str, int]:
        """min_part_bytes, max_part_bytes, max_parts, max_object_bytes (0: none) and
        multipart (a bool)."""
    def list(self, start: str) -> list[str]:
        """Keys directly under the target's prefix that start with `start`."""
    def list_uploads(self, start: str) -> builtins.list[tuple[str, str]]:
        """Multipart uploads in progress whose key starts with `start`: (key, upload id);
        S3 only, empty elsewhere."""
    def abort_upload(self, key: str, id: str) -> None:
        """Abort an upload of `key` (relative to the target's prefix) a dead run left behind."""
    def remove(self, keys: builtins.list[str]) -> int:
        """Remove these files or objects; how many existed."""
    def payload_signing(self) -> str | None:
        """S3: 'unsigned payload' (the default over TLS) or 'payload signed (SHA-256)'."""
    def warm(self, connections: int) -> int:
        """Object stores: open `connections` pooled connections before any phase is timed
        (concurrent HEADs of a name no run writes); how many the store answered. 0 for
        POSIX and memory://."""

class Figures(TypedDict):
    open_start_ns: int | None
    open_end_ns: int | None
    transfer_start_ns: int | None
    transfer_end_ns: int | None
    close_start_ns: int | None
    close_end_ns: int | None
    bytes: int
    ops: int
    errors: int
    first_errors: list[str]
    latency_hdr: bytes
    timeline_width_ns: int
    timeline_bytes: list[int]
    requests: dict[str, int]

class Executor:
    """Runs plans for one rank in one phase; handles stay open between run() calls."""

    def __init__(
        self,
        target: Target,
        *,
        seed: int,
        t0_ns: int = 0,
        in_flight: int = 1,
        verify: bool = False,
        buffer_bytes: int = 0,
    ) -> None:
        """buffer_bytes: allocate and touch in_flight buffers now, before any clock starts
        (in_flight: no more than the phase's transfers, runner/phase.py lanes())."""
    def start(self, t0_ns: int) -> None:
        """Times from now on are ns since t0_ns (clock_ns() right after the phase barrier)."""
    def expect(self, key: str, writes: int, part_bytes: int) -> None:
        """The next open of `key` for writing is followed by `writes` writes of `part_bytes`."""
    def begin_shared(self, key: str, part_bytes: int) -> str | None:
        """Start a shared upload (timed as an open); None if it failed (see figures())."""
    def join_shared(self, key: str, id: str, part_bytes: int) -> None: ...
    def take_receipts(self, key: str) -> list[tuple[int, str]]:
        """(part index, receipt) of every part this rank put into the shared upload of `key`."""
    def finish_shared(self, key: str, id: str, receipts: list[tuple[int, str]]) -> bool:
        """Complete a shared upload (timed as a close); False if it failed (see figures())."""
    def abort_shared(self, key: str, id: str) -> str | None:
        """Abort a shared upload; the error text if that failed too."""
    def run(
        self,
        ops: npt.NDArray[np.uint8],
        key_index: npt.NDArray[np.uint32],
        offsets: npt.NDArray[np.uint64],
        lengths: npt.NDArray[np.uint64],
        counts: npt.NDArray[np.uint64],
        strides: npt.NDArray[np.uint64],
        writers: npt.NDArray[np.uint32],
        keys: list[str],
        *,
        shuffle: tuple[int, int, int] | None = None,
        source: npt.NDArray[np.uint8] | None = None,
        sink: npt.NDArray[np.uint8] | None = None,
        until_ns: int | None = None,
    ) -> None:
        """Execute every row with the GIL released; failures are recorded in figures().

        A transfer row is a run of `counts` transfers, `strides` bytes apart (workloads/contract.py
        Plan). `shuffle`: (seed, rank, phase) of a random order of each batch of transfers.
        With `until_ns` (on clock_ns's scale; payload data only), fio's time_based: each
        in-flight lane goes round its share of the transfers until one ends at or past it.
        """
    def figures(self) -> Figures:
        """Everything run so far; times in ns since t0_ns."""

def plan_operations(
    ops: npt.NDArray[np.uint8],
    key_index: npt.NDArray[np.uint32],
    offsets: npt.NDArray[np.uint64],
    lengths: npt.NDArray[np.uint64],
    counts: npt.NDArray[np.uint64],
    strides: npt.NDArray[np.uint64],
    writers: npt.NDArray[np.uint32],
    keys: list[str],
    *,
    shuffle: tuple[int, int, int] | None = None,
) -> tuple[npt.NDArray[Any], ...]:
    """(ops, key_index, offsets, lengths, writers): one row per operation in the order the
    engine makes them; as long as the plan has transfers (tests, small plans)."""

def histogram_merge(parts: list[bytes]) -> bytes:
    """Merge HdrHistogram V2 encodings into one (exact: counts add)."""

def histogram_summary(encoded: bytes, quantiles: list[float]) -> dict[str, Any]:
    """count, min_ns, max_ns, mean_ns and quantiles_ns (values at each quantile in 0..1)."""

def payload_fill(buf: npt.NDArray[np.uint8], seed: int, writer: int, key: str, offset: int) -> None:
    """Fill buf with writer's payload for key starting at file offset."""

def payload_check(
    buf: npt.NDArray[np.uint8], seed: int, writer: int, key: str, offset: int
) -> tuple[int, int, int] | None:
    """(offset, expected, found) of the first differing byte, or None."""
