"""Every family's own tables of a set of documents, as grids: the fio study's matrices, IOzone's
table, the RTM library table, the checkpoint table, the MLPerf AU table, mdtest's rates, and a
run's figures target by target. Markdown prints each in its study's layout; CSV, JSON and HTML
render these same grids."""

from __future__ import annotations

from collections.abc import Sequence

from hpcio.report.checkpoints import checkpoint_grids
from hpcio.report.grid import Grid
from hpcio.report.iozone import iozone_grids
from hpcio.report.libraries import library_grids
from hpcio.report.mdtest import mdtest_grids
from hpcio.report.profiles import profile_grids
from hpcio.report.targets import target_grids
from hpcio.report.training import training_grids
from hpcio.results.schema import ResultDocument


def family_grids(docs: Sequence[ResultDocument]) -> list[Grid]:
    """The family tables of `docs`, in the order `hpcio report` prints them."""
    return [
        *profile_grids(docs),
        *iozone_grids(docs),
        *library_grids(docs),
        *training_grids(docs),
        *checkpoint_grids(docs),
        *mdtest_grids(docs),
        *target_grids(docs),
    ]
