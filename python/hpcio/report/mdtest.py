"""mdtest's SUMMARY as a table, from the documents of `--workload mdtest`: one row per
configuration (ranks, items, tree, target), one column per mdtest phase, each cell the mean
over the iterations of the phase's operations per second (mdtest's rate, as the run
reduced it)."""

from __future__ import annotations

from collections.abc import Sequence

from hpcio.report.grid import Grid, grid
from hpcio.report.profiles import _table
from hpcio.results.schema import ResultDocument
from hpcio.workloads import shown

_TITLE = "metadata rates (mdtest, ops/s: mean of iterations)"
#: mdtest's phases in its SUMMARY's words (the keys of the documents' metrics).
PHASES = (
    ("dir_create", "Dir create"),
    ("dir_stat", "Dir stat"),
    ("dir_remove", "Dir remove"),
    ("file_create", "File create"),
    ("file_stat", "File stat"),
    ("file_list", "File list"),
    ("file_read", "File read"),
    ("file_remove", "File remove"),
    ("tree_create", "Tree create"),
    ("tree_remove", "Tree remove"),
)
_SHAPE = ("Workload", "Ranks", "Items/rank", "Depth", "Branch", "Target")


def mdtest_grids(docs: Sequence[ResultDocument]) -> list[Grid]:
    """The table of the mdtest runs among `docs` (none without them); a phase no run made
    has no column."""
    rows: dict[tuple[str, ...], dict[str, list[float]]] = {}
    for doc in docs:
        if doc.workload != "mdtest":
            continue
        p = doc.params
        shape = (p.get("items"), p.get("depth"), p.get("branch"), doc.run["target"]["url"])
        key = (shown.label(doc.workload, doc.settings), str(doc.ranks), *map(str, shape))
        rates = rows.setdefault(key, {})
        for phase in doc.phases:
            for name, _ in PHASES:
                rate = phase.metrics.get(f"{name}_ops_per_s")
                if rate is not None:
                    rates.setdefault(name, []).append(float(rate))
    if not rows:
        return []
    made = [(name, title) for name, title in PHASES if any(name in r for r in rows.values())]
    lines = []
    for key, rates in rows.items():
        cells = [
            f"{sum(rates[name]) / len(rates[name]):,.0f}" if rates.get(name) else "-"
            for name, _ in made
        ]
        lines.append([*key, *cells])
    return [grid(_TITLE, (*_SHAPE, *(title for _, title in made)), lines)]


def mdtest_table(docs: Sequence[ResultDocument]) -> str:
    """The table in markdown; '' without mdtest runs."""
    found = mdtest_grids(docs)
    if not found:
        return ""
    (table,) = found
    return f"### {table.title}\n\n" + _table(table.columns, table.rows) + "\n"
