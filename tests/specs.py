"""Runs and plans for tests, made the way the commands make them: RunSpec.build and the
workload registry (the workload's own body for a phase and rank)."""

from __future__ import annotations

from typing import Any

from hpcio.spec.model import RunSpec
from hpcio.spec.target import TargetSpec
from hpcio.workloads.contract import Body, Phase, RankInfo
from hpcio.workloads.plans import Plan

#: Plans and sizes need a target only for its kind; nothing is written there.
NOWHERE = "file:///tmp/x"


def run_spec(workload: str, url: str = NOWHERE, **settings: Any) -> RunSpec:
    """A validated run of `workload`; `settings` are common settings and params by field name
    (params the workload does not declare are dropped, as RunSpec.build does)."""
    return RunSpec.build(workload, target=TargetSpec.from_url(url), **settings).validate()


def body_of(run: RunSpec, phase: Phase, who: RankInfo | int = 0) -> Body:
    """What a rank does in `phase`: `who`, or rank `who` of the run's ranks."""
    if isinstance(who, int):
        who = RankInfo(who, run.ranks)
    return run.workload.body(run, phase, who)


def plan_of(run: RunSpec, phase: Phase, who: RankInfo | int = 0) -> Plan:
    """The engine plan in `body_of` (every body but a Python body has one)."""
    return body_of(run, phase, who).plan
