"""The MLPerf table's Result: pass only for a run of a valid MLPerf Storage size."""

import pytest
from hpcio.report.training import PASS_AU_PERCENT, au_percent, au_rows, broken_sizing
from hpcio.results import io as results_io


@pytest.fixture(scope="module")
def small_run(hpcio, tmp_path_factory):
    """A real training run far under MLPerf's sizes (2 steps per epoch, not 500), one rank on
    memory:// so the accelerator is kept busy."""
    out = tmp_path_factory.mktemp("train") / "train.jsonl"
    sizes = ("--scale", "small", "--samples", 14, "--epochs", 1, "--compute-time", "0.2")
    done = hpcio("train", "unet3d", "-n", 1, "--target", "memory://", *sizes, "-o", out, "-q")
    assert done.returncode == 0, done.stderr
    return out


def test_a_run_of_an_invalid_size_never_passes(small_run, hpcio):
    (doc,) = results_io.read(small_run)
    assert broken_sizing(doc)
    ((*_, au_cell, _, result),) = au_rows([doc])
    assert float(au_cell) == pytest.approx(au_percent(doc), abs=0.005)
    assert result == ("invalid size" if au_percent(doc) >= PASS_AU_PERCENT else "fail")
    shown = hpcio("report", small_run)
    assert shown.returncode == 0, shown.stderr
    assert "not a valid MLPerf Storage size:" in shown.stdout
    assert "| pass" not in shown.stdout
