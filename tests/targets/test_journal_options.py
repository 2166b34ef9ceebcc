"""The upload journal reaches the engine as Target options (journal_dir, job): the engine
journals a multipart upload where it is told, and reads no environment variable for it."""

import json

import pytest
from hpcio import _engine

pytestmark = pytest.mark.mpi  # a real server

PART = 5 << 20


@pytest.fixture
def s3_env(s3_server, monkeypatch):
    for name, value in s3_server.env.items():
        monkeypatch.setenv(name, value)
    return s3_server


def entries(directory):
    return [json.loads(p.read_text()) for p in sorted(directory.glob("upload-*.json"))]


def test_an_upload_is_journaled_where_the_target_is_told_under_its_job(s3_env, tmp_path):
    journal = tmp_path / "journal"
    url = s3_env.url("journal-options")
    target = _engine.Target(url, journal_dir=journal, job="job-1")
    executor = _engine.Executor(target, seed=1)
    upload_id = executor.begin_shared("shared", PART)
    assert upload_id is not None, executor.figures().first_errors
    (entry,) = entries(journal)
    assert (entry["url"], entry["key"], entry["id"], entry["job"]) == (
        url,
        "shared",
        upload_id,
        "job-1",
    )
    assert executor.abort_shared("shared") is None
    assert entries(journal) == []  # an aborted upload leaves the journal


def test_the_environment_does_not_turn_the_journal_on(s3_env, tmp_path, monkeypatch):
    monkeypatch.setenv("HPCIO_JOURNAL_DIR", str(tmp_path / "from-env"))
    monkeypatch.setenv("HPCIO_JOB", "env-job")
    executor = _engine.Executor(_engine.Target(s3_env.url("journal-options")), seed=1)
    upload_id = executor.begin_shared("shared", PART)
    assert upload_id is not None, executor.figures().first_errors
    try:
        assert not (tmp_path / "from-env").exists()
    finally:
        executor.abort_shared("shared")
