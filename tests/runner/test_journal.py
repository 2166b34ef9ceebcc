"""runner/journal.py hands the launcher's journal to each rank's engine as Target options."""

from pathlib import Path

from hpcio.runner import journal


def test_a_launched_rank_journals_where_the_launcher_set_up(monkeypatch, tmp_path):
    # As the launcher's set_up() leaves them for the ranks it starts (set here so the test's
    # environment is restored after it).
    monkeypatch.setenv("HPCIO_JOURNAL_DIR", str(tmp_path))
    monkeypatch.setenv("HPCIO_JOB", "job-7")
    assert journal.set_up() == "job-7"
    assert journal.engine_options() == (Path(tmp_path), "job-7")


def test_a_process_no_launcher_set_up_journals_nothing(monkeypatch):
    monkeypatch.delenv("HPCIO_JOURNAL_DIR", raising=False)
    monkeypatch.delenv("HPCIO_JOB", raising=False)
    assert journal.engine_options() == (None, "")
