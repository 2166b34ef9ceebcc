"""--api mpiio (IOR's -a MPIIO) under real mpiexec: every pattern it expresses, independent and
collective, 4 ranks, --verify; the bytes are the engine's payload, so posix reads them back."""

import pytest

pytestmark = pytest.mark.mpi

MiB = 1 << 20
SIZES = ("--size-per-rank", "1MiB", "--transfer", "256KiB")


def run(hpcio, url, pattern, *more):
    return hpcio("run", "-n", 4, "--pattern", pattern, "--target", url, *SIZES, "-q", *more)


@pytest.mark.parametrize("collective", [(), ("--collective",)], ids=["independent", "collective"])
@pytest.mark.parametrize("pattern", ["sfmw", "mfmw", "sfmr", "mfmr"])
def test_every_pattern_through_mpiio(hpcio, file_url, target_dir, tmp_path, read_documents,
                                     pattern, collective):  # fmt: skip
    out = tmp_path / "r.jsonl"
    done = run(hpcio, file_url(target_dir), pattern, "--api", "mpiio", *collective, "--verify",
               "-o", out)  # fmt: skip
    assert done.returncode == 0, done.stderr
    (doc,) = read_documents(out)
    assert doc["run"]["params"]["api"] == "mpiio"
    assert doc["run"]["params"]["collective"] == bool(collective)
    for phase in doc["phases"]:
        moved = 4 * MiB * (4 if pattern == "sfmr" else 1)  # sfmr: every rank reads the file
        assert (phase["bytes_total"], phase["errors"]) == (moved, 0)
        assert phase["requests"][phase["phase"]] == moved // (256 << 10)
        assert phase["requests"]["open"] == phase["requests"]["close"] == 4
    assert list(target_dir.iterdir()) == []


@pytest.mark.parametrize("pattern", ["sfmw", "mfmw"])
def test_what_mpiio_writes_the_engine_reads_back_verified(hpcio, file_url, target_dir, pattern):
    url = file_url(target_dir)
    done = run(hpcio, url, pattern, "--api", "mpiio", "--collective", "--phases", "write",
               "--keep", "--fsync")  # fmt: skip
    assert done.returncode == 0, done.stderr
    done = run(hpcio, url, pattern, "--phases", "read", "--verify")
    assert done.returncode == 0, done.stderr


def test_mpiio_verify_finds_a_changed_byte(hpcio, file_url, target_dir):
    url = file_url(target_dir)
    done = run(hpcio, url, "sfmw", "--phases", "write", "--keep")
    assert done.returncode == 0, done.stderr
    path = target_dir / "hpcio-shared.dat"
    data = bytearray(path.read_bytes())
    data[3 * MiB + 12_345] ^= 0x5A
    path.write_bytes(bytes(data))
    done = run(hpcio, url, "sfmw", "--api", "mpiio", "--phases", "read", "--verify")
    assert done.returncode == 1
    assert "rank 3: verify failed: hpcio-shared.dat offset 3158073" in done.stderr


@pytest.mark.parametrize(
    ("pattern", "more", "message"),
    [
        ("mfmw", ("--collective",),
         "--collective is for --api mpiio, hdf5, netcdf or pnetcdf; posix calls are independent"),
        ("sfsw", ("--api", "mpiio", "--collective"), "--collective: in sfsw rank 0 alone opens "
         "the file and calls the library; collective calls need every rank (use sfmw)"),
        ("mfmw", ("--api", "mpiio", "--duration", "1s"),
         "--duration is for --api posix, not mpiio"),
    ],
)  # fmt: skip
def test_what_an_api_cannot_do_gets_one_line(hpcio, file_url, target_dir, error_line, pattern,
                                             more, message):  # fmt: skip
    done = run(hpcio, file_url(target_dir), pattern, *more)
    assert done.returncode == 2
    assert error_line(done) == f"hpcio: error: {message}"


def test_hints_reach_mpiio_and_are_recorded(hpcio, file_url, target_dir, tmp_path,
                                            read_documents):  # fmt: skip
    out = tmp_path / "r.jsonl"
    hints = ("--hint", "romio_cb_write=enable", "--hint", "cb_buffer_size=1048576")
    done = run(hpcio, file_url(target_dir), "sfmw", "--api", "mpiio", "--collective", *hints,
               "-o", out)  # fmt: skip
    assert done.returncode == 0, done.stderr
    (doc,) = read_documents(out)
    assert doc["run"]["params"]["hints"] == ["romio_cb_write=enable", "cb_buffer_size=1048576"]
    for phase in doc["phases"]:
        held = phase["metrics"]["mpiio_hints_in_effect"]
        assert held == "romio_cb_write=enable,cb_buffer_size=1048576", held
