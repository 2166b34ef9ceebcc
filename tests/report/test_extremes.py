"""The HTML summary's best and worst runs: each run is one or the other, never both, and the
labels say which end of the ranking it is at whatever the number of runs."""

from __future__ import annotations

import pytest
from hpcio.report import summary
from hpcio.results import io


@pytest.mark.parametrize("count", [1, 2, 3, 5, 7])
def test_few_runs_split_between_best_and_worst(results, count):
    docs = [*io.read(results.a), *io.read(results.again), *io.read(results.t2_file)][:count]
    assert len(docs) == count, "the recorded results hold too few runs"
    order = summary.ranked(docs, "write")
    best, worst = summary.extremes(docs, "write")
    assert best == order[: len(best)]
    assert worst == order[::-1][: len(worst)]
    assert not set(map(id, best)) & set(map(id, worst))
    assert len(best) == min(summary.EXTREMES, (count + 1) // 2)
    assert len(worst) == min(summary.EXTREMES, count - len(best))
