"""The C heap of a rank, set to the state a long-running application's reaches.

glibc serves a large malloc (at first anything from 128 KiB) with a fresh mmap and returns it
to the kernel on free, so every touch of it faults a page in again. It raises that threshold
the first time such a block is freed, up to 32 MiB, and from then on serves those sizes from
the heap. Whether a process got there depends on what it happened to allocate and free before,
and MPI-IO allocates per call: ROMIO's and OMPIO's collective buffers on the aggregators. A
rank of hpcio measured at 4 ranks on 2 cores took 388,000 minor faults (one per page of a
4 MiB buffer, every Write_at_all) and half the bandwidth of the same calls in a plain script
whose heap had been raised by chance (docs/benchmarks.md, "bench/vs_libraries"). Setting the
threshold where glibc would end (32 MiB, and the trim threshold at twice that, as glibc's own
adjustment does) makes a figure independent of that chance.
"""

from __future__ import annotations

import ctypes
import os

#: mallopt's parameters (malloc.h).
_M_TRIM_THRESHOLD = -1
_M_MMAP_THRESHOLD = -3
#: glibc's DEFAULT_MMAP_THRESHOLD_MAX on 64-bit: where its dynamic threshold stops rising.
MMAP_THRESHOLD_BYTES = 32 << 20
#: Twice the mmap threshold, as glibc sets it when it raises the threshold itself.
TRIM_THRESHOLD_BYTES = 2 * MMAP_THRESHOLD_BYTES


def settle() -> bool:
    """Fix glibc's thresholds at their steady state; False where there is no glibc mallopt or
    the user set them already (MALLOC_MMAP_THRESHOLD_ and the like, or GLIBC_TUNABLES's
    glibc.malloc: theirs win)."""
    tuned = ("MALLOC_MMAP_THRESHOLD_", "MALLOC_TRIM_THRESHOLD_")
    if any(name in os.environ for name in tuned) or "glibc.malloc" in os.environ.get(
        "GLIBC_TUNABLES", ""
    ):
        return False
    try:
        mallopt = ctypes.CDLL(None).mallopt
    except (OSError, AttributeError):  # not glibc (macOS has no mallopt)
        return False
    mallopt.argtypes = (ctypes.c_int, ctypes.c_int)
    return bool(mallopt(_M_MMAP_THRESHOLD, MMAP_THRESHOLD_BYTES)) and bool(
        mallopt(_M_TRIM_THRESHOLD, TRIM_THRESHOLD_BYTES)
    )
