"""--trace under real mpiexec: each rank's file holds exactly the operations of its plan (an
engine plan) or of its Python body, and `hpcio trace summary` counts them as Darshan would."""

import json
from pathlib import Path

import numpy as np
import pytest
from hpcio.trace import operations

pytestmark = pytest.mark.mpi

KiB = 1 << 10
TRANSFER = 256 * KiB


def trace_dir(doc: dict, out: Path) -> Path:
    directory = Path(doc["trace"]["directory"])
    assert directory.parent == out.with_suffix(".trace")
    return directory


def test_an_n_n_trace_has_exactly_the_plan_s_operations(hpcio, file_url, target_dir, tmp_path,
                                                        read_documents):  # fmt: skip
    out = tmp_path / "r.jsonl"
    done = hpcio("run", "--pattern", "mfmw", "-n", 2, "--target", file_url(target_dir),
                 "--size-per-rank", "1MiB", "--transfer", "256KiB", "--fsync", "--trace",
                 "-o", out, "-q")  # fmt: skip
    assert done.returncode == 0, done.stderr
    (doc,) = read_documents(out)
    directory = trace_dir(doc, out)
    assert sorted(p.name for p in directory.iterdir()) == ["rank-00000.npz", "rank-00001.npz"]
    # Per rank: open, 4 writes, fsync, close; open, 4 reads, close.
    assert doc["trace"]["operations"] == 2 * (4 + 4 + 5)
    assert doc["run"]["trace"] is True
    for rank in (0, 1):
        ops = operations.load(directory / f"rank-{rank:05d}.npz")
        assert set(ops.rank.tolist()) == {rank}
        assert set(ops.file.tolist()) == {f"hpcio-rank{rank:06d}.dat"}
        assert ops.op.tolist() == ["open", *["write"] * 4, "fsync", "close",
                                   "open", *["read"] * 4, "close"]  # fmt: skip
        moved = np.isin(ops.op, ["read", "write"])
        assert ops.offset[moved].tolist() == [i * TRANSFER for i in range(4)] * 2
        assert set(ops.length[moved].tolist()) == {TRANSFER}
        assert set(ops.offset[~moved].tolist()) == {-1} and set(ops.length[~moved].tolist()) == {0}
        assert (ops.end_ns >= ops.start_ns).all() and (ops.start_ns >= 0).all()
        assert (np.diff(ops.start_ns) >= 0).all()
    summary = hpcio("trace", "summary", directory, "--json")
    assert summary.returncode == 0, summary.stderr
    rows = json.loads(summary.stdout)
    assert [(r["rank"], r["file"]) for r in rows] == [(0, "hpcio-rank000000.dat"),
                                                      (1, "hpcio-rank000001.dat")]  # fmt: skip
    for row in rows:
        c = row["counters"]
        assert (c["POSIX_WRITES"], c["POSIX_READS"], c["POSIX_OPENS"], c["POSIX_FSYNCS"]) == (
            4, 4, 2, 1)  # fmt: skip
        assert c["POSIX_BYTES_WRITTEN"] == c["POSIX_BYTES_READ"] == 1 << 20
        # The first access is at offset 0 (Darshan: neither), the next three follow on.
        assert (c["POSIX_SEQ_WRITES"], c["POSIX_CONSEC_WRITES"]) == (3, 3)
        assert (c["POSIX_SEQ_READS"], c["POSIX_CONSEC_READS"]) == (3, 3)
        assert c["POSIX_SIZE_WRITE_100K_1M"] == c["POSIX_SIZE_READ_100K_1M"] == 4
        assert (c["POSIX_ACCESS1_ACCESS"], c["POSIX_ACCESS1_COUNT"]) == (TRANSFER, 8)
    plots = tmp_path / "plots"
    drawn = hpcio("trace", "summary", directory, "--plots", plots)
    assert drawn.returncode == 0, drawn.stderr
    assert (plots / "heatmap.png").stat().st_size > 0
    assert len(list(plots.glob("offsets-*.png"))) == 2


def test_a_python_body_s_trace_names_files_and_offsets(hpcio, file_url, target_dir, tmp_path,
                                                       read_documents):  # fmt: skip
    out = tmp_path / "py.jsonl"
    done = hpcio("run", "--workload", "python-files", "--files", 2, "--file-size", "512KiB",
                 "--block", "256KiB", "-n", 2, "--target", file_url(target_dir), "--trace",
                 "-o", out, "-q")  # fmt: skip
    assert done.returncode == 0, done.stderr
    (doc,) = read_documents(out)
    ops = operations.load(trace_dir(doc, out))
    moved = ops.select(np.isin(ops.op, ["read", "write"]))
    # 2 ranks x 2 files x 2 blocks, written then read.
    assert len(moved) == 2 * 2 * 2 * 2
    assert set(moved.offset.tolist()) == {0, TRANSFER}
    assert set(moved.file.tolist()) == {
        f"hpcio-py-rank{r:06d}-file{f:06d}.dat" for r in (0, 1) for f in (0, 1)
    }
    assert doc["trace"]["operations"] == len(ops)


def test_without_trace_nothing_is_written(hpcio, file_url, target_dir, tmp_path, read_documents):
    out = tmp_path / "plain.jsonl"
    done = hpcio("run", "--pattern", "mfmw", "-n", 2, "--target", file_url(target_dir),
                 "--size-per-rank", "1MiB", "-o", out, "-q")  # fmt: skip
    assert done.returncode == 0, done.stderr
    (doc,) = read_documents(out)
    assert doc["trace"] is None
    assert not out.with_suffix(".trace").exists()


def test_a_training_run_s_trace_has_every_sample_read(hpcio, tmp_path, read_documents):
    """unet3d on memory://: the data set laid out (untimed) and each sample read once an
    epoch, by the engine plans its Python body starts in the background."""
    out = tmp_path / "train.jsonl"
    done = hpcio("train", "unet3d", "-n", 1, "--target", "memory://", "--scale", "small",
                 "--samples", 14, "--epochs", 1, "--compute-time", "0.01", "--trace",
                 "-o", out, "-q")  # fmt: skip
    assert done.returncode == 0, done.stderr
    (doc,) = read_documents(out)
    ops = operations.load(trace_dir(doc, out))
    reads = ops.select(ops.op == "read")
    assert len(reads) == 14 and len(set(reads.file.tolist())) == 14
    assert reads.length.sum() == doc["phases"][0]["bytes_total"]


@pytest.mark.parametrize(("pattern", "random"), [("sfmw", False), ("mfmw", True)])
def test_a_trace_is_its_plan_per_rank(hpcio, file_url, target_dir, tmp_path, read_documents,
                                      pattern, random):  # fmt: skip
    """2 ranks, a shared file in order and a file each in random order: each rank's trace
    holds its plans' operations, every one (_engine.Plan.operations expands them as the
    engine runs them), nothing more."""
    from hpcio import _engine
    from hpcio.workloads.contract import Phase
    from specs import plan_of, run_spec

    out = tmp_path / "plan.jsonl"
    settings = dict(size_per_rank_bytes=1 << 20, transfer_bytes=64 * KiB, random_offsets=random,
                    fsync=True)  # fmt: skip
    done = hpcio("run", "--pattern", pattern, "-n", 2, "--target", file_url(target_dir),
                 "--size-per-rank", "1MiB", "--transfer", "64KiB", "--fsync", "--trace",
                 *(["--random"] if random else []), "-o", out, "-q")  # fmt: skip
    assert done.returncode == 0, done.stderr
    (doc,) = read_documents(out)
    traced = operations.load(trace_dir(doc, out))
    run = run_spec(pattern, file_url(target_dir), ranks=2, **settings)
    for rank in (0, 1):
        expected = []
        for phase in (Phase.WRITE, Phase.READ):
            plan = plan_of(run, phase, rank).per_transfer()
            for code, key, offset, length in zip(plan.ops.tolist(), plan.key_index.tolist(),
                                                 plan.offsets.tolist(), plan.lengths.tolist(),
                                                 strict=True):  # fmt: skip
                name = _engine.TRACE_OPS[code]
                moves = name in ("read", "write")
                expected.append((name, plan.keys[key], offset if moves else -1,
                                 length if moves else 0))  # fmt: skip
        mine = traced.select(traced.rank == rank)
        got = list(zip(mine.op.tolist(), mine.file.tolist(), mine.offset.tolist(),
                       mine.length.tolist(), strict=True))  # fmt: skip
        assert sorted(got) == sorted(expected)
        writes = mine.select(mine.op == "write").offset.tolist()
        first = rank * (1 << 20) if pattern == "sfmw" else 0
        assert sorted(writes) == [first + i * 64 * KiB for i in range(16)]
        assert (writes != sorted(writes)) == random


ZARR_CHUNKS = {f"hpcio-volume.zarr/c/{i}/{j}/{k}" for i in (0, 1) for j in (0, 1) for k in (0, 1)}


@pytest.mark.parametrize(
    ("library", "files"),
    # Zarr: each chunk is an object of its own, named as the store names it.
    [(("zarr", "--chunk", "5x12x20"), ZARR_CHUNKS), (("segy",), {"hpcio-volume.segy"})],
)
def test_a_library_volume_s_trace_names_its_files(hpcio, file_url, target_dir, tmp_path,
                                                  read_documents, library, files):  # fmt: skip
    out = tmp_path / "volume.jsonl"
    done = hpcio("run", "-n", 2, "--workload", "volume", "--volume", "10x24x40",
                 "--library", *library, "--target", file_url(target_dir), "--trace",
                 "-o", out, "-q")  # fmt: skip
    assert done.returncode == 0, done.stderr
    (doc,) = read_documents(out)
    ops = operations.load(trace_dir(doc, out))
    moved = ops.select(np.isin(ops.op, ["read", "write"]))
    assert set(moved.file.tolist()) == files
    assert "" not in set(ops.file.tolist())
