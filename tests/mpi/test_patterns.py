import json

import pytest

pytestmark = pytest.mark.mpi

MiB = 1 << 20
SIZE, TRANSFER = MiB, 256 << 10
WRITERS = ("sfsw", "sfmw", "mfmw")
READERS = ("sfmr", "mfmr")
KEYS = {
    "sfsw": {"hpcio-single.dat": 4 * SIZE},
    "sfmw": {"hpcio-shared.dat": 4 * SIZE},
    "sfmr": {"hpcio-shared.dat": 4 * SIZE},
    "mfmw": {f"hpcio-rank{r:06d}.dat": SIZE for r in range(4)},
    "mfmr": {f"hpcio-rank{r:06d}.dat": SIZE for r in range(4)},
}


def run_args(pattern, target, output, *more):
    sizes = ["--size-per-rank", "1MiB", "--transfer", "256KiB"]
    if pattern == "sfsw":
        sizes += ["--gather-chunk", "512KiB"]
    return (
        "run",
        "--pattern",
        pattern,
        "--target",
        target,
        *sizes,
        "--verify",
        "-o",
        output,
        *more,
    )


def run_pattern(hpcio, file_url, read_documents, target_dir, pattern, *more, ranks=4):
    output = target_dir.parent / "results.jsonl"
    done = hpcio(*run_args(pattern, file_url(target_dir), output, *more), "-n", ranks)
    assert done.returncode == 0, done.stderr
    assert "Traceback" not in done.stderr
    (doc,) = read_documents(output)
    return doc


def read_bytes(pattern, more):
    whole_file = pattern == "sfmr" and "own" not in more
    return 4 * 4 * SIZE if whole_file else 4 * SIZE


VARIANTS = (
    [(p, ()) for p in WRITERS + READERS]
    + [(p, ("--reorder", "--segments", "2")) for p in ("sfsw", "sfmw", "sfmr")]
    + [(p, ("--reorder",)) for p in ("mfmw", "mfmr")]
    + [("sfmr", ("--read-scope", "own"))]
)


@pytest.mark.parametrize(
    ("pattern", "more"), VARIANTS, ids=[f"{p}{''.join(m)}" for p, m in VARIANTS]
)
def test_pattern_on_four_ranks(hpcio, file_url, read_documents, target_dir, pattern, more):
    doc = run_pattern(hpcio, file_url, read_documents, target_dir, pattern, *more)
    assert (doc["ranks"], doc["run"]["ranks"], doc["nodes"], doc["ranks_per_node"]) == (4, 4, 1, 4)
    params = doc["run"]["params"]
    if pattern in ("mfmw", "mfmr"):
        assert "segments" not in params  # a file per rank has none
    else:
        assert params["segments"] == (2 if "--segments" in more else 1)
    expected = [("write", 4 * SIZE), ("read", read_bytes(pattern, more))]
    if pattern in READERS:
        expected = expected[1:]
    assert [(p["phase"], p["bytes_total"]) for p in doc["phases"]] == expected
    for p in doc["phases"]:
        assert (p["ranks"], p["errors"], p["first_errors"]) == (4, 0, [])
        assert p["ops_total"] == p["bytes_total"] // TRANSFER
        assert [r["rank"] for r in p["per_rank"]] == [0, 1, 2, 3]
        assert sum(r["bytes"] for r in p["per_rank"]) == p["bytes_total"]
        assert doc["summary"][p["phase"]]["bytes_total"] == p["bytes_total"]
    assert list(target_dir.iterdir()) == []


def test_sfsw_collector_moves_every_byte(hpcio, file_url, read_documents, target_dir):
    doc = run_pattern(hpcio, file_url, read_documents, target_dir, "sfsw")
    for p in doc["phases"]:
        assert [r["bytes"] for r in p["per_rank"]] == [4 * SIZE, 0, 0, 0]


@pytest.mark.parametrize("pattern", ["sfmw", "mfmw", "mfmr"])
def test_reorder_reads_another_rank(hpcio, file_url, read_documents, target_dir, pattern):
    doc = run_pattern(hpcio, file_url, read_documents, target_dir, pattern, "--reorder")
    assert doc["cache"]["read_back_from"] == "data written by another rank on the same node"


@pytest.mark.parametrize("pattern", ["sfsw", "mfmw", "sfmr"])
def test_keep_leaves_the_files(hpcio, file_url, read_documents, target_dir, pattern):
    run_pattern(hpcio, file_url, read_documents, target_dir, pattern, "--keep", "-i", "2")
    assert {p.name: p.stat().st_size for p in target_dir.iterdir()} == KEYS[pattern]


def shape(doc):
    return [
        (
            p["phase"],
            p["ranks"],
            p["bytes_total"],
            p["ops_total"],
            p["errors"],
            [r["rank"] for r in p["per_rank"]],
        )
        for p in doc["phases"]
    ]


def test_mpiexec_launch_matches_self_launch(hpcio, file_url, read_documents, target_dir, mpiexec):
    args = run_args("sfmw", file_url(target_dir), "OUT", "--reorder")
    outputs = [target_dir.parent / "self.jsonl", target_dir.parent / "mpiexec.jsonl"]
    self_launched = hpcio(*(a if a != "OUT" else outputs[0] for a in args), "-n", 2)
    launched = hpcio(*(a if a != "OUT" else outputs[1] for a in args), launcher=mpiexec(2))
    for done in (self_launched, launched):
        assert (done.returncode, done.stderr) == (0, "")
    # Same header (pattern, ranks, node layout), same number of lines.
    assert launched.stdout.splitlines()[0] == self_launched.stdout.splitlines()[0]
    assert len(launched.stdout.splitlines()) == len(self_launched.stdout.splitlines())
    (mine,), (theirs,) = (read_documents(o) for o in outputs)
    assert theirs["run"] == mine["run"]
    assert mine["run"]["ranks"] == 2
    assert (
        shape(theirs)
        == shape(mine)
        == [("write", 2, 2 * SIZE, 8, 0, [0, 1]), ("read", 2, 2 * SIZE, 8, 0, [0, 1])]
    )
    assert (theirs["ranks"], theirs["hosts"], theirs["cache"]) == (2, mine["hosts"], mine["cache"])
    assert list(target_dir.iterdir()) == []


def test_mpiexec_with_other_n_is_refused(hpcio, file_url, target_dir, mpiexec, error_line):
    done = hpcio(
        *run_args("mfmw", file_url(target_dir), target_dir.parent / "x.jsonl"),
        "-n",
        3,
        launcher=mpiexec(2),
    )
    assert done.returncode == 2
    assert error_line(done) == "hpcio: error: -n 3 but the MPI job has 2 ranks"


@pytest.mark.parametrize("pattern", ["sfsw", "sfmw"])
def test_direct_io_on_four_ranks(hpcio, file_url, read_documents, target_dir, pattern):
    output = target_dir.parent / "results.jsonl"
    done = hpcio(
        *run_args(pattern, file_url(target_dir), output, "--direct", "--in-flight", "2"), "-n", 4
    )
    if done.returncode == 2 and "refuses O_DIRECT" in done.stderr:
        pytest.skip(f"the file system under {target_dir} has no O_DIRECT")
    assert (done.returncode, done.stderr) == (0, "")
    (doc,) = read_documents(output)
    assert doc["cache"]["direct_io"] is True
    assert [(p["phase"], p["bytes_total"], p["errors"]) for p in doc["phases"]] == [
        ("write", 4 * SIZE, 0),
        ("read", 4 * SIZE, 0),
    ]


def test_files_per_rank_verify_with_reorder(hpcio, file_url, target_dir, tmp_path):
    out = tmp_path / "r.jsonl"
    done = hpcio("run", "-n", 2, "--pattern", "mfmw", "--target", file_url(target_dir),
                 "--size-per-rank", "4MiB", "--files-per-rank", "4", "--transfer", "256KiB",
                 "--in-flight", "3", "--reorder", "--verify", "--fsync", "-q",
                 "-o", out)  # fmt: skip
    assert done.returncode == 0, done.stderr
    write = json.loads(out.read_text())["phases"][0]
    assert write["requests"] == {"open": 8, "write": 32, "fsync": 8, "close": 8}
    assert list(target_dir.iterdir()) == []


def test_sweep_into_a_closed_pipe_ends_quietly(hpcio, target_dir, file_url, tmp_path):
    # `hpcio sweep ... | head -1`: mpiexec must never meet the closed pipe, or it aborts the
    # job and prints its own backtrace.
    out = tmp_path / "r.jsonl"
    done = hpcio("sweep", "--pattern", "sfmw,mfmw", "--sizes", "1MiB..2MiB", "-n", 2,
                 "--transfer", "256KiB", "--target", file_url(target_dir), "-o", out,
                 stdout_closed=True)  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert done.stderr == ""
    assert out.read_text().count("\n") == 4
