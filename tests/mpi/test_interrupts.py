"""A rank killed or interrupted mid-run: the run says so, leaves no incomplete upload and no
data files behind, and keeps the iterations it finished (status "interrupted")."""

import json
import os
import signal
import subprocess
import sys
import time

import pytest

pytestmark = pytest.mark.mpi


def start(args, env):
    command = [sys.executable, "-m", "hpcio", "run", *map(str, args)]
    clean = {k: v for k, v in os.environ.items() if not k.startswith(("OMPI_", "PMI", "HPCIO_"))}
    return subprocess.Popen(command, env={**clean, **env}, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)  # fmt: skip


def ranks_of(job, count, deadline_s=60):
    """The rank processes of the MPI job that hpcio `job` launched (children of its mpiexec)."""
    deadline = time.monotonic() + deadline_s
    while time.monotonic() < deadline:
        launcher = subprocess.run(["pgrep", "-P", str(job.pid)], capture_output=True, text=True)
        if launcher.stdout.split():
            found = subprocess.run(["pgrep", "-P", launcher.stdout.split()[0]],
                                   capture_output=True, text=True).stdout.split()  # fmt: skip
            if len(found) == count:
                return [int(p) for p in found]
        time.sleep(0.05)
    raise AssertionError("the MPI job's ranks never appeared")


def wait_for(condition, deadline_s=60):
    deadline = time.monotonic() + deadline_s
    while time.monotonic() < deadline:
        if condition():
            return
        time.sleep(0.05)
    raise AssertionError("condition never met")


@pytest.fixture(params=["s3", "azure"])
def server(request):
    return request.getfixturevalue(f"{request.param}_server")


def test_killed_rank_aborts_the_shared_upload(server, tmp_path):
    journal = tmp_path / "journal"
    size = "200MiB" if server.url().startswith("s3://") else "48MiB"  # Azurite is slow
    args = ["--pattern", "sfmw", "--target", server.url("killed"), "-n", 4,
            "--size-per-rank", size, "--part-size", "8MiB", "-q"]  # fmt: skip
    job = start(args, {**server.env, "HPCIO_JOURNAL_DIR": str(journal)})
    victim = ranks_of(job, 4)[-1]
    # Kill once the shared upload exists: rank 0 journals it right after creating it.
    wait_for(lambda: journal.is_dir() and any(journal.iterdir()))
    os.kill(victim, signal.SIGKILL)
    _, err = job.communicate(timeout=120)
    assert job.returncode == 128 + signal.SIGKILL
    assert "hpcio: error: the MPI job failed: a rank was killed (signal 9)" in err
    assert "aborted 1 incomplete upload(s) the job left on" in err
    assert list(journal.iterdir()) == []
    if server.url().startswith("s3://"):
        client = server.client()
        assert client.list_multipart_uploads(Bucket=server.bucket).get("Uploads", []) == []
        listed = client.list_objects_v2(Bucket=server.bucket, Prefix="killed/")
        assert listed.get("Contents", []) == []
    else:
        from azure.core.exceptions import ResourceNotFoundError

        container = server.container_client()
        assert list(container.list_blobs(name_starts_with="killed/")) == []
        blob = container.get_blob_client("killed/hpcio-shared.dat")
        with pytest.raises(ResourceNotFoundError):  # no blob, so no uncommitted block list
            blob.get_block_list("uncommitted")


@pytest.mark.parametrize("signal_number", [signal.SIGINT, signal.SIGKILL])
def test_finished_iterations_are_kept(target_dir, tmp_path, signal_number):
    out = tmp_path / "r.jsonl"
    args = ["--pattern", "mfmw", "--target", f"file://{target_dir}", "-n", 2,
            "--size-per-rank", "32MiB", "--fsync", "-i", 1000, "-o", out]  # fmt: skip
    job = start(args, {})
    victim = ranks_of(job, 2)[-1]
    partial = tmp_path / "r.jsonl.partial"
    wait_for(partial.exists)  # at least one iteration has finished
    os.kill(victim, signal_number)
    _, err = job.communicate(timeout=120)
    assert job.returncode == 128 + signal_number
    assert f"hpcio: kept the finished iterations in {out} (status interrupted)" in err
    (doc,) = [json.loads(line) for line in out.read_text().splitlines()]
    assert doc["status"] == "interrupted"
    done = doc["summary"]["write"]["iterations"]
    assert 1 <= done < 1000
    assert len([p for p in doc["phases"] if p["phase"] == "read"]) == done
    assert not partial.exists()
    assert sorted(p.name for p in target_dir.iterdir()) == []


def test_interrupted_point_is_run_again_by_sweep(hpcio, target_dir, tmp_path):
    out = tmp_path / "r.jsonl"
    sweep = ["sweep", "--pattern", "mfmw", "--sizes", "1MiB..2MiB", "--target",
             f"file://{target_dir}", "-o", out, "-q"]  # fmt: skip
    assert hpcio(*sweep).returncode == 0
    lines = out.read_text().splitlines()
    first = json.loads(lines[0])
    first["status"] = "interrupted"
    out.write_text(json.dumps(first) + "\n" + lines[1] + "\n")
    again = hpcio(*sweep)
    assert again.returncode == 0, again.stderr
    assert "2 points, 1 already in" in again.stdout
    assert [json.loads(x)["status"] for x in out.read_text().splitlines()] == [
        "interrupted", "complete", "complete"]  # fmt: skip
