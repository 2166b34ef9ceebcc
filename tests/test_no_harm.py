"""A typo must do no harm: options that cannot mean what they say are refused in one line
before anything runs."""

import fcntl
import os
import socket

import pytest


def refused(done, error_line):
    assert done.returncode == 2, (done.returncode, done.stderr)
    return error_line(done)


def run(
    hpcio, target_dir, file_url, *more, pattern="mfmw", size="1MiB", transfer="256KiB", env=None
):
    return hpcio(
        "run", "--pattern", pattern, "--target", file_url(target_dir), "--size-per-rank", size,
        "--transfer", transfer, *more, env=env,
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


# -- resources: buffers against the node's memory, data against the target's free space ------


def test_buffers_beyond_memory(hpcio, error_line, target_dir, file_url):
    # 4096 transfers of 64 MiB in flight: 256 GiB of buffers on one rank.
    done = run(hpcio, target_dir, file_url, "--in-flight", "4096", size="262144MiB",
               transfer="64MiB")  # fmt: skip
    line = refused(done, error_line)
    assert line.startswith(
        "hpcio: error: buffers would take 256 GiB per node (1 rank(s) x 4096 in flight x "
        "64 MiB transfer), more than the "
    )
    assert line.endswith("MemAvailable): lower --in-flight or --transfer")
    assert list(target_dir.iterdir()) == []


def test_master_io_gather_chunks_beyond_memory(hpcio, error_line, target_dir, file_url):
    done = run(hpcio, target_dir, file_url, "-n", "2", "--gather-chunk", "1TiB",
               pattern="sfsw", size="1TiB")  # fmt: skip
    line = refused(done, error_line)
    assert line.startswith(
        "hpcio: error: buffers would take 3.0 TiB per node (rank 0: 1 in flight x 256 KiB "
        "transfer + 2 gather chunks of 1 TiB; 1 other rank(s): 1 chunk each)"
    )
    assert line.endswith("lower --gather-chunk, --in-flight or --transfer")


def test_memory_target_data_beyond_memory(hpcio, error_line):
    done = hpcio("run", "--pattern", "mfmw", "--target", "memory://", "--size-per-rank", "1TiB")
    assert "+ 1 TiB of data in memory://" in refused(done, error_line)


def test_data_beyond_free_space(hpcio, error_line, target_dir, file_url):
    done = run(hpcio, target_dir, file_url, size="999TiB")
    line = refused(done, error_line)
    assert line.startswith(
        f"hpcio: error: the run keeps 999 TiB on {file_url(target_dir)} at its peak "
        "(1 rank(s) x 999 TiB), more than the "
    )
    assert line.endswith(
        "free there: lower --size-per-rank or -n, or give --no-space-check if the file system "
        "reports free space wrongly"
    )
    assert list(target_dir.iterdir()) == []


def small_tmpfs(target_dir, megabytes):
    """A launcher running hpcio with a tmpfs of `megabytes` MiB mounted on `target_dir`."""
    setup = f"mount -t tmpfs -o size={megabytes}m none '{target_dir}'"
    return ("unshare", "-m", "sh", "-c", f'{setup} && exec "$@"', "sh")


def test_free_space_counts_every_rank(hpcio, error_line, target_dir, file_url, private_mounts):
    command = ("run", "--pattern", "sfmw", "--target", file_url(target_dir), "-n", "2",
               "--size-per-rank", "3MiB", "--transfer", "1MiB")  # fmt: skip
    done = hpcio(*command, launcher=small_tmpfs(target_dir, 4))
    assert "the run keeps 6 MiB on" in refused(done, error_line)
    # The override lets it run into the file system's own refusal: a failed run, not a refusal.
    done = hpcio(*command, "--no-space-check", launcher=small_tmpfs(target_dir, 4))
    assert done.returncode == 1, done.stderr
    assert "No space left on device" in error_line(done)


def test_checkpoint_beyond_free_space_leaves_no_results_file(
    hpcio, error_line, target_dir, file_url, tmp_path, private_mounts
):
    # llama3-8b at --scale 64: 8 ranks, 1.6 GiB, onto 4 MiB. The run and its --dry-run give
    # the same refusal, and neither leaves a results file.
    out = tmp_path / "r.jsonl"
    command = ("checkpoint", "llama3-8b", "--target", file_url(target_dir), "--scale", "64",
               "-o", str(out))  # fmt: skip
    lines = []
    for extra in ((), ("--dry-run",)):
        done = hpcio(*command, *extra, launcher=small_tmpfs(target_dir, 4))
        lines.append(refused(done, error_line))
        assert not out.exists(), "a refused checkpoint left its -o file"
    # The free space differs by the run's lock file (4 KiB) only.
    run_line, dry_line = (line.split(", more than the ")[0] for line in lines)
    assert run_line == dry_line
    assert run_line.startswith(f"hpcio: error: the run keeps 1.6 GiB on {file_url(target_dir)}")
    assert lines[0].endswith("free there: lower --scale, or give --no-space-check if the file "
                             "system reports free space wrongly")  # fmt: skip


def test_rewriting_kept_files_and_reading_need_no_new_space(
    hpcio, target_dir, file_url, private_mounts
):
    # 3 MiB kept on a 4 MiB file system: rewriting the same files, or reading them, fits.
    steps = (
        ("--phases", "write", "--keep"),
        ("--phases", "write", "--keep"),
        ("--phases", "read", "--verify"),
        ("--keep", "--verify"),
    )
    script = " && ".join(
        f'"$@" --size-per-rank 3MiB --transfer 1MiB {" ".join(step)}' for step in steps
    )
    setup = f"mount -t tmpfs -o size=4m none '{target_dir}'"
    launcher = ("unshare", "-m", "sh", "-c", f"{setup} && {script}", "sh")
    done = hpcio("run", "--pattern", "mfmw", "--target", file_url(target_dir), "-q",
                 launcher=launcher)  # fmt: skip
    assert (done.returncode, done.stderr) == (0, "")


# -- options that do not apply are refused, not ignored ----------------------------------------


@pytest.mark.parametrize(
    ("pattern", "more", "message"),
    [
        ("sfmw", ("--read-scope", "own"), "--read-scope is for sfmr, not sfmw"),
        ("mfmw", ("--read-scope", "all"), "--read-scope is for sfmr, not mfmw"),
        ("sfmw", ("--gather-chunk", "1MiB"), "--gather-chunk is for sfsw, not sfmw"),
        (
            "mfmw",
            ("--segments", "2"),
            "--segments is for sfsw, sfmw and sfmr, not mfmw",
        ),
        ("sfmw", ("--random",), "--random is for mfmw and mfmr, not sfmw"),
        ("sfsw", ("--files-per-rank", "1"), "--files-per-rank is for mfmw and mfmr, not sfsw"),
        ("sfmw", ("--duration", "1"), "--duration is for mfmw and mfmr, not sfmw"),
        (
            "mfmw",
            ("--reorder", "--phases", "write"),
            "--reorder needs a read phase, not --phases write",
        ),
        (
            "sfmw",
            ("--verify", "--phases", "write"),
            "--verify needs a read phase, not --phases write",
        ),
        (
            "mfmr",
            ("--fsync",),
            "--fsync needs a timed write phase, not mfmr's phases (its layout is fsync'd, untimed)",
        ),
        (
            "mfmw",
            ("--fsync", "--phases", "read"),
            "--fsync needs a timed write phase, not --phases read",
        ),
        (
            "mfmw",
            ("--store-option", "region=x"),
            "--store-option is for object stores, not a file:// target",
        ),
    ],
)
def test_option_that_does_not_apply(
    hpcio, error_line, target_dir, file_url, pattern, more, message
):
    done = run(hpcio, target_dir, file_url, *more, pattern=pattern)
    assert refused(done, error_line) == f"hpcio: error: {message}"
    assert list(target_dir.iterdir()) == []


@pytest.mark.parametrize(
    ("command", "option", "value"),
    [
        ("run", "--target", "file:///tmp"),
        ("run", "--part-size", "1MiB"),
        ("run", "--pattern", "sfmw"),
        ("run", "--verify", None),
        ("sweep", "--target", "file:///tmp"),
        ("profile", "--target", "file:///tmp"),
    ],
)
def test_option_given_twice(
    hpcio, error_line, tmp_path, target_dir, file_url, command, option, value
):
    first = {
        "run": ("run", "--pattern", "mfmw", "--size-per-rank", "1MiB", "--transfer", "1MiB",
                "--verify"),
        "sweep": ("sweep", "--pattern", "mfmw", "--sizes", "1MiB", "-o", tmp_path / "o.jsonl"),
        "profile": ("profile", "streaming", "--size", "1MiB"),
    }[command]  # fmt: skip
    again = (option,) if value is None else (option, value)
    done = hpcio(*first, "--target", file_url(target_dir), *again)
    line = refused(done, error_line)
    assert line.startswith("hpcio: error: --") and line.endswith(" is given twice; give it once")
    assert option in line


def test_sweep_keeps_an_option_where_it_applies(hpcio, tmp_path, read_documents):
    out = tmp_path / "out.jsonl"
    done = hpcio("sweep", "--pattern", "sfmr,sfmw", "--sizes", "1MiB", "--target", "memory://",
                 "--read-scope", "own", "--segments", "2", "--transfer", "256KiB", "-q",
                 "-o", out)  # fmt: skip
    assert (done.returncode, done.stderr) == (0, "")
    params = {d["run"]["workload"]: d["run"]["params"] for d in read_documents(out)}
    # sfmw has no read scope: its params hold only what it declares.
    assert params["sfmr"]["read_scope"] == "own" and "read_scope" not in params["sfmw"]
    assert params["sfmw"]["segments"] == params["sfmr"]["segments"] == 2


def test_sweep_refuses_an_option_no_pattern_uses(hpcio, error_line, tmp_path):
    done = hpcio("sweep", "--pattern", "sfmw,mfmw", "--sizes", "1MiB", "--target", "memory://",
                 "--read-scope", "own", "-o", tmp_path / "out.jsonl")  # fmt: skip
    assert refused(done, error_line) == "hpcio: error: --read-scope is for sfmr, not sfmw or mfmw"


# -- one run at a time on a directory ------------------------------------------------------------


@pytest.mark.parametrize("ranks", ["1", pytest.param("2", marks=pytest.mark.mpi)])
def test_second_run_on_a_directory_in_use(hpcio, error_line, target_dir, file_url, ranks):
    # Another run holds the directory's lock (as a live hpcio does) and has data there.
    theirs = target_dir / "hpcio-rank000000.dat"
    theirs.write_bytes(b"another run's data")
    lock = target_dir / "hpcio-run.lock"
    with open(lock, "w") as held:
        fcntl.flock(held, fcntl.LOCK_EX)
        held.write(f"{socket.gethostname()} 4242 2026-01-02T03:04:05+00:00 their-token\n")
        held.flush()
        done = run(hpcio, target_dir, file_url, "-n", ranks)
    assert refused(done, error_line) == (
        f"hpcio: error: target {file_url(target_dir)} is in use by another hpcio run (host "
        f"{socket.gethostname()}, pid 4242, started 2026-01-02T03:04:05+00:00); wait for it "
        "to end or use another directory"
    )
    assert theirs.read_bytes() == b"another run's data"


def test_lock_of_a_run_that_died_does_not_block(hpcio, target_dir, file_url):
    # A killed run's lock file stays, but no live process holds its flock.
    lock = target_dir / "hpcio-run.lock"
    lock.write_text(f"{socket.gethostname()} 999999999 2026-01-02T03:04:05+00:00 dead\n")
    done = run(hpcio, target_dir, file_url, "-q")
    assert (done.returncode, done.stderr) == (0, "")
    assert list(target_dir.iterdir()) == []


# -- more ranks than cores: allowed, but said ----------------------------------------------------


def test_cores_per_node_recorded(hpcio, tmp_path, target_dir, file_url, read_documents):
    out = tmp_path / "out.jsonl"
    done = run(hpcio, target_dir, file_url, "-q", "-o", out)
    assert done.returncode == 0, done.stderr
    (doc,) = read_documents(out)
    assert doc["cores_per_node"] == len(os.sched_getaffinity(0))
    assert "core(s)" not in done.stdout


@pytest.mark.mpi
def test_more_ranks_than_cores_is_said(hpcio, tmp_path, target_dir, file_url, read_documents):
    ranks = len(os.sched_getaffinity(0)) + 1
    out = tmp_path / "out.jsonl"
    done = run(hpcio, target_dir, file_url, "-n", ranks, "-q", "-o", out)
    assert done.returncode == 0, done.stderr
    (doc,) = read_documents(out)
    assert doc["ranks_per_node"] == ranks
    assert doc["cores_per_node"] < ranks
    assert (
        f"  warning: {ranks} ranks per node shared {doc['cores_per_node']} core(s): ranks waited "
        "for a core, so the figures may show the CPU, not the storage"
    ) in done.stdout.splitlines()


def test_in_flight_beyond_what_threads_can_serve(hpcio, error_line, target_dir, file_url):
    # 100,000 4 KiB transfers would pass the memory check (400 MB) and start 100,000 threads.
    done = run(hpcio, target_dir, file_url, "--in-flight", "100000", size="1GiB", transfer="4KiB")
    assert refused(done, error_line) == (
        "hpcio: error: --in-flight 100000 is more than 4096: each transfer in flight is a "
        "thread of the engine on every rank"
    )
    assert list(target_dir.iterdir()) == []
