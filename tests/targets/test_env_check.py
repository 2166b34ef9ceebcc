"""`hpcio env --target` checks the target, within seconds, and says why a run could not use it
(issue 25): a missing bucket, rejected credentials; --store-option endpoint= is the endpoint
described and checked."""

from __future__ import annotations


def env(hpcio_process, server, *args, environ=None):
    return hpcio_process("env", *args, env=environ if environ is not None else server.env)


def test_a_reachable_bucket_passes(hpcio_process, s3_server):
    done = env(hpcio_process, s3_server, "--target", s3_server.url("p"))
    assert (done.returncode, done.stderr) == (0, "")
    assert f"endpoint      {s3_server.endpoint}" in done.stdout


def test_a_missing_bucket_is_said(hpcio_process, s3_server, error_line):
    done = env(hpcio_process, s3_server, "--target", "s3://no-such-bucket-hpcio/p")
    assert done.returncode == 2
    assert error_line(done) == (
        "hpcio: error: target s3://no-such-bucket-hpcio/p: the bucket or container does not exist"
    )


def test_rejected_credentials_are_said(hpcio_process, s3_server, error_line):
    wrong = {**s3_server.env, "AWS_SECRET_ACCESS_KEY": "not-the-secret"}
    done = env(hpcio_process, s3_server, "--target", s3_server.url("p"), environ=wrong)
    assert done.returncode == 2
    assert "the credentials were rejected" in error_line(done)
    assert "not-the-secret" not in done.stdout + done.stderr


def test_the_endpoint_option_is_honoured(hpcio_process, s3_server):
    environ = {k: v for k, v in s3_server.env.items() if "ENDPOINT" not in k}
    done = env(hpcio_process, s3_server, "--target", s3_server.url("p"), "--store-option",
               f"endpoint={s3_server.endpoint}", environ=environ)  # fmt: skip
    assert (done.returncode, done.stderr) == (0, "")
    assert f"endpoint      {s3_server.endpoint}" in done.stdout
