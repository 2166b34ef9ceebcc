"""`hpcio checkpoint` end to end: 8 ranks save their shards ten times, then load them ten
times, on a directory and on the S3 and Azure test servers; the table, and nothing left."""

import os
import signal
import subprocess
import sys

import pytest
from hpcio.results import io as results_io
from hpcio.runner.lock import LOCK_KEY
from test_interrupts import SLOW_NODE, wait_for

pytestmark = pytest.mark.mpi

MiB = 1 << 20


def check(done, out, url):
    assert done.returncode == 0, done.stderr
    save, load = results_io.read(out)
    assert (save.run["phases"], load.run["phases"]) == (["write"], ["read"])
    for doc, phase in ((save, "write"), (load, "read")):
        assert doc.workload == "llama3-8b" and doc.ranks == 8
        assert [p.phase for p in doc.phases] == [phase] * 10
        assert all(p.bytes_total == 8 * 13 * MiB and p.errors == 0 for p in doc.phases)
    table = done.stdout[done.stdout.index("### checkpoints") :]
    row = next(line for line in table.splitlines() if line.startswith("| llama3-8b"))
    cells = [c.strip() for c in row.strip("|").split("|")]
    assert cells[:4] == ["llama3-8b", "8", "104 MiB", url]
    save_s = save.summary["write"].seconds.mean
    assert cells[4] == f"{save_s:.3f}" and cells[5] == f"{104 / 1024 / save_s:.3f}"


def test_a_checkpoint_on_a_directory(hpcio, target_dir, file_url, tmp_path):
    out = tmp_path / "r.jsonl"
    url = file_url(target_dir)
    done = hpcio("checkpoint", "llama3-8b", "--target", url, "--scale", 1024, "--verify",
                 "--reorder", "-q", "-o", out)  # fmt: skip
    check(done, out, url)
    save, load = results_io.read(out)
    assert save.run["fsync"] is True and load.params["reorder"] is True
    assert list(target_dir.iterdir()) == []


def test_kept_shards_stay(hpcio, target_dir, file_url, tmp_path):
    done = hpcio("checkpoint", "llama3-8b", "--target", file_url(target_dir), "--scale", 2048,
                 "--keep", "-q")  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert sorted(p.name for p in target_dir.iterdir()) == [
        f"hpcio-rank{r:06d}.dat" for r in range(8)
    ]


@pytest.mark.parametrize(
    "store", ["s3_server", "azure_server", pytest.param("radosgw_server", marks=pytest.mark.ceph)]
)
def test_a_checkpoint_on_an_object_store(hpcio, tmp_path, request, store):
    server = request.getfixturevalue(store)
    out = tmp_path / "r.jsonl"
    url = server.url("ckpt")
    done = hpcio("checkpoint", "llama3-8b", "--target", url, "--scale", 1024, "--transfer",
                 "5MiB", "--verify", "-q", "-o", out, env=server.env)  # fmt: skip
    assert done.returncode == 0, done.stderr
    save, _ = results_io.read(out)
    assert save.run["fsync"] is False  # an upload is complete when it returns
    requests = save.phases[0].requests
    if store != "azure_server":  # 10 MiB in 5 MiB parts: a multipart upload per shard
        assert requests["complete_multipart"] == 8
        listed = server.client().list_objects_v2(Bucket=server.bucket, Prefix="ckpt/")
        assert listed.get("KeyCount", 0) == 0  # the shards went after the loads
    else:
        assert requests["put_block_list"] == 8


@pytest.mark.parametrize("keep", [False, True])
def test_a_stopped_checkpoint_removes_its_shards_unless_kept(target_dir, tmp_path, keep):
    """SIGTERM to the job's process group (scancel's way) while the shards are being saved:
    the saves keep their shards for the loads, so the command removes them itself (not with
    --keep), and the finished saves are in -o."""
    out = tmp_path / "r.jsonl"
    args = ["llama3-8b", "--target", f"file://{target_dir}", "--scale", 64, "-q", "-o", out,
            *(["--keep"] if keep else [])]  # fmt: skip
    command = [sys.executable, "-m", "hpcio", "checkpoint", *map(str, args)]
    clean = {k: v for k, v in os.environ.items() if not k.startswith(("OMPI_", "PMI", "HPCIO_"))}
    job = subprocess.Popen(command, env={**clean, **SLOW_NODE}, stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE, text=True, start_new_session=True)  # fmt: skip
    wait_for(lambda: out.exists() and out.read_text().endswith("\n"))  # one save is done
    os.killpg(job.pid, signal.SIGTERM)
    _, err = job.communicate(timeout=120)
    assert job.returncode != 0
    assert "Traceback" not in err
    (doc,) = results_io.read(out)
    assert doc.status == "interrupted" and doc.phases[0].bytes_total == 8 * 26 * MiB * 8
    shards = sorted(p.name for p in target_dir.iterdir() if p.name != LOCK_KEY)
    assert shards == ([f"hpcio-rank{r:06d}.dat" for r in range(8)] if keep else [])
