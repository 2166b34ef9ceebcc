"""Faults leave nothing behind: hpcio writing through toxiproxy (tests/servers.py's
proxied_store, the "lossy" condition's toxics one kind at a time) to versitygw (S3) and Azurite
(Azure Blob), 2 ranks, for the write patterns that stage parts or blocks (sfmw: distributed
multipart / block list; mfmw; sfsw). A fault the retries outlast must end in a complete,
verified run whose `store_failures` name its cause; one they cannot must end in one line on
stderr and a non-zero exit, with no object, no open multipart upload and no uncommitted blob
left, within the bound the store options set, and a result document still written.

fake-gcs-server refuses every write object_store makes (tests/servers.py's FakeGcsServer), so
GCS is left out here: a write to it fails before any fault can matter.
"""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
import servers
from hpcio import conditions

pytestmark = [pytest.mark.servers, pytest.mark.mpi]

MiB = 1 << 20
#: No run here should come near this: it only stops a hang, and a hang fails the test.
HANG_S = 400
#: A client timeout under the stall's 20 s, and few retries, so a run that cannot succeed
#: ends soon; long enough for a 5 MiB part to a busy local server.
RETRIES = ("--store-option", "timeout=8s", "--store-option", "max_retries=4",
           "--store-option", "retry_timeout_s=60")  # fmt: skip
#: 2 ranks x 20 MiB in 5 MiB parts (S3's smallest): 8 parts a run, 4 requests in flight.
SIZES = ("--size-per-rank", "20MiB", "--part-size", "5MiB", "--in-flight", "2")
PATTERNS = ("sfmw", "mfmw", "sfsw")
#: No idle connection is kept, so each request opens one and meets a toxic with its share.
ONE_CONNECTION_A_REQUEST = ("--store-option", "pool_max_idle_per_host=0")
#: Three iterations: 24 parts a run, so a fault on a share of the connections is all but
#: certain to meet some (0.7^24 < 0.0002 for a share of 0.3).
MANY = ("-i", "3")


def _lossy(name: str) -> dict:
    return next(t for t in conditions.condition("lossy").toxics() if t["name"] == name)


def _always(toxic: dict, **attributes: int) -> dict:
    """The toxic on every connection (so the fault is sure to happen), with its attributes."""
    return {**toxic, "toxicity": 1.0, "attributes": {**toxic["attributes"], **attributes}}


@pytest.fixture(params=["s3", "azure"])
def server(request):
    missing = servers.Toxiproxy.missing()
    if missing:
        pytest.skip(missing)
    server = request.getfixturevalue(f"{request.param}_server")
    yield server
    _sweep(server)


#: The prefixes the tests here write under (f"{fault}-{pattern}").
_FAULTS = ("reset", "resetall", "cut", "cutall", "stall", "stallall")


def _sweep(server) -> None:
    """Remove what a test here left on the session's store (the xfail cases below leave an
    upload or an object by design), so no later test in the session finds it."""
    if not server.url().startswith("s3://"):
        return  # Azurite's uncommitted blocks are invisible to other tests' listings
    client = server.client()
    for pattern in PATTERNS:
        for fault in _FAULTS:
            prefix = f"{fault}-{pattern}/"
            uploads = client.list_multipart_uploads(Bucket=server.bucket, Prefix=prefix)
            for upload in uploads.get("Uploads", []):
                client.abort_multipart_upload(Bucket=server.bucket, Key=upload["Key"],
                                              UploadId=upload["UploadId"])  # fmt: skip
            listed = client.list_objects_v2(Bucket=server.bucket, Prefix=prefix)
            for item in listed.get("Contents", []):
                client.delete_object(Bucket=server.bucket, Key=item["Key"])


def _run(store, prefix, pattern, tmp_path, *extra):
    out = tmp_path / f"{prefix}.jsonl"
    command = store.command([sys.executable, "-m", "hpcio", "run", "-n", "2", "-q",
                             "--target", store.url(prefix), "--pattern", pattern, *SIZES,
                             *RETRIES, "--verify", "-o", str(out), *extra])  # fmt: skip
    done = subprocess.run(command, env=store.environ(), capture_output=True, text=True,
                          timeout=HANG_S, check=False)  # fmt: skip
    docs = [json.loads(line) for line in out.read_text().splitlines()] if out.exists() else []
    return done, docs


def _failures(doc) -> dict[str, int]:
    total: dict[str, int] = {}
    for phase in doc["phases"]:
        for cause, count in (phase.get("store_failures") or {}).items():
            total[cause] = total.get(cause, 0) + count
    return total


def _left_behind(server, prefix) -> list[str]:
    """Objects, open multipart uploads and uncommitted blobs under `prefix`."""
    if server.url().startswith("s3://"):
        client = server.client()
        listed = client.list_objects_v2(Bucket=server.bucket, Prefix=f"{prefix}/")
        uploads = client.list_multipart_uploads(Bucket=server.bucket, Prefix=f"{prefix}/")
        return [o["Key"] for o in listed.get("Contents", [])] + [
            f"upload {u['Key']}" for u in uploads.get("Uploads", [])
        ]
    container = server.container_client()
    return [b.name for b in container.list_blobs(name_starts_with=f"{prefix}/",
                                                 include=["uncommittedblobs"])]  # fmt: skip


def _completed_with(done, docs, cause):
    assert done.returncode == 0, done.stderr
    assert docs and all(p["errors"] == 0 for p in docs[-1]["phases"])
    failures = _failures(docs[-1])
    assert failures.get(cause, 0) > 0, failures
    return failures


def _failed_cleanly(done, docs, server, prefix):
    assert done.returncode != 0
    lines = [line for line in done.stderr.splitlines() if line.strip()]
    # One error line; the clean-up may add what it aborted ("hpcio: aborted 1 incomplete
    # upload(s) ..."), a line of its own.
    assert [line for line in lines if line.startswith("hpcio: error:")] == lines[:1], done.stderr
    assert all(line.startswith("hpcio: ") for line in lines), done.stderr
    assert _left_behind(server, prefix) == []


def _completed_or_failed_cleanly(done, docs, server, prefix, cause):
    """The issue's either-or: a complete run, every byte verified, whose store_failures name
    `cause` (so the fault did happen), or one line, a non-zero exit and nothing left."""
    if done.returncode == 0:
        failures = _completed_with(done, docs, cause)
        assert _left_behind(server, prefix) == []
        print(f"{prefix} on {server.scheme}: completed, store_failures {failures}")  # -rA shows it
        return "completed"
    _failed_cleanly(done, docs, server, prefix)
    print(f"{prefix} on {server.scheme}: failed cleanly: {done.stderr.strip()[:200]}")
    return "failed"


# A CreateMultipartUpload the store carried out but whose answer was reset is retried, and
# only the second upload is known to the run. The engine lists the key's uploads after a create
# that met a failure and aborts the others (engine/src/target/object.rs, abort_strays), but
# that LIST and those aborts meet the same resets; so the launcher, after the job (failed or
# finished), lists the open uploads under every key the run wrote and its lock, and aborts
# them, each request retried past the resets (runner/cleanup.py abort_run_uploads), and the
# lock's removal is retried likewise (runner/lock.py _release_object).
@pytest.mark.parametrize("pattern", PATTERNS)
def test_resets_on_some_connections_are_retried_and_counted(server, pattern, tmp_path):
    # A third of the connections is reset (RST) once a response starts; a connection a request
    # (no pooling), so every run meets several resets.
    reset = {**_lossy("reset"), "toxicity": 0.3}
    with servers.proxied_store(server, "lossy", toxics=[reset]) as store:
        done, docs = _run(
            store, f"reset-{pattern}", pattern, tmp_path, *ONE_CONNECTION_A_REQUEST, *MANY
        )
    _completed_or_failed_cleanly(done, docs, server, f"reset-{pattern}", "connection_reset")


@pytest.mark.parametrize("pattern", PATTERNS)
def test_resets_on_every_connection_fail_in_one_line_and_leave_nothing(server, pattern, tmp_path):
    with servers.proxied_store(server, "lossy", toxics=[_always(_lossy("reset"))]) as store:
        done, docs = _run(store, f"resetall-{pattern}", pattern, tmp_path)
    _failed_cleanly(done, docs, server, f"resetall-{pattern}")


@pytest.mark.parametrize("pattern", PATTERNS)
def test_bodies_cut_mid_way_are_retried_and_counted(server, pattern, tmp_path):
    # A third of the connections closes after 1 MiB of a 5 MiB part went up.
    cut = {**_lossy("cut"), "toxicity": 0.3, "attributes": {"bytes": MiB}}
    with servers.proxied_store(server, "lossy", toxics=[cut]) as store:
        done, docs = _run(
            store, f"cut-{pattern}", pattern, tmp_path, *ONE_CONNECTION_A_REQUEST, *MANY
        )
    _completed_or_failed_cleanly(done, docs, server, f"cut-{pattern}", "connection_reset")


@pytest.mark.parametrize("pattern", ("mfmw", "sfmw"))
def test_a_get_cut_mid_body_is_resumed_counted_and_verified(server, pattern, tmp_path):
    # object_store resumes a GET whose body broke off with a GET of the rest; the cut never
    # reaches the connector as a failed request, so its body is watched to count it (it went
    # uncounted before). Half the connections close 2 MiB into their answer: most 5 MiB GETs
    # are cut once or twice, none for good.
    prefix = f"resume-{pattern}"
    with servers.proxied_store(server, "lossy", toxics=[]) as store:
        written = subprocess.run(store.command([sys.executable, "-m", "hpcio", "run", "-n", "2",
                                                "-q", "--target", store.url(prefix), "--pattern",
                                                pattern, *SIZES, "--phases", "write", "--keep"]),
                                 env=store.environ(), capture_output=True, text=True,
                                 timeout=HANG_S, check=False)  # fmt: skip
        assert written.returncode == 0, written.stderr
        cut = {"name": "cut-answers", "type": "limit_data", "stream": "downstream",
               "toxicity": 0.5, "attributes": {"bytes": 2 * MiB}}  # fmt: skip
        store.set_toxics([cut])
        done, docs = _run(store, prefix, pattern, tmp_path, "--phases", "read",
                          *ONE_CONNECTION_A_REQUEST, *MANY)  # fmt: skip
        store.set_toxics([])
        cleaned = subprocess.run(store.command([sys.executable, "-m", "hpcio", "clean",
                                                "--target", store.url(prefix)]),
                                 env=store.environ(), capture_output=True, text=True,
                                 timeout=HANG_S, check=False)  # fmt: skip
    assert done.returncode == 0, done.stderr
    reads = [p for p in docs[-1]["phases"] if p["phase"] == "read"]
    assert len(reads) == 3 and all(p["errors"] == 0 for p in reads)
    assert sum(p["store_failures"].get("connection_reset", 0) for p in reads) > 0
    assert sum(p["retried"] for p in reads) > 0
    assert cleaned.returncode == 0, cleaned.stderr
    assert _left_behind(server, prefix) == []


@pytest.mark.parametrize("pattern", PATTERNS)
def test_a_body_no_connection_can_carry_fails_in_one_line_and_leaves_nothing(
    server, pattern, tmp_path
):
    # Every connection closes after 1 MiB up: no 5 MiB part ever arrives.
    cut = _always(_lossy("cut"), bytes=MiB)
    with servers.proxied_store(server, "lossy", toxics=[cut]) as store:
        done, docs = _run(store, f"cutall-{pattern}", pattern, tmp_path)
    _failed_cleanly(done, docs, server, f"cutall-{pattern}")


#: A stalled PUT toxiproxy hands on once the client gave up on it can land after the run
#: deleted its object: the target probe's .hpcio-probe-PID (a 5-byte object). A run whose
#: probe PUT was retried now deletes it again at each removal of its objects, which covers a
#: run that goes on; a run whose probe fails outright (every try stalled) has ended before the
#: PUT lands (seen in 2 of 9 runs with the fix).
LATE_LANDING = pytest.mark.xfail(
    strict=False, reason="a stalled probe PUT can land after a run that failed at its probe"
)


@LATE_LANDING
@pytest.mark.parametrize("pattern", PATTERNS)
def test_stalled_requests_time_out_and_are_retried(server, pattern, tmp_path):
    # A fifth of the connections stall; the client's 2 s timeout ends each stalled request.
    stall = {**_lossy("stall"), "toxicity": 0.2}
    with servers.proxied_store(server, "lossy", toxics=[stall]) as store:
        done, docs = _run(
            store, f"stall-{pattern}", pattern, tmp_path, *ONE_CONNECTION_A_REQUEST, *MANY
        )
    _completed_or_failed_cleanly(done, docs, server, f"stall-{pattern}", "timeout")


@pytest.mark.parametrize("pattern", PATTERNS)
def test_a_stall_past_every_retry_fails_in_one_line_and_leaves_nothing(server, pattern, tmp_path):
    # Every connection stalls for good: the timeout and retry budget in RETRIES end the run.
    stall = _always(_lossy("stall"), timeout=0)
    with servers.proxied_store(server, "lossy", toxics=[stall]) as store:
        done, docs = _run(store, f"stallall-{pattern}", pattern, tmp_path)
    _failed_cleanly(done, docs, server, f"stallall-{pattern}")


@pytest.mark.parametrize("pattern", PATTERNS)
def test_slow_closes_change_nothing_but_time(server, pattern, tmp_path):
    with servers.proxied_store(server, "lossy", toxics=[_lossy("slow_close")]) as store:
        done, docs = _run(
            store, f"slow-{pattern}", pattern, tmp_path, *ONE_CONNECTION_A_REQUEST, *MANY
        )
    assert done.returncode == 0, done.stderr
    assert all(p["errors"] == 0 for p in docs[-1]["phases"])
    assert _left_behind(server, f"slow-{pattern}") == []
