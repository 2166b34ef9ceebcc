"""Sweeps: a base RunSpec x patterns x sizes per rank -> the grid of specs, and which are done."""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Iterable, Sequence

from hpcio.spec.model import RunSpec

#: Fields that do not change what a point measures, so a resumed sweep ignores them.
_NOT_IDENTITY = ("keep", "gather_chunk_bytes")


def grid(base: RunSpec, patterns: Sequence[str], sizes: Sequence[int]) -> list[RunSpec]:
    """Every (pattern, size per rank) point, patterns outermost. A size smaller than the
    transfer is run with transfer = size (recorded in its spec)."""
    return [
        dataclasses.replace(
            base, pattern=p, size_per_rank_bytes=s, transfer_bytes=min(base.transfer_bytes, s)
        ).validate()
        for p in patterns
        for s in sizes
    ]


def point_key(run_record: dict[str, object]) -> str:
    """A stable identity for a point, from a spec's document record."""
    record = {k: v for k, v in run_record.items() if k not in _NOT_IDENTITY}
    record["target"] = run_record["target"]["url"]  # type: ignore[index]
    return json.dumps(record, sort_keys=True)


def pending(specs: Iterable[RunSpec], done_records: Iterable[dict[str, object]]) -> list[RunSpec]:
    """The specs whose point has no document yet.

    Args:
        done_records: the `run` records of complete documents (interrupted ones don't count).
    """
    done = {point_key(r) for r in done_records}
    return [s for s in specs if point_key(s.to_dict()) not in done]
