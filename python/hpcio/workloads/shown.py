"""How each workload's documents are shown: its family (which tables it goes to), its name in
tables, and the facts about its figures that reports need. Each workload declares these itself
(workloads/contract.py); this is what reports read of them. The registry imports without the
native engine (workloads/native.py loads it on first use), so reports still run without it. A
workload not registered here (a newer hpcio's document) is shown by its name."""

from __future__ import annotations

from hpcio.workloads.profiles.iozone import TESTS as IOZONE_TESTS
from hpcio.workloads.registry import (
    family_of,
    label,
    moves_data_set,
    shows_bandwidth,
    sized_globally,
)

__all__ = [
    "IOZONE_TESTS",
    "family_of",
    "label",
    "moves_data_set",
    "shows_bandwidth",
    "sized_globally",
]
