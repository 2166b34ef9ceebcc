"""The five patterns of DESIGN.md, by name."""

from __future__ import annotations

from hpcio.errors import SpecError
from hpcio.workloads._base import Workload
from hpcio.workloads.patterns.mfmr import MfmrPattern
from hpcio.workloads.patterns.mfmw import MfmwPattern
from hpcio.workloads.patterns.sfmr import SfmrPattern
from hpcio.workloads.patterns.sfmw import SfmwPattern
from hpcio.workloads.patterns.sfsw import SfswPattern

PATTERNS: dict[str, Workload] = {
    p.name: p for p in (SfswPattern(), SfmwPattern(), MfmwPattern(), SfmrPattern(), MfmrPattern())
}


def get(name: str) -> Workload:
    try:
        return PATTERNS[name]
    except KeyError:
        raise SpecError(f"unknown pattern '{name}'; choose one of {', '.join(PATTERNS)}") from None
