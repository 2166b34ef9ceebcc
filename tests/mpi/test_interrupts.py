"""A run stopped mid-way, the ways clusters stop jobs (Ctrl-C, scancel's SIGTERM to the
group, SIGTERM to the self-launching hpcio, a killed rank, a killed launcher): it says so,
leaves no incomplete upload, no data file and no process behind, and its -o file holds the
iterations it finished (status "interrupted")."""

import json
import os
import re
import signal
import subprocess
import sys
import time

import pytest
from hpcio.runner.lock import LOCK_KEY
from hpcio.runner.mpiexec import descendants

pytestmark = pytest.mark.mpi


def start(args, env, launcher=()):
    """`[launcher] python -m hpcio run args` in a session (a process group) of its own, as a
    batch job's shell starts it."""
    command = [*launcher, sys.executable, "-m", "hpcio", "run", *map(str, args)]
    clean = {k: v for k, v in os.environ.items() if not k.startswith(("OMPI_", "PMI", "HPCIO_"))}
    return subprocess.Popen(command, env={**clean, **env}, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, start_new_session=True)  # fmt: skip


def running(pid):
    """True while `pid` exists and is not a zombie waiting to be reaped."""
    try:
        with open(f"/proc/{pid}/stat") as stat:
            return stat.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


def processes_of(job, ranks):
    """The job's processes (launcher, mpiexec, ranks) once all its ranks run hpcio."""

    def found():
        tree = descendants(job.pid)
        return len([p for p in tree if _is_rank(p)]) == ranks and tree

    wait_for(found)
    return [job.pid, *descendants(job.pid)]


def _is_rank(pid):
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as cmdline:
            words = cmdline.read().split(b"\0")
    except OSError:
        return False
    return b"hpcio" in words and b"mpiexec" not in words[0] and words[0] != b"mpiexec"


def first_iteration_kept(out):
    """Rank 0 has written the document of the first finished iteration to -o."""
    wait_for(lambda: out.exists() and out.read_text().endswith("\n"))


def assert_stopped_cleanly(pids, out, target_dir, err=None):
    """No process left, no data file, and the finished iterations in -o (and in `err`)."""
    wait_for(lambda: not any(running(p) for p in pids))
    (doc,) = [json.loads(line) for line in out.read_text().splitlines()]
    assert doc["status"] == "interrupted"
    done = doc["summary"]["write"]["iterations"]
    assert 1 <= done < 1000
    assert len([p for p in doc["phases"] if p["phase"] == "read"]) == done
    if err is not None:
        assert f"hpcio: kept the {done} finished iteration(s) in {out} (status interrupted)" in err
    assert not (out.parent / f"{out.name}.partial").exists()
    assert data_files(target_dir) == []


#: Open MPI's mpiexec sends its ranks SIGTERM this long after it is stopped and SIGKILL as long
#: again after that (default 1 s). Other test runs load this 2-core node so much that 1 s can
#: pass before a rank is even scheduled; users on loaded nodes set it too (README).
SLOW_NODE = {"OMPI_MCA_odls_base_sigkill_timeout": "5"}


def long_run(target_dir, out, ranks=None):
    ranks_option = [] if ranks is None else ["-n", ranks]
    return ["--pattern", "mfmw", "--target", f"file://{target_dir}", *ranks_option,
            "--size-per-rank", "32MiB", "--fsync", "-i", 1000, "-o", out]  # fmt: skip


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


def data_files(target_dir):
    """What the run wrote there, without its lock (removed when hpcio exits, left where it was
    SIGKILLed, and reused by the next run either way)."""
    return sorted(p.name for p in target_dir.iterdir() if p.name != LOCK_KEY)


def wait_for(condition, deadline_s=60):
    deadline = time.monotonic() + deadline_s
    while time.monotonic() < deadline:
        if condition():
            return
        time.sleep(0.05)
    raise AssertionError("condition never met")


# radosgw: the one-node Ceph cluster's S3 gateway (tests/servers.py, marked ceph).
@pytest.fixture(params=["s3", "azure", pytest.param("radosgw", marks=pytest.mark.ceph)])
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
    # mpiexec stops the other ranks with SIGTERM: rank 0 aborts the upload itself, else the
    # launcher does ("aborted 1 incomplete upload(s) the job left on ...").
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
    job = start(long_run(target_dir, out, ranks=2), {})
    victim = ranks_of(job, 2)[-1]
    pids = processes_of(job, 2)
    first_iteration_kept(out)
    os.kill(victim, signal_number)
    _, err = job.communicate(timeout=120)
    assert job.returncode == 128 + signal_number
    assert_stopped_cleanly(pids, out, target_dir, err)


def test_ctrl_c_without_ranks(target_dir, tmp_path):
    out = tmp_path / "r.jsonl"
    job = start(long_run(target_dir, out), {})
    first_iteration_kept(out)
    os.killpg(job.pid, signal.SIGINT)
    _, err = job.communicate(timeout=120)
    assert job.returncode == 130
    assert err.endswith("hpcio: interrupted (SIGINT)\n")
    assert_stopped_cleanly([job.pid], out, target_dir, err)


@pytest.mark.parametrize("signal_number", [signal.SIGINT, signal.SIGTERM])
def test_user_launched_job_stopped(mpiexec, target_dir, tmp_path, signal_number):
    """Ctrl-C in the terminal, or scancel's SIGTERM, reach `mpiexec -n 2 hpcio run`'s group;
    Open MPI's mpiexec then sends the ranks (in groups of their own) SIGTERM, and SIGKILL 1 s
    later."""
    out = tmp_path / "r.jsonl"
    job = start(long_run(target_dir, out), SLOW_NODE, launcher=mpiexec(2))
    pids = processes_of(job, 2)
    first_iteration_kept(out)
    os.killpg(job.pid, signal_number)
    _, err = job.communicate(timeout=120)
    assert job.returncode != 0
    assert "hpcio: interrupted (SIGTERM)" in err
    assert_stopped_cleanly(pids, out, target_dir, err)


def test_user_launched_job_with_a_rank_killed(mpiexec, target_dir, tmp_path):
    out = tmp_path / "r.jsonl"
    job = start(long_run(target_dir, out), SLOW_NODE, launcher=mpiexec(2))
    pids = processes_of(job, 2)
    first_iteration_kept(out)
    os.kill(max(p for p in pids if _is_rank(p)), signal.SIGKILL)
    _, err = job.communicate(timeout=120)
    assert job.returncode != 0
    assert_stopped_cleanly(pids, out, target_dir, err)


@pytest.mark.parametrize("to", ["launcher", "group"])
def test_sigterm_to_the_self_launched_run(target_dir, tmp_path, to):
    out = tmp_path / "r.jsonl"
    job = start(long_run(target_dir, out, ranks=2), {})
    pids = processes_of(job, 2)
    first_iteration_kept(out)
    if to == "launcher":
        os.kill(job.pid, signal.SIGTERM)
    else:
        os.killpg(job.pid, signal.SIGTERM)
    _, err = job.communicate(timeout=120)
    assert job.returncode == 128 + signal.SIGTERM
    assert err.endswith("hpcio: interrupted (SIGTERM)\n")
    assert "a rank was killed" not in err
    assert_stopped_cleanly(pids, out, target_dir, err)


def test_killed_launcher_leaves_no_process_behind(target_dir, tmp_path):
    out = tmp_path / "r.jsonl"
    job = start(long_run(target_dir, out, ranks=2), {})
    pids = processes_of(job, 2)
    first_iteration_kept(out)
    os.kill(job.pid, signal.SIGKILL)
    job.communicate(timeout=120)
    # Nobody is left to say so, but the ranks still clean up after themselves.
    assert_stopped_cleanly(pids, out, target_dir)


def _iterations(out):
    return json.loads(out.read_text())["summary"]["write"]["iterations"]


@pytest.mark.parametrize("ranks", [None, 2])
def test_stop_during_a_long_phase(target_dir, tmp_path, ranks):
    """The engine runs a phase with the GIL released: SIGTERM must still stop it at once,
    not after its hour."""
    out = tmp_path / "r.jsonl"
    args = ["--pattern", "mfmw", "--target", f"file://{target_dir}", "--size-per-rank", "8MiB",
            "--duration", 3600, "-o", out, *([] if ranks is None else ["-n", ranks])]  # fmt: skip
    job = start(args, {})
    pids = processes_of(job, ranks) if ranks else [job.pid]
    wait_for(lambda: len(data_files(target_dir)) == (ranks or 1))  # laid out: phase on
    time.sleep(0.5)
    os.killpg(job.pid, signal.SIGTERM)
    _, err = job.communicate(timeout=60)  # an hour if the phase were not stopped
    assert job.returncode == 128 + signal.SIGTERM
    assert f"hpcio: no iteration had finished; nothing added to {out}" in err
    wait_for(lambda: not any(running(p) for p in pids))
    assert not out.exists()  # no document: no 0-byte file either
    assert data_files(target_dir) == []


def test_sigterm_to_the_launcher_of_an_object_store_run(s3_server, tmp_path):
    out = tmp_path / "r.jsonl"
    args = ["--pattern", "sfmw", "--target", s3_server.url("stopped"), "-n", 2,
            "--size-per-rank", "16MiB", "--part-size", "8MiB", "-i", 1000, "-o", out]  # fmt: skip
    job = start(args, {**s3_server.env, "HPCIO_JOURNAL_DIR": str(tmp_path / "journal")})
    pids = processes_of(job, 2)
    first_iteration_kept(out)
    os.kill(job.pid, signal.SIGTERM)
    _, err = job.communicate(timeout=120)
    assert job.returncode == 128 + signal.SIGTERM
    wait_for(lambda: not any(running(p) for p in pids))
    (doc,) = [json.loads(line) for line in out.read_text().splitlines()]
    assert doc["status"] == "interrupted"
    assert f"kept the {_iterations(out)} finished iteration(s) in {out}" in err
    client = s3_server.client()
    assert client.list_multipart_uploads(Bucket=s3_server.bucket).get("Uploads", []) == []
    listed = client.list_objects_v2(Bucket=s3_server.bucket, Prefix="stopped/")
    assert listed.get("Contents", []) == []


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


def test_stdout_gets_the_finished_iterations_of_a_stopped_run(target_dir, tmp_path):
    """-o -: rank 0 spools the documents (under $TMPDIR) and the launching hpcio prints them
    however the job ended; mpiexec would drop a rank's last words when the job is stopped."""
    spools = tmp_path / "spool"
    spools.mkdir()
    args = [*long_run(target_dir, "-", ranks=2), "-q"]
    job = start(args, {"TMPDIR": str(spools)})
    pids = processes_of(job, 2)
    wait_for(lambda: any(p.read_text().endswith("\n") for p in spools.glob("hpcio-stdout-*")))
    os.kill(job.pid, signal.SIGTERM)
    out, err = job.communicate(timeout=120)
    assert job.returncode == 128 + signal.SIGTERM
    (doc,) = [json.loads(line) for line in out.splitlines()]
    assert doc["status"] == "interrupted"
    done = doc["summary"]["write"]["iterations"]
    assert 1 <= done < 1000
    assert f"hpcio: kept the {done} finished iteration(s) in stdout" in err
    wait_for(lambda: not any(running(p) for p in pids))
    assert list(spools.iterdir()) == []
    assert data_files(target_dir) == []


@pytest.mark.parametrize("ranks", [1, 2])
def test_ctrl_c_on_the_suite_bar_restores_the_terminal(target_dir, tmp_path, ranks):
    """The bar hides the cursor while it draws; a stopped suite must show it again and say why
    on a line of its own, not at the end of the bar."""
    import pty

    suite = tmp_path / "long.toml"
    suite.write_text(
        f'[[target]]\nurl = "file://{target_dir}"\n[grid]\npatterns = ["mfmw"]\n'
        f'sizes = "1MiB"\nranks = {ranks}\nduration = 3600\n'
    )
    controller, terminal = pty.openpty()
    clean = {k: v for k, v in os.environ.items() if not k.startswith(("OMPI_", "PMI", "HPCIO_"))}
    job = subprocess.Popen(
        [sys.executable, "-m", "hpcio", "suite", "run", suite, "-o", tmp_path / "r.jsonl",
         "--display", "bar"],
        stdin=terminal, stdout=terminal, stderr=terminal, env=clean, start_new_session=True,
    )  # fmt: skip
    os.close(terminal)
    seen = bytearray()

    def read_some():
        import select

        while select.select([controller], [], [], 0.1)[0]:
            try:
                chunk = os.read(controller, 65536)
            except OSError:
                return
            if not chunk:
                return
            seen.extend(chunk)

    def drawing():
        read_some()
        return b"\x1b[?25l" in seen and len(data_files(target_dir)) == ranks

    wait_for(drawing)
    time.sleep(0.5)
    os.killpg(job.pid, signal.SIGINT)
    deadline = time.monotonic() + 60
    while job.poll() is None and time.monotonic() < deadline:
        read_some()
    read_some()
    os.close(controller)
    assert job.returncode == 128 + signal.SIGINT, bytes(seen)
    text = bytes(seen)
    assert text.rfind(b"\x1b[?25h") > text.rfind(b"\x1b[?25l"), text[-400:]
    shown = re.sub(rb"\x1b\[[0-9;?]*[A-Za-z]", b"", text)  # what the terminal shows
    message = shown.find(b"hpcio: interrupted (SIGINT)")
    assert message > 0 and shown[message - 1 : message] == b"\n", shown[-400:]


def test_sigterm_to_a_run_over_two_buckets_leaves_nothing_on_either(s3_server, tmp_path):
    # Objects in two 8 MiB parts each: a stop mid-phase leaves open uploads on both buckets
    # unless every target's are aborted (issue 28).
    client = s3_server.client()
    other = "hpcio-test-stopped"
    client.create_bucket(Bucket=other)
    out = tmp_path / "r.jsonl"
    targets = f"{s3_server.url('stopped2')},s3://{other}/stopped2"
    args = ["--pattern", "mfmw", "--target", targets, "-n", 2, "--size-per-rank", "16MiB",
            "--transfer", "8MiB", "-i", 1000, "-o", out]  # fmt: skip
    job = start(args, {**s3_server.env, "HPCIO_JOURNAL_DIR": str(tmp_path / "journal")})
    pids = processes_of(job, 2)
    first_iteration_kept(out)
    os.kill(job.pid, signal.SIGTERM)
    job.communicate(timeout=120)
    assert job.returncode == 128 + signal.SIGTERM
    wait_for(lambda: not any(running(p) for p in pids))
    (doc,) = [json.loads(line) for line in out.read_text().splitlines()]
    assert doc["status"] == "interrupted"
    assert all(len(p["targets"]) == 2 for p in doc["phases"])
    for bucket in (s3_server.bucket, other):
        assert client.list_multipart_uploads(Bucket=bucket).get("Uploads", []) == []
        listed = client.list_objects_v2(Bucket=bucket, Prefix="stopped2/")
        assert listed.get("Contents", []) == []


@pytest.mark.parametrize("launched", ["user-mpiexec", "self-launched"])
def test_sigusr1_prints_every_ranks_stacks_and_the_run_goes_on(
    launched, mpiexec, target_dir, tmp_path
):
    """A run that seems stuck says where: SIGUSR1 to mpiexec (or to hpcio, which passes it on
    to its mpiexec) reaches every rank, and each prints every thread's stack (also while it
    waits inside MPI or the engine) and goes on."""
    out = tmp_path / "r.jsonl"
    if launched == "user-mpiexec":
        job = start(long_run(target_dir, out), SLOW_NODE, launcher=mpiexec(2))
    else:
        job = start(long_run(target_dir, out, ranks=2), {})
    pids = processes_of(job, 2)
    first_iteration_kept(out)

    def iterations():
        """Finished iterations in -o, 0 while rank 0 rewrites it (one pwrite, read mid-way)."""
        try:
            return json.loads(out.read_text())["summary"]["write"]["iterations"]
        except json.JSONDecodeError:
            return 0

    before = iterations()
    os.kill(job.pid, signal.SIGUSR1)
    wait_for(lambda: job.poll() is not None or iterations() > before + 1)
    assert job.poll() is None, job.communicate()[1][-4000:]  # SIGUSR1 did not end a rank
    os.killpg(job.pid, signal.SIGTERM)
    _, err = job.communicate(timeout=120)
    assert_stopped_cleanly(pids, out, target_dir, err)
    assert err.count("most recent call first") >= 2, err  # a thread's stack, in each rank
    assert "hpcio/runner/" in err, err
