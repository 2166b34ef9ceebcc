"""Where --trace puts a run's files: beside -o's results, or in ./hpcio-trace."""

import os

from hpcio.results import io as results_io
from hpcio.runner import tracing


def test_traces_go_beside_the_results_or_in_the_working_directory(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv(results_io.SPOOL_VARIABLE, raising=False)
    assert tracing.root_for("out/results.jsonl") == str(tmp_path / "out" / "results.trace")
    assert tracing.root_for(None) == str(tmp_path / "hpcio-trace")
    assert tracing.root_for("-") == str(tmp_path / "hpcio-trace")
    # With -o -, rank 0 writes the documents to a spool file: the traces still go to ./.
    monkeypatch.setenv(results_io.SPOOL_VARIABLE, "/tmp/spool.jsonl")
    assert tracing.root_for("/tmp/spool.jsonl") == os.path.join(str(tmp_path), "hpcio-trace")
