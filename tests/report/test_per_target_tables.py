"""Reports of a run over several targets (issue 28), from a recorded document
(tests/data/several): the per-target tables, rows and costs, and the study table's column."""

import csv
import io
import re
from pathlib import Path

import pytest
from hpcio.report.cost import choose_price, estimate_cost, facts_of
from hpcio.report.prices import load_catalogue
from hpcio.report.rows import render_rows, rows
from hpcio.report.tables import study_tables
from hpcio.report.targets import ALL, target_grids
from hpcio.results import io as results_io

DATA = Path(__file__).resolve().parents[1] / "data"
TARGETS = ["s3://hpcio-test/several", "s3://hpcio-test-b/several"]


@pytest.fixture(scope="module")
def doc():
    (found,) = results_io.read(DATA / "several" / "mfmw-s3-two-buckets.jsonl")
    return found


def test_the_recorded_runs_targets_add_up(doc):
    assert [t["url"] for t in doc.run["targets"]] == TARGETS
    for phase in doc.phases:
        assert sum(t.bytes_total for t in phase.targets) == phase.bytes_total
        assert sum(t.ranks for t in phase.targets) == phase.ranks == 4


def test_a_table_per_phase_has_a_row_per_target_and_the_totals(doc):
    grids = target_grids([doc])
    assert [g.title for g in grids] == [
        "run 1: mfmw write over 2 targets", "run 1: mfmw read over 2 targets",
    ]  # fmt: skip
    for g, phase in zip(grids, ("write", "read"), strict=True):
        assert [r[0] for r in g.rows] == [*TARGETS, ALL]
        moved = g.columns.index("Moved Per Iteration (MiB)")
        *parts, whole = (float(r[moved]) for r in g.rows)
        assert sum(parts) == whole == doc.summary[phase].bytes_total / (1 << 20)
        bandwidth = g.columns.index("Bandwidth (MiB/s)")
        assert float(g.rows[-1][bandwidth]) == pytest.approx(
            doc.summary[phase].bytes_total / (1 << 20) / doc.summary[phase].seconds.mean, 1e-3
        )


def test_a_run_with_one_target_gets_no_such_table():
    (single,) = results_io.read(DATA / "null" / "mfmw-one-rank.jsonl")
    assert target_grids([single]) == []
    assert "target_part" not in rows([single])[0]


def test_rows_follow_the_whole_run_with_one_per_target(doc):
    found = list(csv.DictReader(io.StringIO(render_rows(rows([doc])))))
    assert [(r["phase"], r["target_part"]) for r in found] == [
        ("write", "all"), ("write", "1 of 2"), ("write", "2 of 2"),
        ("read", "all"), ("read", "1 of 2"), ("read", "2 of 2"),
    ]  # fmt: skip
    assert [r["target_url"] for r in found[:3]] == ["+".join(TARGETS), *TARGETS]
    whole, *parts = found[:3]
    assert sum(float(p["bytes_per_iteration"]) for p in parts) == float(
        whole["bytes_per_iteration"]
    )
    assert sum(int(p["ranks"]) for p in parts) == int(whole["ranks"])


def test_the_study_table_names_every_target(doc):
    (write, _) = study_tables([doc])
    assert write.title == f"mfmw write on {' + '.join(TARGETS)}"


def test_cost_prices_each_targets_requests(doc):
    catalogue = load_catalogue()
    price, kind = choose_price(catalogue, "s3")
    cost = estimate_cost(doc, catalogue, price, kind, 0, facts_of(doc))
    (note,) = [n for n in cost.notes if n.startswith("requests per target")]
    for url in TARGETS:
        assert url in note
    amounts = [float(a) for a in re.findall(r"\$([0-9.]+)", note)]
    assert len(amounts) == 2
    assert sum(amounts) == pytest.approx(cost.requests_cost, rel=1e-2)
