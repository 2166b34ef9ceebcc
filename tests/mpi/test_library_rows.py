"""The engine's rows of library reads and writes (engine/src/library_rows.rs, used by
apis/library_walk.py where no trace is asked, and for reads no --verify) read what the Python
wrappers read, write the payload the Python wrappers write, time every call, and stop at the
first failed call with what the library returned, or before the next call once the rank is
interrupted. One
process with MPI started as a singleton; each library through hpcio's own apis module, on
MPI.COMM_SELF."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

_SCRIPT = r"""
import json, sys
import numpy as np
from mpi4py import MPI
from hpcio.workloads import apis

api, path = sys.argv[1], sys.argv[2]
library = apis.library(api)
L, N = 64 << 10, 16
data = (np.arange(N * L, dtype=np.uint64) * 7 % 251).astype(np.uint8)
from hpcio import _engine
said = {}
# Rows of writes from a payload buffer: the odd transfers, then the even ones.
SEED, KEY = 11, "rows.dat"
payload = _engine.PayloadBuffer(SEED, L)
made = library.open_file(path, MPI.COMM_SELF, MPI.INFO_NULL, create=True, size=N * L,
                         chunk=None, collective=False)
odd = made.row((payload, 3, KEY, L), L, L, 2 * L, N // 2)
if odd is None:  # this library's writes go through its Python binding, a call at a time
    for n in range(N):
        payload.fill(3, KEY, n * L, L)
        made.write(n * L, payload.view[:L])
    said["writes"] = None
else:
    even = made.row((payload, 3, KEY, L), L, 0, 2 * L, N // 2)
    said["writes"] = [len(odd[0]), odd[2], len(even[0]), even[2],
                      bool(np.all(odd[0] <= odd[1])), bool(np.all(odd[1][:-1] <= odd[0][1:]))]
made.close()
check = library.open_file(path, MPI.COMM_SELF, MPI.INFO_NULL, create=False, size=N * L,
                          chunk=None, collective=False)
back = np.empty(N * L, np.uint8)
for n in range(N):
    check.read(n * L, back[n * L:(n + 1) * L])
check.close()
said["written"] = _engine.payload_check(back, SEED, 3, KEY, 0)
made = library.open_file(path, MPI.COMM_SELF, MPI.INFO_NULL, create=True, size=N * L,
                         chunk=None, collective=False)
for n in range(N):
    made.write(n * L, data[n * L:(n + 1) * L])
made.close()
opened = library.open_file(path, MPI.COMM_SELF, MPI.INFO_NULL, create=False, size=N * L,
                           chunk=None, collective=False)
out = np.empty(L, np.uint8)
# Every transfer alone, and the whole file as rows of every other transfer.
said["alone"] = all(
    opened.row(out, L, n * L, 0, 1)[2] is None and np.array_equal(out, data[n * L:(n + 1) * L])
    for n in range(N)
)
starts, ends, failed = opened.row(out, L, L, 2 * L, N // 2)
said["row"] = [len(starts), len(ends), failed, bool(np.all(starts <= ends)),
               bool(np.all(ends[:-1] <= starts[1:])),
               bool(np.array_equal(out, data[(N - 1) * L:N * L]))]
# A row that runs past the end of the variable: the calls before it succeed, then it stops.
starts, ends, failed = opened.row(out, L, (N - 3) * L, L, 6)
said["past_end"] = [len(starts), failed is not None and failed[0] != 0,
                    opened.row_error(*failed, N * L, L, False) if failed else None]
try:  # the same call through the Python binding, for its words
    opened.read(N * L, out)
    said["binding_says"] = None
except library.Error as e:
    said["binding_says"] = str(e)
# An interrupted rank (the engine's cancel flag, which its signal handler sets) stops the row.
_engine.cancel(True)
said["cancelled"] = opened.row(out, L, 0, L, N)[2]
_engine.cancel(False)
opened.close()
print(json.dumps(said))
"""


@pytest.mark.parametrize("api", ["mpiio", "hdf5", "pnetcdf"])
def test_the_engine_reads_what_the_library_reads_and_stops_at_a_failed_call(api, tmp_path):
    from hpcio.workloads import apis

    if apis.missing(api):
        pytest.skip(apis.missing(api))
    done = subprocess.run([sys.executable, "-c", _SCRIPT, api, str(tmp_path / "rows.dat")],
                          capture_output=True, text=True, timeout=120, check=False)  # fmt: skip
    assert done.returncode == 0, done.stderr
    said = json.loads(done.stdout.splitlines()[-1])
    assert said["writes"] == [8, None, 8, None, True, True]
    assert said["written"] is None  # every byte the payload's, as the Python wrappers write it
    assert said["alone"] is True
    assert said["row"] == [8, 8, None, True, True, True]
    calls, failed, words = said["past_end"]
    assert calls == 3 and failed, said
    assert words, said
    assert said["cancelled"] == [-2, 0, None]  # library_rows.rs CANCELLED, before any call
    if api == "mpiio":
        assert words == f"read 0 of {64 << 10} bytes at offset {16 << 16} (the file is shorter)"
    if api == "hdf5":  # HDF5's error stack, as h5py words it: outermost (innermost)
        assert words == said["binding_says"], said
