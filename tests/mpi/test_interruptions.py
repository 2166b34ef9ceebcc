"""The interruption matrix (issue 25): Ctrl-C, scancel's SIGTERM to the process group, SIGKILL
of one rank and SIGKILL of the launcher, for `run`, `train unet3d` and `checkpoint`, each
self-launched (`hpcio ... -n N` starts its own mpiexec) and under a user's `mpiexec -n N
hpcio ...`. Whatever stops it, nothing of the run is left: no process, no hpcio-run.lock, no
data file, no Open MPI shared-memory segment of its ranks, no open multipart upload, and the
-o file is absent or holds documents with status "interrupted", never 0 bytes."""

import json
import os
import signal
import subprocess
import sys

import pytest
from hpcio.runner.lock import LOCK_KEY
from test_interrupts import SLOW_NODE, running, wait_for

pytestmark = pytest.mark.mpi

STOPS = ("ctrl-c", "sigterm-group", "kill-rank", "kill-launcher")
#: Ranks of each command: a checkpoint's are its model's processes (llama3-8b: 8).
RANKS = {"run": 2, "train": 2, "checkpoint": 8}
SMALL = ("--scale", "small")
TRAIN_SAMPLES = 8


@pytest.fixture(scope="module")
def data_set(tmp_path_factory, hpcio):
    """A small unet3d data set, written once for the training cells, and what it holds."""
    root = tmp_path_factory.mktemp("data-set")
    done = hpcio("train", "datagen", "-n", 2, "--target", f"file://{root}", *SMALL,
                 "--samples", TRAIN_SAMPLES, "-q")  # fmt: skip
    assert done.returncode == 0, done.stderr
    return root, frozenset(p.name for p in root.iterdir())


def command_line(command, url, out, self_launched):
    """A long run of `command` that writes a document to `out` early and often."""
    ranks = ["-n", RANKS[command]] if self_launched else []
    if command == "run":
        return ["run", "--pattern", "mfmw", "--target", url, *ranks, "--size-per-rank",
                "32MiB", "--fsync", "-i", 1000, "-o", out]  # fmt: skip
    if command == "train":
        return ["train", "unet3d", "--target", url, *ranks, *SMALL, "--samples", TRAIN_SAMPLES,
                "--batch", 1, "--epochs", 1, "-i", 1000, "--compute-time", "0.01",
                "-o", out]  # fmt: skip
    return ["checkpoint", "llama3-8b", "--target", url, "--scale", 64, "-o", out]


def start(words, env, launcher=()):
    """`[launcher] python -m hpcio words` in a session of its own, as a batch job's shell
    starts it."""
    command = [*launcher, sys.executable, "-m", "hpcio", *map(str, words)]
    clean = {k: v for k, v in os.environ.items() if not k.startswith(("OMPI_", "PMI", "HPCIO_"))}
    return subprocess.Popen(command, env={**clean, **env}, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, start_new_session=True)  # fmt: skip


def world_rank(pid):
    """The MPI rank of process `pid`, None if it is not a rank."""
    try:
        with open(f"/proc/{pid}/environ", "rb") as environ:
            variables = environ.read().split(b"\0")
        with open(f"/proc/{pid}/cmdline", "rb") as cmdline:
            words = cmdline.read().split(b"\0")
    except OSError:
        return None
    if b"hpcio" not in words or b"mpiexec" in words[0]:
        return None
    for variable in variables:
        if variable.startswith(b"OMPI_COMM_WORLD_RANK="):
            return int(variable.split(b"=", 1)[1])
    return None


def job_processes(job, ranks):
    """{rank: pid} of the job's ranks once all run, and every process of the job."""
    from hpcio.runner.mpiexec import descendants

    found = {}

    def all_ranks():
        found.clear()
        for pid in descendants(job.pid):
            rank = world_rank(pid)
            if rank is not None:
                found[rank] = pid
        return len(found) == ranks

    wait_for(all_ranks, deadline_s=120)
    return dict(found), [job.pid, *descendants(job.pid)]


def mapped_segments(pids):
    """The Open MPI shared-memory segments the ranks map: the run's own, among those of every
    other job on this node."""
    segments = set()
    for pid in pids:
        try:
            with open(f"/proc/{pid}/maps") as maps:
                for line in maps:
                    fields = line.split(None, 5)
                    name = os.path.basename(fields[-1].strip()) if len(fields) == 6 else ""
                    if name.startswith(("vader_segment.", "sm_segment.")):
                        segments.add(fields[5].strip())
        except OSError:
            continue
    return segments


def left_in(target_dir, kept):
    """What is in the target besides `kept` (a training run's data set) and the lock."""
    return sorted(p.name for p in target_dir.iterdir() if p.name not in kept | {LOCK_KEY})


def stop(job, how, ranks):
    if how == "ctrl-c":
        os.killpg(job.pid, signal.SIGINT)
    elif how == "sigterm-group":
        os.killpg(job.pid, signal.SIGTERM)
    elif how == "kill-rank":
        os.kill(ranks[max(ranks)], signal.SIGKILL)  # not rank 0, which writes -o
    else:
        os.kill(job.pid, signal.SIGKILL)


def check_output(out, runs=1):
    """-o is absent, or every line is a document of the iterations that finished: the runs
    before the one stopped complete, the stopped one interrupted. A run stopped before its
    first iteration ended has no line, so a command of several `runs` (a checkpoint's save
    and load) may leave only complete ones, fewer than its runs."""
    if not out.exists():
        return
    text = out.read_text()
    assert text.strip(), "a 0-byte (or blank) -o file was left"
    docs = [json.loads(line) for line in text.splitlines()]
    shown = [(doc["status"], doc["run"]["phases"], len(doc["phases"])) for doc in docs]
    assert 0 < len(docs) <= runs, shown
    assert all(doc["status"] == "complete" for doc in docs[:-1]), shown
    last_stopped = docs[-1]["status"] == "interrupted"
    assert last_stopped or (docs[-1]["status"] == "complete" and len(docs) < runs), shown


@pytest.mark.parametrize("how", STOPS)
@pytest.mark.parametrize("self_launched", [True, False], ids=["self-launched", "user-mpiexec"])
@pytest.mark.parametrize("command", ["run", "train", "checkpoint"])
def test_interruption_leaves_nothing(command, self_launched, how, target_dir, tmp_path,
                                     mpiexec, request):  # fmt: skip
    target, kept = (
        request.getfixturevalue("data_set") if command == "train" else (target_dir, set())
    )
    out = tmp_path / "r.jsonl"
    words = command_line(command, f"file://{target}", out, self_launched)
    launcher = () if self_launched else mpiexec(RANKS[command])
    job = start(words, SLOW_NODE, launcher)
    ranks, pids = job_processes(job, RANKS[command])
    segments = mapped_segments(ranks.values())
    wait_for(lambda: out.exists() and out.read_text().endswith("\n"), deadline_s=120)
    stop(job, how, ranks)
    _, err = job.communicate(timeout=180)
    assert job.returncode != 0
    assert "Traceback" not in err, err
    wait_for(lambda: not any(running(p) for p in pids))
    assert not (target / LOCK_KEY).exists(), "the run's lock was left"
    assert left_in(target, kept) == [], "data files were left"
    assert [s for s in segments if os.path.exists(s)] == [], "MPI segments were left"
    check_output(out, runs=2 if command == "checkpoint" else 1)


@pytest.mark.parametrize("how", STOPS)
def test_a_shared_upload_under_a_users_mpiexec_is_aborted(how, s3_server, tmp_path, mpiexec):
    """N-1 on S3 under `mpiexec -n 2 hpcio run`: no launcher of hpcio's aborts what the ranks
    leave, so they must: no open multipart upload (S3 bills for its parts), no object."""
    out = tmp_path / "r.jsonl"
    prefix = f"matrix-{how}"
    words = ["run", "--pattern", "sfmw", "--target", s3_server.url(prefix), "--size-per-rank",
             "16MiB", "--part-size", "8MiB", "-i", 1000, "-o", out]  # fmt: skip
    env = {**SLOW_NODE, **s3_server.env, "HPCIO_JOURNAL_DIR": str(tmp_path / "journal")}
    job = start(words, env, mpiexec(2))
    ranks, pids = job_processes(job, 2)
    wait_for(lambda: out.exists() and out.read_text().endswith("\n"), deadline_s=120)
    stop(job, how, ranks)
    _, err = job.communicate(timeout=180)
    assert job.returncode != 0
    assert "Traceback" not in err, err
    wait_for(lambda: not any(running(p) for p in pids))
    client = s3_server.client()
    uploads = client.list_multipart_uploads(Bucket=s3_server.bucket, Prefix=f"{prefix}/")
    left = uploads.get("Uploads", [])
    for upload in left:  # so that one failure here does not fail every later test of the bucket
        client.abort_multipart_upload(Bucket=s3_server.bucket, Key=upload["Key"],
                                      UploadId=upload["UploadId"])  # fmt: skip
    assert left == [], err
    listed = client.list_objects_v2(Bucket=s3_server.bucket, Prefix=f"{prefix}/")
    assert listed.get("Contents", []) == [], err
    check_output(out)


def test_datagen_cannot_overwrite_a_data_set_being_read(data_set, hpcio, tmp_path):
    """`train datagen` takes the target's lock: a training run reading the data set keeps it
    from being rewritten under it."""
    target, kept = data_set
    out = tmp_path / "r.jsonl"
    job = start(command_line("train", f"file://{target}", out, True), SLOW_NODE)
    job_processes(job, RANKS["train"])
    wait_for(lambda: out.exists() and out.read_text().endswith("\n"), deadline_s=120)
    done = hpcio("train", "datagen", "--target", f"file://{target}", *SMALL, "--samples",
                 TRAIN_SAMPLES, "-q")  # fmt: skip
    os.killpg(job.pid, signal.SIGTERM)
    job.communicate(timeout=180)
    assert done.returncode == 2
    assert f"target file://{target} is in use by another hpcio run" in done.stderr
    assert left_in(target, kept) == []
