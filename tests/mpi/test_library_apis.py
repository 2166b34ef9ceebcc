"""--api hdf5, netcdf and pnetcdf (IOR's -a HDF5 and NCMPI) under real mpiexec: every pattern
they express, 4 ranks, --verify; the files read back by an independent reader (h5py, netCDF4,
ncdump); a changed byte caught; striping hints recorded."""

import shutil
import subprocess
import sys

import numpy as np
import pytest
from hpcio import _engine

pytestmark = pytest.mark.mpi

MiB = 1 << 20
SIZES = ("--size-per-rank", "1MiB", "--transfer", "256KiB")
SHARED = "hpcio-shared.dat"


def run(hpcio, url, pattern, *more, ranks=4):
    return hpcio("run", "-n", ranks, "--pattern", pattern, "--target", url, *SIZES, "-q", *more)


@pytest.mark.parametrize("api", ["hdf5", "netcdf", "pnetcdf"])
@pytest.mark.parametrize(
    ("pattern", "collective"),
    [("sfmw", True), ("sfmw", False), ("mfmw", False), ("sfmr", True), ("mfmr", True),
     ("sfsw", False)],
)  # fmt: skip
def test_every_pattern_through_each_library(hpcio, file_url, target_dir, tmp_path,
                                            read_documents, api, pattern, collective):  # fmt: skip
    out = tmp_path / "r.jsonl"
    more = ("--collective",) if collective else ()
    done = run(hpcio, file_url(target_dir), pattern, "--api", api, *more, "--verify", "-o", out)
    assert done.returncode == 0, done.stderr
    (doc,) = read_documents(out)
    assert (doc["run"]["params"]["api"], doc["run"]["params"]["collective"]) == (api, collective)
    for phase in doc["phases"]:
        moved = 4 * MiB * (4 if pattern == "sfmr" else 1)  # sfmr: every rank reads the file
        assert (phase["bytes_total"], phase["errors"]) == (moved, 0)
        if pattern == "sfsw":  # rank 0 alone, a call per gathered piece (a rank's 1 MiB)
            assert phase["requests"][phase["phase"]] == 4
            assert phase["requests"]["open"] == phase["requests"]["close"] == 1
        else:
            assert phase["requests"][phase["phase"]] == moved // (256 << 10)
            assert phase["requests"]["open"] == phase["requests"]["close"] == 4
    assert list(target_dir.iterdir()) == []


def _variable(api, path, tmp_path):
    """The file's one variable, as bytes, read by the library's own serial reader, in a child
    process: importing netCDF4 starts MPI, which must not start in pytest's process (its
    later mpiexec launches would fail)."""
    out = tmp_path / "variable.npy"
    if api == "hdf5":
        read = "import h5py; data = h5py.File(sys.argv[1], 'r')['data'][...]"
    else:  # netCDF4 reads NetCDF-4 and CDF-5 alike
        read = ("import netCDF4; f = netCDF4.Dataset(sys.argv[1]); f.set_auto_maskandscale(False); "
                "data = np.asarray(f.variables['data'][...])")  # fmt: skip
    code = f"import sys, numpy as np; {read}; np.save(sys.argv[2], data)"
    subprocess.run([sys.executable, "-c", code, str(path), str(out)], check=True)
    return np.load(out)


@pytest.mark.parametrize("pattern", ["sfmw", "sfsw"])
@pytest.mark.parametrize("api", ["hdf5", "netcdf", "pnetcdf"])
def test_an_independent_reader_finds_every_rank_s_bytes(hpcio, file_url, target_dir, tmp_path,
                                                        api, pattern):  # fmt: skip
    key = {"sfmw": SHARED, "sfsw": "hpcio-single.dat"}[pattern]
    done = run(hpcio, file_url(target_dir), pattern, "--api", api, "--keep", "--fsync",
               "--phases", "write", "--seed", "7")  # fmt: skip
    assert done.returncode == 0, done.stderr
    data = _variable(api, target_dir / key, tmp_path)
    assert data.dtype == np.uint8 and data.shape == (4 * MiB,)
    for rank in range(4):
        block = np.ascontiguousarray(data[rank * MiB : (rank + 1) * MiB])
        assert _engine.payload_check(block, 7, rank, key, rank * MiB) is None


@pytest.mark.skipif(shutil.which("ncdump") is None, reason="ncdump (netcdf-bin) not installed")
@pytest.mark.parametrize(("api", "kind"), [("netcdf", "netCDF-4"), ("pnetcdf", "cdf5")])
def test_ncdump_reads_the_header(hpcio, file_url, target_dir, api, kind):
    done = run(hpcio, file_url(target_dir), "sfmw", "--api", api, "--keep", "--phases", "write")
    assert done.returncode == 0, done.stderr
    path = str(target_dir / SHARED)
    header = subprocess.run(["ncdump", "-h", path], capture_output=True, text=True, check=True)
    assert f"x = {4 * MiB} ;" in header.stdout and "ubyte data(x) ;" in header.stdout
    kind_said = subprocess.run(["ncdump", "-k", path], capture_output=True, text=True, check=True)
    assert kind_said.stdout.strip() == kind


@pytest.mark.parametrize("api", ["hdf5", "netcdf", "pnetcdf"])
def test_verify_finds_a_changed_byte(hpcio, file_url, target_dir, api):
    url = file_url(target_dir)
    done = run(hpcio, url, "sfmw", "--api", api, "--phases", "write", "--keep")
    assert done.returncode == 0, done.stderr
    path = target_dir / SHARED
    data = bytearray(path.read_bytes())
    # Find rank 2's block by its first bytes (where the library put the variable is its own).
    first = np.empty(64, np.uint8)
    _engine.payload_fill(first, 1, 2, SHARED, 2 * MiB)
    at = data.find(first.tobytes())
    assert at >= 0
    data[at + 12_345] ^= 0x5A
    path.write_bytes(bytes(data))
    done = run(hpcio, url, "sfmw", "--api", api, "--phases", "read", "--verify")
    assert done.returncode == 1
    assert f"rank 2: verify failed: {SHARED} offset {2 * MiB + 12_345}" in done.stderr


def test_a_chunked_dataset_is_chunked(hpcio, file_url, target_dir):
    import h5py

    done = run(hpcio, file_url(target_dir), "mfmw", "--api", "hdf5", "--chunk-size", "128KiB",
               "--keep", "--verify")  # fmt: skip
    assert done.returncode == 0, done.stderr
    with h5py.File(target_dir / "hpcio-rank000003.dat", "r") as f:
        assert f["data"].chunks == (128 << 10,)


@pytest.mark.parametrize("api", ["mpiio", "hdf5"])
def test_stripes_become_mpiio_hints_without_lfs(hpcio, file_url, target_dir, tmp_path,
                                                read_documents, api):  # fmt: skip
    if shutil.which("lfs"):
        pytest.skip("lfs is here: stripes are set by lfs setstripe")
    out = tmp_path / "r.jsonl"
    done = run(hpcio, file_url(target_dir), "sfmw", "--api", api, "--stripe-count", "2",
               "--stripe-size", "1MiB", "-o", out)  # fmt: skip
    assert done.returncode == 0, done.stderr
    (doc,) = read_documents(out)
    assert doc["run"]["striping"] == "mpiio-hints"
    assert (doc["run"]["stripe_count"], doc["run"]["stripe_size_bytes"]) == (2, MiB)
    if api == "mpiio":  # what MPI-IO held (ROMIO keeps striping hints on every file system)
        held = doc["phases"][0]["metrics"]["mpiio_hints_in_effect"]
        assert held == "striping_factor=2,striping_unit=1048576", held
