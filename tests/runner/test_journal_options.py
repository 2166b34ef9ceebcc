"""runner/journal.py hands the launcher's journal to each rank's engine as Target options."""

from pathlib import Path

from hpcio.runner import journal


def test_a_launched_rank_journals_where_the_launcher_set_up(monkeypatch, tmp_path):
    monkeypatch.setenv("HPCIO_JOURNAL_DIR", str(tmp_path))
    monkeypatch.delenv("HPCIO_JOB", raising=False)
    job = journal.set_up()
    assert journal.engine_options() == (Path(tmp_path), job)


def test_a_process_no_launcher_set_up_journals_nothing(monkeypatch):
    monkeypatch.delenv("HPCIO_JOURNAL_DIR", raising=False)
    monkeypatch.delenv("HPCIO_JOB", raising=False)
    assert journal.engine_options() == (None, "")
