"""Sweeps: base RunSpecs x sizes per rank -> the grid of specs, and which are done (resume)."""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Iterable, Sequence
from typing import Any

from hpcio.errors import HpcioError
from hpcio.options import declared
from hpcio.results import io as results_io
from hpcio.spec.model import COMMON_OPTIONS, RunSpec


def grid(base: RunSpec, sizes: Sequence[int]) -> list[RunSpec]:
    """`base` at every size per rank. A size smaller than the transfer is run with transfer =
    size (recorded in its spec); a workload without transfers (a library's) takes the size."""
    points = []
    for size in sizes:
        p = base.params
        fitted = {"size_per_rank_bytes": size}
        if hasattr(p, "transfer_bytes"):
            fitted["transfer_bytes"] = min(p.transfer_bytes, size)
        params = dataclasses.replace(p, **fitted)
        points.append(dataclasses.replace(base, params=params).validate())
    return points


def point_key(run_record: dict[str, Any]) -> str:
    """A stable identity for a point, from a spec's document record (schema version 2):
    every setting but those declared as not changing what is measured (--keep)."""
    from hpcio.workloads import registry

    ignored = {o.field for o in COMMON_OPTIONS if not o.measures}
    known = registry.found(str(run_record.get("workload")))
    if known is not None:
        ignored |= {o.field for o in declared(known.params) if not o.measures}
    record = {k: v for k, v in run_record.items() if k not in ignored}
    record["params"] = {k: v for k, v in run_record.get("params", {}).items() if k not in ignored}
    record["target"] = run_record["target"]["url"]
    return json.dumps(record, sort_keys=True)


def _as_now(record: dict[str, Any]) -> dict[str, Any]:
    """A document's spec as this hpcio would record it (params added since it was written
    take their defaults), so an older document of the same point still counts as done."""
    try:
        return RunSpec.from_dict(record).to_dict()
    except (HpcioError, KeyError, TypeError, ValueError):
        return record  # a workload or field this hpcio does not know: compared as it is


def pending(specs: Iterable[RunSpec], done_records: Iterable[dict[str, Any]]) -> list[RunSpec]:
    """The specs whose point has no document yet.

    Args:
        done_records: the `run` records of complete documents (interrupted ones don't count),
            of schema version 2 (results/io.py upgrades older ones).
    """
    done = {point_key(_as_now(r)) for r in done_records}
    return [s for s in specs if point_key(s.to_dict()) not in done]


def resume(specs: Sequence[RunSpec], output: str) -> list[RunSpec]:
    """The specs without a complete document in `output` (interrupted ones run again), once
    the finished iterations an older hpcio kept aside in OUTPUT.partial are back in it."""
    results_io.recover_partial(output)
    return pending(specs, results_io.done_runs(output))
