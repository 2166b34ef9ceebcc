"""A Python body under real mpiexec: python-files writes and reads with os.pwrite/os.pread,
timed by the engine's Recorder; its document has the figures a plan's has."""

import os

import pytest

pytestmark = pytest.mark.mpi

MiB = 1 << 20
ARGS = ("--workload", "python-files", "--files", 3, "--file-size", "1MiB", "--block", "256KiB")


def test_python_files_figures_are_a_plans(hpcio, file_url, target_dir, tmp_path, read_documents):
    out = tmp_path / "r.jsonl"
    done = hpcio("run", *ARGS, "-n", 2, "--target", file_url(target_dir), "--fsync", "--verify",
                 "-i", 2, "-o", out, "-q")  # fmt: skip
    assert done.returncode == 0, done.stderr
    (doc,) = read_documents(out)
    assert doc["schema_version"] == 3
    assert doc["run"]["workload"] == "python-files"
    assert doc["run"]["params"] == {"files": 3, "file_size_bytes": MiB, "block_bytes": 256 << 10}
    assert [p["phase"] for p in doc["phases"]] == ["write", "read", "write", "read"]
    for phase in doc["phases"]:
        moved = "write" if phase["phase"] == "write" else "read"
        assert phase["bytes_total"] == 2 * 3 * MiB
        assert phase["ops_total"] == 2 * 3 * 4
        assert phase["requests"][moved] == 2 * 3 * 4
        assert phase["requests"]["open"] == phase["requests"]["close"] == 2 * 3
        assert phase["latency"]["count"] == 2 * 3 * 4
        assert phase["metrics"] == {"python_calls": 2 * 3 * 4}
        assert sum(phase["series"]["mib_s"]) > 0
        assert {r["rank"] for r in phase["per_rank"]} == {0, 1}
        assert phase["errors"] == 0
    assert doc["phases"][0]["requests"]["fsync"] == 2 * 3
    assert os.listdir(target_dir) == []  # removed after each iteration, as a pattern's


def test_python_files_verify_finds_a_changed_byte(hpcio, file_url, target_dir):
    url = file_url(target_dir)
    done = hpcio("run", *ARGS, "-n", 2, "--target", url, "--phases", "write", "--keep", "-q")
    assert done.returncode == 0, done.stderr
    path = target_dir / "hpcio-py-rank000001-file000002.dat"
    data = bytearray(path.read_bytes())
    data[300_000] ^= 0x5A
    path.write_bytes(bytes(data))
    done = hpcio("run", *ARGS, "-n", 2, "--target", url, "--phases", "read", "--verify", "-q")
    assert done.returncode == 1
    assert "rank 1: verify failed: hpcio-py-rank000001-file000002.dat offset 300000" in done.stderr
    assert path.exists()  # --phases read never removes what an earlier run left


@pytest.mark.parametrize(
    ("more", "message"),
    [
        (("--file-size", "1000", "--block", "256KiB"),
         "--file-size 1000 B is not a multiple of --block 256 KiB"),
        (("--files", "0"), "--files must be at least 1, got 0"),
        (("--transfer", "1MiB"), "--transfer is for sfsw, sfmw, mfmw, sfmr, mfmr and model-load, "
         "not python-files"),
    ],
)  # fmt: skip
def test_python_files_refuses_what_it_cannot_do(hpcio, target_dir, file_url, error_line, more,
                                                message):  # fmt: skip
    done = hpcio("run", "--workload", "python-files", "--target", file_url(target_dir), *more)
    assert done.returncode == 2
    assert error_line(done) == f"hpcio: error: {message}"


def test_a_body_gets_the_real_communicator(mpiexec, tmp_path):
    """The communicator a Python body gets (Comm.mpi()) is MPI's own, apart from hpcio's
    messages: a collective on it reaches every rank."""
    import subprocess
    import sys

    script = tmp_path / "allreduce.py"
    script.write_text(
        "from hpcio.runner.world import open_world\n"
        "world = open_world()\n"
        "comm = world.mpi()\n"
        "assert comm is world.mpi() and comm.Get_size() == world.size\n"
        "total = comm.allreduce(world.rank + 1)\n"
        "everyone = comm.gather((world.rank, total), root=0)\n"
        "if world.rank == 0:\n"
        "    print(sorted(everyone), flush=True)\n"
    )
    done = subprocess.run(
        [*mpiexec(3), sys.executable, str(script)], capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr
    # One line from rank 0: ranks' own prints may interleave in mpiexec's output.
    assert done.stdout == "[(0, 6), (1, 6), (2, 6)]\n"
