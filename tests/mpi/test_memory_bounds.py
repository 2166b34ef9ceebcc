"""No harm from a typo: a rank's memory is bounded by transfer x in-flight requests, never by
the data, and never more lanes than transfers. Peak RSS of each real rank, from the kernel."""

import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.mpi

PEAK_RSS = Path(__file__).with_name("peak_rss.py")
MiB = 1 << 20


@pytest.fixture
def peak_rss_mib(hpcio, mpiexec, tmp_path):
    """peak_rss_mib(*hpcio args) -> the highest peak RSS (MiB) of its 2 ranks."""
    runs = iter(range(1000))

    def measure(*args: object) -> float:
        out = tmp_path / f"rss-{next(runs)}"
        out.mkdir()
        launcher = (*mpiexec(2), sys.executable, str(PEAK_RSS), str(out), "--")
        done = hpcio(*args, "-q", launcher=launcher)
        assert done.returncode == 0, done.stderr
        peaks = [int(p.read_text()) / 1024 for p in out.glob("rss.*")]
        assert len(peaks) == 2
        return max(peaks)

    return measure


def test_in_flight_beyond_the_transfers_reserves_no_more_buffers(
    peak_rss_mib, file_url, target_dir
):
    # 4096 lane buffers of 64 KiB were reserved and touched: 256 MiB per rank for one transfer.
    run = ("run", "--pattern", "mfmw", "--target", file_url(target_dir), "--size-per-rank",
           "64KiB", "--transfer", "64KiB")  # fmt: skip
    one = peak_rss_mib(*run, "--in-flight", "1")
    typo = peak_rss_mib(*run, "--in-flight", "4096")
    assert typo < one + 32, f"{typo:.0f} MiB at --in-flight 4096, {one:.0f} MiB at 1"


def sparse_rank_files(directory: Path, size: int) -> None:
    """Files of `size` that hold nothing but a hole: reading them costs no storage."""
    for rank in range(2):
        with open(directory / f"hpcio-rank{rank:06d}.dat", "wb") as f:
            f.truncate(size)


@pytest.mark.parametrize("order", [(), ("--random",)])
def test_memory_does_not_grow_with_the_data(peak_rss_mib, file_url, target_dir, order):
    """4 KiB transfers over 64 MiB and over 16 GiB per rank (4 Mi transfers: 250 MiB of plan
    and lane lists per rank before), time-based so the size costs no time."""
    peaks = {}
    for size in ("64MiB", "16GiB"):
        sparse_rank_files(target_dir, {"64MiB": 64 * MiB, "16GiB": 16 << 30}[size])
        peaks[size] = peak_rss_mib(
            "run", "--pattern", "mfmr", "--target", file_url(target_dir), "--phases", "read",
            "--keep", "--size-per-rank", size, "--transfer", "4KiB", "--in-flight", "4",
            "--duration", "0.2", *order,
        )  # fmt: skip
    assert peaks["16GiB"] < peaks["64MiB"] + 16, peaks
