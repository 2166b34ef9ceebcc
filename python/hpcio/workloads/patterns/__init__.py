"""The five patterns of DESIGN.md, by name."""

from __future__ import annotations

import re

from hpcio.errors import SpecError
from hpcio.workloads.contract import Workload
from hpcio.workloads.patterns.mfmr import MfmrPattern
from hpcio.workloads.patterns.mfmw import RANK_KEY_PATTERN, MfmwPattern
from hpcio.workloads.patterns.sfmr import SfmrPattern
from hpcio.workloads.patterns.sfmw import SHARED_KEY, SfmwPattern
from hpcio.workloads.patterns.sfsw import SFSW_KEY, SfswPattern

PATTERNS: dict[str, Workload] = {
    p.name: p for p in (SfswPattern(), SfmwPattern(), MfmwPattern(), SfmrPattern(), MfmrPattern())
}


def get(name: str) -> Workload:
    try:
        return PATTERNS[name]
    except KeyError:
        raise SpecError(f"unknown pattern '{name}'; choose one of {', '.join(PATTERNS)}") from None


#: Every file or object name a pattern (and so a profile) writes, and no other.
_OWN_KEY = re.compile(f"{re.escape(SHARED_KEY)}|{re.escape(SFSW_KEY)}|{RANK_KEY_PATTERN}")


def is_own_key(name: str) -> bool:
    """Whether `name` is one hpcio makes: `hpcio clean` deletes these and nothing else."""
    return _OWN_KEY.fullmatch(name) is not None
