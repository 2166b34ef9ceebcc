"""What the stores' failures say, secrets kept out of ranks' command lines, and `hpcio clean`
against real uploads (issue 11, sections 4 and 5), on versitygw and a one-answer HTTP server,
both on 127.0.0.1."""

import http.server
import subprocess
import sys
import threading
import time

import pytest
import servers
from hpcio.runner.mpiexec import descendants

MiB = 1 << 20


def run_args(target, *more):
    return ("run", "--pattern", "mfmw", "--target", target, "--size-per-rank", "1MiB",
            "--transfer", "1MiB", *more)  # fmt: skip


def test_an_unknown_access_key_passes_on_the_servers_words(hpcio, error_line, s3_server):
    env = dict(s3_server.env, AWS_ACCESS_KEY_ID="NO-SUCH-KEY")
    done = hpcio(*run_args(s3_server.url("keys")), env=env)
    assert done.returncode == 2
    assert error_line(done) == (
        f"hpcio: error: target {s3_server.url('keys')}: the credentials were rejected "
        "(XAdminUserNotFound: No user exists with the provided access key ID.)"
    )


def test_a_wrong_secret_passes_on_the_servers_words_not_the_secret(hpcio, error_line, s3_server):
    env = dict(s3_server.env, AWS_SECRET_ACCESS_KEY="not-the-secret-0123")
    done = hpcio(*run_args(s3_server.url("keys")), env=env)
    assert error_line(done) == (
        f"hpcio: error: target {s3_server.url('keys')}: the credentials were rejected "
        "(SignatureDoesNotMatch: The request signature we calculated does not match the "
        "signature you provided. Check your key and signing method.)"
    )
    assert "not-the-secret-0123" not in done.stdout + done.stderr


class _Refuser(http.server.BaseHTTPRequestHandler):
    """An S3 endpoint that refuses everything with a message of several lines."""

    body = (b"<?xml version='1.0'?>\n<Error><Code>Teapot</Code><Message>first line\n"
            b"second line\r\n  third line</Message></Error>")  # fmt: skip

    def _refuse(self):
        self.send_response(400)
        self.send_header("Content-Length", str(len(self.body)))
        self.end_headers()
        self.wfile.write(self.body)

    do_GET = do_PUT = do_POST = do_DELETE = do_HEAD = _refuse  # noqa: N815 (http.server names)

    def log_message(self, *args):
        pass


def test_a_server_message_of_several_lines_is_one_error_line(hpcio, error_line):
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Refuser)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        env = {"AWS_ENDPOINT": f"http://127.0.0.1:{server.server_port}", "AWS_ALLOW_HTTP": "true",
               "AWS_REGION": "us-east-1", "AWS_ACCESS_KEY_ID": "k",
               "AWS_SECRET_ACCESS_KEY": "s"}  # fmt: skip
        done = hpcio(*run_args("s3://refusing/x"), env=env)
    finally:
        server.shutdown()
        server.server_close()
    assert error_line(done) == (
        "hpcio: error: target s3://refusing/x: the store refused the request "
        "(HTTP 400 Bad Request) (Teapot: first line second line third line)"
    )


@pytest.mark.parametrize("s3_server", servers.S3_GATEWAYS, indirect=True)
def test_clean_aborts_hpcios_stale_uploads_and_no_others(hpcio, s3_server):
    client, bucket = s3_server.client(), s3_server.bucket
    keys = ["stale/hpcio-shared.dat", "stale/hpcio-rank000001.dat", "stale/notes.dat",
            "stale/deeper/hpcio-shared.dat", "fresh/hpcio-shared.dat"]  # fmt: skip
    for key in keys:
        upload = client.create_multipart_upload(Bucket=bucket, Key=key)
        client.upload_part(Bucket=bucket, Key=key, UploadId=upload["UploadId"], PartNumber=1,
                           Body=b"x" * 1000)  # fmt: skip

    dry = hpcio("clean", "--target", s3_server.url("stale"), "--dry-run", env=s3_server.env)
    assert dry.returncode == 0, dry.stderr
    assert dry.stdout.splitlines()[:2] == [
        "would abort the incomplete upload of hpcio-rank000001.dat",
        "would abort the incomplete upload of hpcio-shared.dat",
    ]
    done = hpcio("clean", "--target", s3_server.url("stale"), env=s3_server.env)
    assert done.returncode == 0, done.stderr
    assert "aborted the incomplete upload of hpcio-shared.dat" in done.stdout.splitlines()
    left = client.list_multipart_uploads(Bucket=bucket).get("Uploads", [])
    assert sorted(u["Key"] for u in left if u["Key"] in keys) == sorted(
        ["stale/notes.dat", "stale/deeper/hpcio-shared.dat", "fresh/hpcio-shared.dat"]
    )
    for upload in left:
        client.abort_multipart_upload(Bucket=bucket, Key=upload["Key"], UploadId=upload["UploadId"])


def _cmdline(pid):
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            return f.read().replace(b"\0", b" ").decode()
    except OSError:
        return ""


@pytest.mark.mpi
def test_store_options_reach_the_ranks_but_not_their_command_lines(s3_server, tmp_path):
    # The secret key is given only as a store option: the ranks can write only if they get it.
    secret = s3_server.env["AWS_SECRET_ACCESS_KEY"]
    env = {k: v for k, v in s3_server.environ().items() if k != "AWS_SECRET_ACCESS_KEY"}
    env = {k: v for k, v in env.items() if not k.startswith(("OMPI_", "PMI", "HPCIO_"))}
    out = tmp_path / "r.jsonl"
    command = [sys.executable, "-m", "hpcio", "run", "--pattern", "mfmw", "-n", "2",
               "--target", s3_server.url("argv"), "--size-per-rank", "1MiB",
               "--transfer", "64KiB", "--files-per-rank", "16", "--duration", "3", "-q",
               "--store-option", f"aws_secret_access_key={secret}", "-o", str(out)]  # fmt: skip
    launcher = subprocess.Popen(command, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    seen = {}
    try:
        deadline = time.monotonic() + 60
        while launcher.poll() is None and time.monotonic() < deadline:
            for pid in descendants(launcher.pid):
                seen[pid] = _cmdline(pid) or seen.get(pid, "")
            time.sleep(0.1)
        _, stderr = launcher.communicate(timeout=60)
    finally:
        if launcher.poll() is None:
            launcher.kill()
            launcher.wait()
    assert launcher.returncode == 0, stderr.decode()
    ranks = [line for line in seen.values() if "-m hpcio run" in line]
    assert len(ranks) >= 2, seen  # mpiexec's command and the two ranks were seen
    assert not [line for line in seen.values() if secret in line], seen
    assert out.read_text().count("\n") == 1
