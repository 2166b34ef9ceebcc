"""mdtest's table from a recorded document: a row per configuration, a column per phase the
runs made, each cell the mean over the iterations of the rate the run recorded."""

import json
from pathlib import Path

from hpcio.report.mdtest import mdtest_grids, mdtest_table
from hpcio.results.io import read as read_documents

RECORDED = (
    Path(__file__).resolve().parents[1] / "data" / "mdtest" / "two-ranks-two-iterations.jsonl"
)


def test_each_cell_is_the_mean_of_the_iterations_rates():
    docs = read_documents(RECORDED)
    (table,) = mdtest_grids(docs)
    raw = json.loads(RECORDED.read_text())
    assert table.columns[:6] == ("Workload", "Ranks", "Items/rank", "Depth", "Branch", "Target")
    assert "File list" not in table.columns  # only object stores list
    (row,) = table.rows
    assert row[:5] == ("mdtest -u", "2", "60", "1", "2")
    for phase, title in (("file_create", "File create"), ("dir_stat", "Dir stat"),
                         ("tree_remove", "Tree remove")):  # fmt: skip
        rates = [p["metrics"][f"{phase}_ops_per_s"] for p in raw["phases"]]
        assert len(rates) == 2
        assert row[table.columns.index(title)] == f"{sum(rates) / 2:,.0f}"


def test_no_mdtest_runs_no_table():
    assert mdtest_grids([]) == []
    assert mdtest_table([]) == ""
