"""mfmr (N-N read): every rank reads its own file (another rank's with reorder). The files are
laid out once, untimed, by mfmw's write."""

from __future__ import annotations

from typing import TYPE_CHECKING

from hpcio.workloads.contract import Phase
from hpcio.workloads.patterns.mfmw import Mfmw, untimed_layout
from hpcio.workloads.patterns.mix import mixed

if TYPE_CHECKING:
    from hpcio.spec.model import RunSpec


class Mfmr(Mfmw):
    name = "mfmr"
    summary = "N-N read: every rank reads its own file"
    own_phases = (Phase.READ,)

    def prepare(self, run: RunSpec) -> RunSpec | None:
        if run.phases is not None or mixed(run):
            return None  # --phases read: the files an earlier run left; mixed: lay_out
        return untimed_layout(run)
