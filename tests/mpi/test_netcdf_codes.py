"""The four NetCDF programs of reference/002 under real mpiexec at 4 ranks: --verify on every
byte, the file read back by a reader of its own (ncdump, and netCDF4 opened fresh in another
process), a changed byte caught, a missing file failing on every rank without a hang, and the
stripe options carried as MPI-IO hints where there is no lfs."""

import shutil
import subprocess
import sys

import numpy as np
import pytest
from hpcio import _engine

pytestmark = pytest.mark.mpi
#: Where lfs exists, stripes are set by lfs setstripe, not MPI-IO hints.
no_lfs = pytest.mark.skipif(shutil.which("lfs") is not None, reason="a Lustre client")

MiB = 1 << 20
KEY = "hpcio-netcdf.nc"
WRITERS = ("collect_and_write", "allwrite")
READERS = ("read_distribute", "allread")
#: Reads the variable in a process of its own (netCDF4 serial) and writes its raw bytes.
READER = """
import sys, netCDF4
with netCDF4.Dataset(sys.argv[1]) as handle:
    variable = handle.variables["field"]
    variable.set_auto_maskandscale(False)
    print(variable.dtype, *variable.shape)
    open(sys.argv[2], "wb").write(variable[:].tobytes())
"""


def run(hpcio, url, workload, *more, size="1MiB"):
    return hpcio("run", "-n", 4, "--workload", workload, "--target", url,
                 "--size-per-rank", size, "-q", *more)  # fmt: skip


def expected_bytes(ranks, size_per_rank, seed=1):
    """The variable as the payload makes it: each rank's slab keyed by its offset."""
    data = np.empty(ranks * size_per_rank, np.uint8)
    for rank in range(ranks):
        at = rank * size_per_rank
        _engine.payload_fill(data[at : at + size_per_rank], seed, rank, KEY, at)
    return data.tobytes()


@pytest.mark.parametrize(
    ("workload", "collective"),
    [(w, ()) for w in (*WRITERS, *READERS)]
    + [(w, ("--collective",)) for w in ("allwrite", "allread")],
)
def test_each_code_moves_every_byte_verified(hpcio, file_url, target_dir, tmp_path,
                                             read_documents, workload, collective):  # fmt: skip
    out = tmp_path / "r.jsonl"
    phases = ("--phases", "write,read") if workload in WRITERS else ()
    more = ("--gather-chunk", "256KiB") if workload not in ("allwrite", "allread") else ()
    done = run(hpcio, file_url(target_dir), workload, *phases, *collective, *more, "--verify",
               "-o", out)  # fmt: skip
    assert done.returncode == 0, done.stderr
    (doc,) = read_documents(out)
    assert doc["run"]["workload"] == workload
    assert [p["phase"] for p in doc["phases"]] == (["write", "read"] if phases else ["read"])
    for phase in doc["phases"]:
        assert (phase["bytes_total"], phase["errors"]) == (4 * MiB, 0), phase["first_errors"]
        calls = phase["requests"]
        if workload in ("allwrite", "allread"):
            # Every rank opens the shared file and moves its slab in one call.
            assert calls == {"open": 4, phase["phase"]: 4, "close": 4}
        else:
            # Rank 0 alone: 4 slabs of 1 MiB in 256 KiB messages.
            assert calls == {"open": 1, phase["phase"]: 16, "close": 1}
    assert list(target_dir.iterdir()) == []


@pytest.mark.parametrize("workload", WRITERS)
def test_an_independent_reader_finds_the_payload(hpcio, file_url, target_dir, tmp_path,
                                                 workload):  # fmt: skip
    done = run(hpcio, file_url(target_dir), workload, "--keep", "--fsync", "--seed", "7")
    assert done.returncode == 0, done.stderr
    path = target_dir / KEY
    header = subprocess.run(["ncdump", "-h", path], capture_output=True, text=True, check=True)
    assert "float field(y, x) ;" in header.stdout
    assert "y = 1024 ;" in header.stdout and "x = 1024 ;" in header.stdout
    raw = tmp_path / "field.bin"
    read = subprocess.run([sys.executable, "-c", READER, path, raw], capture_output=True,
                          text=True, check=True)  # fmt: skip
    assert read.stdout.split() == ["float32", "1024", "1024"]
    assert raw.read_bytes() == expected_bytes(4, MiB, seed=7)


@pytest.mark.parametrize("reader", READERS)
def test_verify_finds_a_changed_byte_in_the_variable(hpcio, file_url, target_dir, reader):
    url = file_url(target_dir)
    done = run(hpcio, url, "allwrite", "--keep")
    assert done.returncode == 0, done.stderr
    path = target_dir / KEY
    found = subprocess.run(
        [sys.executable, "-c", "import h5py, sys; print(h5py.File(sys.argv[1])['field']"
         ".id.get_offset())", path],
        capture_output=True, text=True, check=True,
    )  # fmt: skip
    data_at = int(found.stdout)
    changed = 2 * MiB + 12_345  # rank 2's slab
    data = bytearray(path.read_bytes())
    data[data_at + changed] ^= 0x5A
    path.write_bytes(bytes(data))
    done = run(hpcio, url, reader, "--phases", "read", "--verify", "--keep")
    assert done.returncode == 1
    assert f"rank 2: verify failed: {KEY} variable field byte {changed}" in done.stderr
    assert "Traceback" not in done.stderr


@pytest.mark.parametrize("reader", READERS)
def test_a_missing_file_fails_every_rank_without_a_hang(hpcio, file_url, target_dir, reader):
    done = run(hpcio, file_url(target_dir), reader, "--phases", "read")
    assert done.returncode == 1
    assert "Traceback" not in done.stderr
    assert "rank 0: OSError: netcdf " in done.stderr and "(and 3 more errors)" in done.stderr


@no_lfs
def test_stripes_become_mpiio_hints_for_allwrite(hpcio, file_url, target_dir, tmp_path,
                                                 read_documents):  # fmt: skip
    out = tmp_path / "r.jsonl"
    done = run(hpcio, file_url(target_dir), "allwrite", "--stripe-count", "2",
               "--stripe-size", "1MiB", "--collective", "-o", out)  # fmt: skip
    assert done.returncode == 0, done.stderr
    (doc,) = read_documents(out)
    assert doc["run"]["striping"] == "mpiio-hints"
    assert (doc["run"]["stripe_count"], doc["run"]["stripe_size_bytes"]) == (2, MiB)


@pytest.mark.parametrize(
    ("workload", "more", "message"),
    [
        pytest.param("collect_and_write", ("--stripe-count", "2"),
         "--stripe-count/--stripe-size: collect_and_write's file is written by rank 0 through "
         "serial NetCDF, not MPI-IO, so only lfs setstripe can stripe it and there is no lfs "
         "here; run on Lustre, or stripe allwrite (MPI-IO hints)", marks=no_lfs),
        ("allread", ("--transfer", "1MiB"),
         "--transfer is for sfsw, sfmw, mfmw, sfmr, mfmr and model-load, not allread"),
        ("allwrite", ("--direct",),
         "--direct: allwrite goes through NetCDF and HDF5's own I/O"),
        ("read_distribute", ("--collective",),
         "--collective is for sfsw, sfmw, mfmw, sfmr, mfmr, allwrite, allread, volume and imaging, "
         "not read_distribute"),
    ],
)  # fmt: skip
def test_what_a_code_cannot_do_gets_one_line(hpcio, file_url, target_dir, error_line, workload,
                                             more, message):  # fmt: skip
    done = run(hpcio, file_url(target_dir), workload, *more)
    assert done.returncode == 2
    assert error_line(done) == f"hpcio: error: {message}"
