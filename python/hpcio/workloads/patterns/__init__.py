"""The five patterns of DESIGN.md."""

from hpcio.workloads.patterns.mfmr import Mfmr
from hpcio.workloads.patterns.mfmw import Mfmw
from hpcio.workloads.patterns.sfmr import Sfmr
from hpcio.workloads.patterns.sfmw import Sfmw
from hpcio.workloads.patterns.sfsw import Sfsw

__all__ = ["Mfmr", "Mfmw", "Sfmr", "Sfmw", "Sfsw"]
