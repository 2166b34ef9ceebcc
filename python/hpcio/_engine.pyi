"""Stubs for hpcio._engine, the Rust engine (engine/src/lib.rs); tests/engine/test_stub.py
keeps the two in step."""

import builtins
from os import PathLike
from typing import Any

import numpy as np
import numpy.typing as npt

#: Storage request kinds the engine counts, in its order (phases[].requests keys).
REQUEST_KINDS: list[str]
STORE_FAILURES: list[str]
#: Names of the op codes in a trace (take_trace's second column), by code.
TRACE_OPS: list[str]
#: Operations an executor or recorder keeps by default when tracing (the rest are counted).
TRACE_LIMIT: int

#: take_trace's columns: (file names, op codes (TRACE_OPS), index into the file names,
#: offsets (-1: none), lengths, starts, ends, then how many operations past the limit were
#: not kept), times on clock_ns()'s scale.
TraceColumns = tuple[
    list[str],
    npt.NDArray[np.uint8],
    npt.NDArray[np.uint32],
    npt.NDArray[np.int64],
    npt.NDArray[np.uint64],
    npt.NDArray[np.uint64],
    npt.NDArray[np.uint64],
    int,
]

def cancel(cancelled: bool) -> None:
    """Stop (True) every running and later Executor.run after the transfers in flight, or
    allow runs again (False)."""

def ended_threads_waited_ns() -> int:
    """How long the threads that ended so far (the engine's, and those that called
    thread_ends) waited for a core while runnable, ns (0 where the kernel keeps no schedstat)."""

def thread_ends() -> None:
    """The calling thread is about to end: count how long it waited for a core."""

def clock_ns() -> int:
    """Monotonic clock in ns, the same one the engine's figures use."""

def live_counters() -> tuple[int, int, list[int]]:
    """(bytes, operations, operations per latency bucket) this process transferred so far:
    readable while a plan runs (the live status line samples them)."""

def live_bucket_tops() -> list[int]:
    """The top of each of live_counters()'s latency buckets, ns (16 per power of two)."""

def debug_build() -> bool:
    """True when the engine was compiled without optimisations."""

class Target:
    """A storage target opened from a URL (file:///path, s3://, az://, gs://, memory://, or
    null:// / null://?delay=2ms: writes discarded, reads answered with the expected payload,
    every request held for the delay)."""

    def __init__(
        self,
        url: str,
        *,
        direct: bool = False,
        in_flight: int = 1,
        options: dict[str, str] = ...,
        journal_dir: str | PathLike[str] | None = None,
        job: str = "",
    ) -> None:
        """options: object_store configuration keys and hpcio's retry settings; in_flight
        sizes an object target's I/O runtime; multipart uploads in progress are journaled in
        journal_dir under job (runner/journal.py), not at all without journal_dir."""
    @property
    def kind(self) -> str: ...
    def probe(self, write: bool) -> None:
        """Raise OSError unless the target exists (and, with write, takes a direct write)."""
    def warm(self, connections: int) -> int:
        """Object stores: open `connections` pooled connections before any phase is timed
        (concurrent HEADs of a name no run writes); how many the store answered. 0 for
        POSIX, memory:// and null://."""
    def payload_signing(self) -> str | None:
        """S3: 'unsigned payload' (the default over TLS) or 'payload signed (SHA-256)'."""
    def limits(self) -> dict[str, int | bool]:
        """min_part_bytes, max_part_bytes, max_parts, max_object_bytes (0: none), multipart."""
    def list(self, start: str) -> builtins.list[str]:
        """Keys directly under the target's prefix that start with `start`."""
    def list_uploads(self, start: str) -> builtins.list[tuple[str, str]]:
        """(key, upload id) of multipart uploads in progress whose key starts with `start`
        (S3 only; empty elsewhere)."""
    def abort_upload(self, key: str, id: str) -> None:
        """Abort an upload of `key` that a dead run left behind."""
    def remove(self, keys: builtins.list[str]) -> int:
        """Remove these files or objects; how many existed."""

class Figures:
    """What one rank did in one phase, from a plan (Executor.figures) or from Python's own
    calls (Recorder.figures): the same fields either way. Times are ns since t0."""

    @property
    def open_ns(self) -> tuple[int, int] | None:
        """(earliest start, latest end) of the opens; None when nothing was opened."""
    @property
    def transfer_ns(self) -> tuple[int, int] | None: ...
    @property
    def close_ns(self) -> tuple[int, int] | None:
        """Of the fsyncs, closes and upload completions."""
    @property
    def bytes(self) -> int: ...
    @property
    def ops(self) -> int: ...
    @property
    def errors(self) -> int: ...
    @property
    def first_errors(self) -> list[str]: ...
    @property
    def latency_hdr(self) -> builtins.bytes:
        """The transfers' latencies, an HdrHistogram in V2 encoding."""
    @property
    def ttfb_get_hdr(self) -> builtins.bytes:
        """Time to first byte of the object-store GETs, an HdrHistogram in V2 encoding; b""
        where no GET went to a store."""
    @property
    def ttfb_put_hdr(self) -> builtins.bytes:
        """Time to the response of the object-store PUTs, parts and blocks, likewise."""
    @property
    def read_side(self) -> tuple[int, int, builtins.bytes]:
        """(bytes, operations, latency HdrHistogram in V2 encoding or b"") of the plan's
        reads."""
    @property
    def write_side(self) -> tuple[int, int, builtins.bytes]:
        """Likewise of the plan's writes."""
    @property
    def opens(self) -> int:
        """Opens of files or objects."""
    @property
    def timeline_width_ns(self) -> int: ...
    @property
    def timeline_bytes(self) -> list[int]:
        """Bytes completed in each bucket of timeline_width_ns from t0."""
    @property
    def latency_series_width_ns(self) -> int: ...
    @property
    def latency_series(self) -> list[tuple[int, int, int]]:
        """(interval, latency bucket top in ns, operations), sorted."""
    @property
    def requests(self) -> dict[str, int]:
        """Storage requests by kind (REQUEST_KINDS), those issued only."""
    @property
    def throttled(self) -> int: ...
    @property
    def retried(self) -> int: ...
    @property
    def store_failures(self) -> dict[str, int]:
        """Object-store requests that failed, by cause (STORE_FAILURES), non-zero ones only;
        each attempt counts."""
    def merged(self, other: Figures) -> Figures:
        """Both together: spans widened, counts and requests added, histograms, timelines and
        series merged."""

class Plan:
    """One rank's plan as the engine runs it, checked and converted from its columns once
    (workloads/plans.py Plan.for_engine): opens, fsyncs, closes and runs of `counts`
    transfers, `strides` bytes apart. Immutable."""

    def __init__(
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
    ) -> None:
        """`shuffle`: (seed, rank, phase) of a random order of each batch of transfers.
        ValueError for columns of different lengths, an unknown op code, a key index out of
        range or a run past the largest offset."""
    def __len__(self) -> int:
        """Rows, not transfers."""
    @property
    def keys(self) -> list[str]: ...
    def operations(
        self,
    ) -> tuple[
        npt.NDArray[np.uint8],
        npt.NDArray[np.uint32],
        npt.NDArray[np.uint64],
        npt.NDArray[np.uint64],
        npt.NDArray[np.uint32],
    ]:
        """(ops, key_index, offsets, lengths, writers): one row per operation in the order the
        engine makes them; as long as the plan has transfers (tests, small plans)."""

class Executor:
    """Runs plans for one rank in one phase; handles stay open between run() calls.

    While a plan runs (run_background until it ends, or a call in another thread), every
    method but busy and wait raises RuntimeError."""

    def __init__(
        self,
        target: Target,
        *,
        seed: int,
        t0_ns: int = 0,
        in_flight: int = 1,
        verify: bool = False,
        buffer_bytes: int = 0,
        trace: bool = False,
        trace_limit: int = ...,
    ) -> None:
        """buffer_bytes: allocate and touch in_flight buffers now, before any clock starts
        (in_flight: no more than the phase's transfers, runner/phase.py lanes()); trace: keep
        every operation for take_trace(), up to trace_limit (TRACE_LIMIT) over its life."""
    def start(self, t0_ns: int) -> None:
        """Times from now on are ns since t0_ns (clock_ns() right after the phase barrier)."""
    def expect(self, key: str, writes: int, part_bytes: int) -> None:
        """The next open of `key` for writing is followed by `writes` writes of `part_bytes`."""
    def begin_shared(self, key: str, part_bytes: int) -> str | None:
        """Start a shared upload (timed as an open); its id, None if it failed (figures())."""
    def join_shared(self, key: str, id: str, part_bytes: int) -> None: ...
    def take_receipts(self, key: str) -> list[tuple[int, str]]:
        """(part index, receipt) of every part this rank put into the shared upload of key."""
    def finish_shared(self, key: str, id: str, receipts: list[tuple[int, str]]) -> bool:
        """Complete a shared upload (timed as a close); False if it failed (figures())."""
    def abort_shared(self, key: str) -> str | None:
        """Abort the shared upload of `key` this rank began, if still open (waiting for an
        interrupted call to give the executor back); the error text if that failed too."""
    def run(
        self,
        plan: Plan,
        *,
        source: npt.NDArray[np.uint8] | None = None,
        sink: npt.NDArray[np.uint8] | None = None,
        until_ns: int | None = None,
    ) -> None:
        """Execute every row of `plan` with the GIL released; failures are recorded in
        figures().

        With `until_ns` (on clock_ns's scale; payload data only), fio's time_based: each
        in-flight lane goes round its share of the transfers until one ends at or past it.
        """
    def run_background(self, plan: Plan, *, until_ns: int | None = None) -> None:
        """Start run()'s work on an engine thread and return at once (payload data only), so
        Python can compute while it reads or writes; wait() joins it. The plan is shared with
        that thread, not copied."""
    def wait(self) -> None:
        """Join the plan run_background started (at once if none), with the GIL released;
        cancel(True) stops it after its transfers in flight."""
    @property
    def busy(self) -> bool:
        """Whether a plan is running on it (in the background or in another thread's call)."""
    def figures(self) -> Figures:
        """Everything run so far; times in ns since t0_ns."""
    def take_trace(self) -> TraceColumns | None:
        """The operations traced since the last call; None when not tracing."""

class Recorder:
    """Figures for I/O a Python body does itself: time each call with clock_ns() and record
    it; figures() are what a plan doing that I/O would yield."""

    def __init__(self, *, trace: bool = False, trace_limit: int = ...) -> None:
        """trace: keep every recorded operation, with its file and offset, for take_trace(),
        up to trace_limit (TRACE_LIMIT)."""
    def start(self, t0_ns: int) -> None:
        """Times recorded from now on are taken relative to t0_ns (clock_ns() after the
        phase barrier)."""
    def record(
        self,
        op: str,
        start_ns: int,
        end_ns: int,
        nbytes: int = 0,
        file: str | None = None,
        offset: int | None = None,
    ) -> None:
        """One operation: "open" (open span), "write" or "read" (transfer span, bytes, ops,
        latency histogram, timeline, series), "sync" or "close" (close span). Each is also
        counted in requests as a POSIX target counts it ("sync" as "fsync"). ValueError for
        another op or an end before the start. `file` and `offset`, where the caller knows
        them, go into the trace."""
    def record_many(
        self,
        ops: npt.NDArray[np.uint8],
        starts: npt.NDArray[np.uint64],
        ends: npt.NDArray[np.uint64],
        nbytes: npt.NDArray[np.uint64],
    ) -> None:
        """Many operations at once: ops as plan op codes (workloads.contract.Op; both opens
        are an open), the rest uint64 columns of the same length. All or none are recorded."""
    def error(self, message: str) -> None:
        """A failed operation: counted in errors, the first few messages kept."""
    def figures(self) -> Figures: ...
    def take_trace(self) -> TraceColumns | None:
        """The operations traced since the last call; None when not tracing."""

def histogram_merge(parts: list[bytes]) -> bytes:
    """Merge HdrHistogram V2 encodings into one (exact: counts add)."""

def histogram_summary(encoded: bytes, quantiles: list[float]) -> dict[str, Any]:
    """count, min_ns, max_ns, mean_ns and quantiles_ns (values at each quantile in 0..1)."""

class PayloadBuffer:
    """A write buffer of a Python body's own calls, filled with the payload of each transfer:
    when it already holds the pool bytes of the transfer's position and length, only the
    stamps are rewritten (as the engine's lanes refill theirs)."""

    def __init__(self, seed: int, capacity: int) -> None: ...
    @property
    def view(self) -> npt.NDArray[np.uint8]:
        """The whole buffer, read-only; after fill(), view[:length] is the transfer's data."""
    def fill(self, writer: int, key: str, offset: int, length: int) -> None:
        """Make the first `length` bytes `writer`'s payload of `key` from `offset`
        (ValueError past the capacity)."""

def payload_fill(buf: npt.NDArray[np.uint8], seed: int, writer: int, key: str, offset: int) -> None:
    """Fill buf with writer's payload for key starting at file offset."""

def payload_check(
    buf: npt.NDArray[np.uint8], seed: int, writer: int, key: str, offset: int
) -> tuple[int, int, int] | None:
    """(offset, expected, found) of the first differing byte, or None."""

#: (starts, ends, failed) of a row of library reads or writes: clock_ns() spans of the calls
#: that succeeded, in order, and for the call that failed (None when none did) what it
#: returned, a detail (the bytes a short MPI-IO call moved; SHORT is -1) and the library's
#: words for it where the row read them (HDF5's error stack), else None.
LibraryRow = tuple[
    npt.NDArray[np.uint64], npt.NDArray[np.uint64], tuple[int, int, str | None] | None
]
#: What a row moves through: a buffer to read into (each read as long as it), or
#: (payload, writer, key, length): writes of `length` bytes from the PayloadBuffer, stamped as
#: `writer`'s bytes of `key` before each write.
RowThrough = npt.NDArray[np.uint8] | tuple[PayloadBuffer, int, str, int]

def hdf5_row(
    functions: tuple[int, int, int],
    ids: tuple[int, int, int, int, int],
    through: RowThrough,
    offset: int,
    stride: int,
    count: int,
) -> LibraryRow:
    """`count` reads or writes, from `offset` every `stride`, each a hyperslab and an H5Dread
    or H5Dwrite made by the engine (GIL released). `functions`: the addresses of
    H5Sselect_hyperslab, H5Dread (or H5Dwrite) and H5Ewalk2 (a failed call's words are read
    from HDF5's error stack as h5py says them); `ids`: dataset, memory type, memory space,
    file space, transfer property list."""

def mpiio_row(
    functions: tuple[int, int],
    handles: tuple[int, int, int],
    through: RowThrough,
    offset: int,
    stride: int,
    count: int,
) -> LibraryRow:
    """The same through MPI_File_read_at or MPI_File_write_at (or _all) and MPI_Get_count
    (their addresses), with the file, MPI_BYTE and an MPI_Status as Open MPI's pointers; a
    call that moves fewer bytes fails (-1)."""

def pnetcdf_row(
    call: int,
    ids: tuple[int, int],
    through: RowThrough,
    offset: int,
    stride: int,
    count: int,
) -> LibraryRow:
    """The same through ncmpi_get_vara_uchar or ncmpi_put_vara_uchar (or _all) at address
    `call`, on (ncid, varid)."""
