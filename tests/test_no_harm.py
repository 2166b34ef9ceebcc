"""A typo must do no harm: options that cannot mean what they say are refused in one line
before anything runs."""

import pytest


def refused(done, error_line):
    assert done.returncode == 2, (done.returncode, done.stderr)
    return error_line(done)


def run(hpcio, target_dir, file_url, *more, pattern="mfmw", size="1MiB", env=None):
    return hpcio(
        "run", "--pattern", pattern, "--target", file_url(target_dir), "--size-per-rank", size,
        "--transfer", "256KiB", *more, env=env,
    )  # fmt: skip


def test_negative_seed(hpcio, error_line, target_dir, file_url):
    done = run(hpcio, target_dir, file_url, "--seed", "-1")
    assert refused(done, error_line) == "hpcio: error: --seed must be from 0 to 2**64-1, got -1"
    assert list(target_dir.iterdir()) == []


def test_seed_beyond_64_bits(hpcio, error_line, target_dir, file_url):
    done = run(hpcio, target_dir, file_url, "--seed", str(1 << 64))
    assert refused(done, error_line).startswith("hpcio: error: --seed must be from 0 to 2**64-1")


def test_launcher_that_is_not_a_program(hpcio, error_line, target_dir, file_url):
    env = {"HPCIO_MPIEXEC": "/no/such/mpiexec --hostfile hosts"}
    done = run(hpcio, target_dir, file_url, "-n", "2", env=env)
    assert refused(done, error_line) == (
        "hpcio: error: HPCIO_MPIEXEC names '/no/such/mpiexec', which is not a program on PATH; "
        'set it to your launcher (e.g. "mpiexec --hostfile hosts") or unset it to use mpiexec'
    )
    assert list(target_dir.iterdir()) == []


@pytest.mark.parametrize("phases", ["read,write", "write,write", "read,read", "write,"])
def test_phase_orders_that_are_not_documented(hpcio, error_line, target_dir, file_url, phases):
    done = run(hpcio, target_dir, file_url, "--phases", phases)
    assert refused(done, error_line).startswith(
        "hpcio: error: --phases takes write, read or write,read; got "
    )


def test_sweep_range_that_doubling_misses(hpcio, error_line, tmp_path, target_dir, file_url):
    done = hpcio(
        "sweep", "--pattern", "mfmw", "--sizes", "1MiB..3MiB", "--target", file_url(target_dir),
        "-o", tmp_path / "out.jsonl",
    )  # fmt: skip
    assert refused(done, error_line) == (
        "hpcio: error: '1MiB..3MiB': doubling 1 MiB never reaches 3 MiB (it would run "
        "1 MiB, 2 MiB); use 1MiB..2MiB or 1MiB..4MiB"
    )
