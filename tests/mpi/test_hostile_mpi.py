"""Hostile input that only a real MPI job meets (issue 25): a library API reading files that
are not there, or shorter than the run reads. One line naming the rank and the library's
error, exit 1, and the files that were there before left as they were."""

from __future__ import annotations

import pytest
from hpcio.workloads import apis


def only_line(done) -> str:
    assert "Traceback" not in done.stderr, done.stderr
    lines = [line for line in done.stderr.splitlines() if line.strip()]
    assert len(lines) == 1, done.stderr
    return lines[0]


@pytest.mark.parametrize(
    ("api", "says"),
    [
        ("mpiio", "MPI_ERR_NO_SUCH_FILE"),
        ("hdf5", "Unable to open file"),
        ("netcdf", "no such file or directory"),
        ("pnetcdf", "does not exist"),
    ],
)
def test_reading_files_that_are_not_there(hpcio, target_dir, file_url, api, says):
    if apis.missing(api):
        pytest.skip(apis.missing(api))
    done = hpcio("run", "--api", api, "--pattern", "sfmw", "--target", file_url(target_dir),
                 "--size-per-rank", "1MiB", "-n", "2", "--phases", "read", "-q")  # fmt: skip
    assert done.returncode == 1, done.stderr
    line = only_line(done)
    assert line.startswith("hpcio: error: read phase of iteration 1 failed: rank "), line
    assert f"OSError: {api} open_read hpcio-shared.dat: " in line and says in line, line
    assert list(target_dir.iterdir()) == []


def test_a_kept_file_cut_short_is_a_short_read(hpcio, target_dir, file_url):
    common = ("run", "--api", "mpiio", "--pattern", "mfmw", "--target", file_url(target_dir),
              "--size-per-rank", "2MiB", "-n", "2", "-q")  # fmt: skip
    done = hpcio(*common, "--phases", "write", "--keep")
    assert done.returncode == 0, done.stderr
    cut = target_dir / "hpcio-rank000001.dat"
    with open(cut, "r+b") as kept:
        kept.truncate(1 << 20)
    done = hpcio(*common, "--phases", "read", "--verify")
    assert done.returncode == 1, done.stderr
    assert only_line(done) == (
        "hpcio: error: read phase of iteration 1 failed: rank 1: OSError: mpiio read "
        "hpcio-rank000001.dat: read 0 of 1048576 bytes at offset 1048576 (the file is shorter)"
    )
    assert "verify failed" not in done.stderr
    assert sorted(p.name for p in target_dir.iterdir()) == [
        "hpcio-rank000000.dat", "hpcio-rank000001.dat"
    ]  # fmt: skip
