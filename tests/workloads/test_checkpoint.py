"""MLPerf Storage's checkpoint sizes and the runs `hpcio checkpoint` builds from them, without
running them; what it refuses, in one line."""

import pytest
from hpcio.workloads import checkpoint, registry

MiB, GiB, TiB = 1 << 20, 1 << 30, 1 << 40


@pytest.mark.parametrize(
    ("model", "ranks", "total"),
    [("llama3-8b", 8, 105 * GiB), ("llama3-70b", 64, 912 * GiB),
     ("llama3-405b", 512, int(5.29 * TiB)), ("llama3-1t", 1024, 18 * TiB)],
)  # fmt: skip
def test_every_model_is_mlperf_s_and_fits_every_store(model, ranks, total):
    m = checkpoint.MODELS[model]
    assert (m.ranks, m.checkpoint_bytes) == (ranks, total)
    shard, transfer = checkpoint.shard_bytes(m, 1, checkpoint.TRANSFER_BYTES)
    assert transfer == 16 * MiB and shard % transfer == 0
    assert total // ranks - shard < MiB + transfer  # only the rounding is lost
    assert shard // transfer <= 10_000  # S3's and GCS's most parts per upload
    assert registry.get(model).family == "checkpoint"


def test_scale_divides_the_bytes_and_keeps_the_ranks():
    m = checkpoint.MODELS["llama3-8b"]
    assert checkpoint.shard_bytes(m, 1024, checkpoint.TRANSFER_BYTES) == (13 * MiB, 13 * MiB)


def test_saves_then_loads(hpcio, target_dir, file_url):
    done = hpcio("checkpoint", "llama3-8b", "--target", file_url(target_dir), "--scale", 1024,
                 "--dry-run")  # fmt: skip
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0] == "hpcio checkpoint --dry-run: 2 run(s); nothing is written"
    runs = [line for line in lines if line.startswith("llama3-8b on ")]
    assert len(runs) == 2 and all("8 rank(s)" in r and "10 iteration(s)" in r for r in runs)
    assert "  write phase: 104 MiB per iteration, 8 transfers" in lines
    assert "  read phase: 104 MiB per iteration, 8 transfers" in lines
    assert list(target_dir.iterdir()) == []


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("llama3-70b", "-n", 8),
         "llama3-70b is written by 64 processes (MLPerf Storage's shape), one shard each; run it "
         "with -n 64, not 8 (--scale makes the shards smaller, not fewer)"),
        (("llama3-8b", "--scale", 0), "--scale must be at least 1, got 0"),
        (("llama3-8b", "--scale", 20_000),
         "--scale 20000 leaves llama3-8b less than 1 MiB per shard; use at most --scale 13440"),
        (("llama3-9b",), "unknown model 'llama3-9b'; choose one of llama3-8b, llama3-70b, "
         "llama3-405b, llama3-1t"),
    ],
)  # fmt: skip
def test_bad_checkpoint_input_is_one_line(hpcio, error_line, target_dir, file_url, args, message):
    done = hpcio("checkpoint", *args, "--target", file_url(target_dir), "--dry-run")
    assert done.returncode == 2
    assert error_line(done) == f"hpcio: error: {message}"
