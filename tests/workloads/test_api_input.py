"""What the library APIs and stripes refuse, in one line each, before anything runs; and a
library missing on the machine said so, not a traceback."""

import shutil
import sys

import pytest
from hpcio.workloads import striping
from specs import run_spec

MiB = 1 << 20


def refuse(hpcio, error_line, target_dir, file_url, *more, pattern="sfmw"):
    done = hpcio("run", "--pattern", pattern, "-n", 2, "--size-per-rank", "4MiB",
                 "--target", file_url(target_dir), *more)  # fmt: skip
    assert done.returncode == 2
    return error_line(done).removeprefix("hpcio: error: ")


@pytest.mark.parametrize(
    ("more", "said"),
    [
        (("--chunk-size", "3MiB", "--api", "hdf5"),
         "--chunk-size 3 MiB does not divide each rank's block of 4 MiB: the chunks would "
         "straddle ranks' data"),
        (("--chunk-size", "1MiB", "--api", "mpiio"),
         "--chunk-size is for --api hdf5 or netcdf (chunked datasets), not mpiio"),
        (("--chunk-size", "1MiB"),
         "--chunk-size is for --api hdf5 or netcdf (chunked datasets), not posix"),
        (("--hint", "cb_nodes=1"),
         "--hint is for --api mpiio, hdf5, netcdf or pnetcdf; posix takes no MPI-IO hints"),
        (("--api", "pnetcdf", "--direct"),
         "--direct is for --api posix; pnetcdf goes through MPI's own I/O"),
    ],
)  # fmt: skip
def test_bad_library_options_get_one_line(hpcio, error_line, target_dir, file_url, more, said):
    assert refuse(hpcio, error_line, target_dir, file_url, *more) == said


def test_a_library_api_on_an_object_store_is_refused(hpcio, error_line):
    done = hpcio("run", "--pattern", "sfmw", "--size-per-rank", "4MiB", "--api", "netcdf",
                 "--target", "s3://bucket")  # fmt: skip
    assert done.returncode == 2
    assert error_line(done) == (
        "hpcio: error: --api netcdf does its I/O through a file system: give a file:// target "
        "(object stores take --api posix)"
    )


@pytest.mark.skipif(shutil.which("lfs") is not None, reason="a Lustre client: lfs sets stripes")
def test_stripes_with_neither_lfs_nor_mpiio_are_refused(hpcio, error_line, target_dir, file_url):
    said = refuse(hpcio, error_line, target_dir, file_url, "--stripe-count", "4")
    assert said == (
        "--stripe-count/--stripe-size: there is no lfs here (not a Lustre client) and sfmw with "
        "--api posix takes no MPI-IO hints; run on Lustre or use --api mpiio, hdf5, netcdf or "
        "pnetcdf"
    )


def test_stripes_on_an_object_store_are_refused(hpcio, error_line):
    done = hpcio("run", "--pattern", "sfmw", "--size-per-rank", "4MiB", "--stripe-count", "2",
                 "--target", "s3://bucket")  # fmt: skip
    assert error_line(done) == (
        "hpcio: error: --stripe-count and --stripe-size are Lustre layouts: s3 targets have none"
    )


def test_the_setstripe_command_carries_both_options():
    run = run_spec("sfmw", size_per_rank_bytes=MiB, api="mpiio", stripe_count=4,
                   stripe_size_bytes=MiB)  # fmt: skip
    assert striping.setstripe_command(run, "/l/f") == [
        "lfs", "setstripe", "-c", "4", "-S", str(MiB), "/l/f"
    ]  # fmt: skip
    only_count = run_spec("sfmw", size_per_rank_bytes=MiB, api="mpiio", stripe_count=2)
    assert striping.setstripe_command(only_count, "/l/f") == ["lfs", "setstripe", "-c", "2", "/l/f"]


def test_a_missing_parallel_library_is_one_line(hpcio_process, error_line, target_dir, file_url,
                                                tmp_path):  # fmt: skip
    # A machine whose h5py is absent (another OS, no root): an importable stand-in that fails.
    shadow = tmp_path / "shadow" / "h5py"
    shadow.mkdir(parents=True)
    (shadow / "__init__.py").write_text("raise ImportError('No module named h5py')\n")
    paths = [str(tmp_path / "shadow"), *[p for p in sys.path if p]]
    done = hpcio_process("run", "--pattern", "sfmw", "--size-per-rank", "4MiB", "--api", "hdf5",
                         "--target", file_url(target_dir),
                         env={"PYTHONPATH": ":".join(paths)})  # fmt: skip
    assert done.returncode == 2
    assert error_line(done) == (
        "hpcio: error: --api hdf5 needs h5py built with parallel HDF5 (scripts/setup installs it)"
    )
