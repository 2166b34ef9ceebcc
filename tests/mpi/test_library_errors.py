"""A library call that reports an error, or writes less than it was given, fails the phase on
every rank: one line naming the rank and the library's error, a non-zero exit, no files left;
with --verify it is still the library's error, not a verify failure (issue 25)."""

from __future__ import annotations

import os

import pytest

#: 2 ranks x 32 MiB into a 16 MiB file system: every API runs out of space in the write phase.
_FULL = ("--size-per-rank", "32MiB", "--no-space-check", "-n", "2", "-i", "1")
_NO_SPACE = "No space left on device"


def small_tmpfs(target_dir, megabytes):
    setup = f"mount -t tmpfs -o size={megabytes}m none '{target_dir}'"
    return ("unshare", "-m", "sh", "-c", f'{setup} && exec "$@"', "sh")


def hpcio_line(done) -> str:
    """The one line hpcio says; the MPI library's own messages (ompio's) are its own."""
    lines = [line for line in done.stderr.splitlines() if line.startswith("hpcio")]
    assert len(lines) == 1, done.stderr
    assert "Traceback" not in done.stderr, done.stderr
    return lines[0]


@pytest.mark.parametrize(
    ("api", "pattern", "says"),
    [
        ("mpiio", "mfmw", _NO_SPACE),
        ("mpiio", "sfmw", _NO_SPACE),
        ("mpiio", "sfsw", _NO_SPACE),
        ("pnetcdf", "mfmw", _NO_SPACE),
        ("pnetcdf", "sfmw", _NO_SPACE),
        ("hdf5", "mfmw", "file write failed"),
        ("hdf5", "sfsw", "file write failed"),
        ("netcdf", "mfmw", "HDF error"),
    ],
)
@pytest.mark.parametrize("extra", [(), ("--verify",), ("--collective",)])
def test_a_full_disk_fails_the_write_phase(
    hpcio, target_dir, file_url, private_mounts, api, pattern, says, extra
):
    if extra == ("--collective",) and pattern != "sfmw":
        pytest.skip("--collective is for a shared file")
    from hpcio.workloads import apis

    if apis.missing(api):
        pytest.skip(apis.missing(api))
    done = hpcio("run", "--api", api, "--pattern", pattern, "--target", file_url(target_dir),
                 *_FULL, *extra, launcher=small_tmpfs(target_dir, 16))  # fmt: skip
    assert done.returncode == 1, done.stderr
    line = hpcio_line(done)
    assert line.startswith("hpcio: error: write phase of iteration 1 failed: rank "), line
    assert f"OSError: {api} " in line and says in line, line
    assert "verify failed" not in done.stderr
    assert list(target_dir.iterdir()) == []


def full_tmpfs(target_dir):
    """A launcher running hpcio with a 4 MiB tmpfs on `target_dir`, an empty directory `run`
    in it and every page but two taken by a file: one for hpcio's lock of the target, one for
    its probe, which then leaves it to at most the first page of one of the run's files."""
    setup = (f"mount -t tmpfs -o size=4m none '{target_dir}' && mkdir '{target_dir}/run' && "
             f"dd if=/dev/zero of='{target_dir}/filler' bs=4k count=1022 2>/dev/null")  # fmt: skip
    return ("unshare", "-m", "sh", "-c", f'{setup} && exec "$@"', "sh")


@pytest.mark.parametrize(
    "run",
    [
        ("--api", "hdf5", "--pattern", "mfmw"),
        ("--api", "hdf5", "--pattern", "sfmw"),
        ("--api", "hdf5", "--pattern", "sfmw", "--collective"),
        ("--api", "netcdf", "--pattern", "mfmw"),
        # Not a shared NetCDF-4 file (sfmw, allwrite): when its metadata cannot be written,
        # parallel HDF5's flush hangs, one rank in a barrier and the other in a broadcast.
        ("--workload", "collect_and_write"),
    ],
    ids=lambda run: "-".join(
        w.lstrip("-") for w in run if w not in ("--api", "--pattern", "--workload")
    ),
)
def test_a_disk_full_before_the_first_byte_fails_in_one_line(
    hpcio, target_dir, file_url, private_mounts, run
):
    # Nothing of the file is on the disk: the library's close, after the failed write, has
    # no room for the file's metadata either. Such a close used to kill the rank (HDF5 and
    # netCDF-C touch the half-closed file again): the file is detached from the disk first.
    from hpcio.workloads import apis

    if apis.missing(run[1] if run[0] == "--api" else "netcdf"):
        pytest.skip(apis.missing("hdf5") or apis.missing("netcdf"))
    done = hpcio("run", *run, "--target", file_url(target_dir / "run"), *_FULL,
                 launcher=full_tmpfs(target_dir))  # fmt: skip
    assert done.returncode == 1, done.stderr
    line = hpcio_line(done)
    assert "write phase of iteration 1 failed: rank " in line, line
    assert "signal" not in done.stderr


@pytest.mark.parametrize("api", ["hdf5", "netcdf"])
def test_a_collective_error_of_one_rank_does_not_hang_the_others(
    hpcio, target_dir, file_url, private_mounts, api
):
    # HDF5 reports a failed collective write on the rank whose write failed only: that rank
    # makes the rest of its collective calls empty so the others are not left waiting.
    from hpcio.workloads import apis

    if apis.missing(api):
        pytest.skip(apis.missing(api))
    done = hpcio("run", "--api", api, "--pattern", "sfmw", "--collective",
                 "--target", file_url(target_dir), *_FULL,
                 launcher=small_tmpfs(target_dir, 16))  # fmt: skip
    assert done.returncode == 1, done.stderr
    assert "write phase of iteration 1 failed: rank " in hpcio_line(done)
    assert list(target_dir.iterdir()) == []


def test_runs_that_fit_still_pass(hpcio, target_dir, file_url, private_mounts):
    for api in ("mpiio", "pnetcdf"):
        done = hpcio("run", "--api", api, "--pattern", "sfmw", "--target", file_url(target_dir),
                     "--size-per-rank", "4MiB", "-n", "2", "-i", "1", "--verify", "-q",
                     launcher=small_tmpfs(target_dir, 16))  # fmt: skip
        assert (done.returncode, done.stderr) == (0, ""), done.stderr


@pytest.mark.parametrize("extra", [(), ("--collective",)])
def test_a_read_that_fails_inside_a_row_of_reads_fails_the_phase(
    hpcio, target_dir, file_url, extra
):
    # Rank 1 reads the shared file's second half in eight 1 MiB calls (one row of the plan,
    # read in a loop of its own); cut at 12 MiB, its fifth call finds the end of the file.
    # Collective, rank 0 still gets its answers: rank 1 makes its remaining calls empty.
    run = ("run", "--api", "mpiio", "--pattern", "sfmw", "--target", file_url(target_dir),
           "--size-per-rank", "8MiB", "--transfer", "1MiB", "-n", "2", "-i", "1",
           *extra)  # fmt: skip
    done = hpcio(*run, "--keep", "-q")
    assert done.returncode == 0, done.stderr
    (shared,) = target_dir.iterdir()
    os.truncate(shared, 12 << 20)
    done = hpcio(*run, "--phases", "read")
    assert done.returncode == 1, done.stderr
    line = hpcio_line(done)
    assert "read phase of iteration 1 failed: rank 1: " in line, line
    assert f"mpiio read {shared.name}: read 0 of 1048576 bytes at offset {12 << 20}" in line, line
