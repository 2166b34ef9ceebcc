"""What makes two runs the same measured point: every spec field that shapes the I/O, so that
plots draw one line per configuration and comparisons pair the same runs of two files."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from hpcio import kinds
from hpcio.results.schema import ResultDocument
from hpcio.units import format_bytes

#: Spec fields that do not change what is measured: how often it ran, whether files were
#: kept afterwards, which payload bytes went out.
IGNORED_FIELDS = frozenset({"iterations", "keep", "seed", "trace"})

#: Target kinds whose writes are durable once committed (kinds.TargetKind.durable_at_commit):
#: --fsync adds nothing there, so their runs count as synced and share tables and points with
#: fsync'd POSIX runs.
DURABLE_AT_COMMIT = frozenset(row.name for row in kinds.KINDS.values() if row.durable_at_commit)

#: A point's identity: sorted (field, value) pairs, hashable.
PointKey = tuple[tuple[str, Any], ...]


def target_label(run: Mapping[str, Any]) -> str:
    """The run's target URL, or with several targets each one's, joined by ' + ' (each with its
    endpoint where the run named one): what tables call its column."""
    several = run.get("targets")
    if not several:
        return str(run["target"]["url"])
    return " + ".join(shown_target(t) for t in several)


def shown_target(record: Mapping[str, Any]) -> str:
    """One recorded target: its URL, and its endpoint where the run named one."""
    endpoint = record.get("endpoint")
    return str(record["url"]) + (f" ({endpoint})" if endpoint else "")


def spec_fields(run: Mapping[str, Any]) -> dict[str, Any]:
    """The run spec (a document's `run`, schema version 2) as flat, hashable fields: the
    workload's params beside the common settings, the target as its URL (its options are
    settings such as credentials, not what was measured), lists as tuples, ignored fields
    gone, and fields written only when set at their default where absent."""
    flat = {**{k: v for k, v in run.items() if k != "params"}, **run.get("params", {})}
    target = run.get("target")
    if isinstance(target, dict) and target.get("kind") in DURABLE_AT_COMMIT and "fsync" in flat:
        flat["fsync"] = True
    fields: dict[str, Any] = {}
    for name, value in flat.items():
        if name in IGNORED_FIELDS:
            continue
        if name == "target":
            value = target_label(run)
        elif name == "targets":
            continue  # in the target's label
        elif isinstance(value, list):
            value = tuple(value)
        fields[name] = value
    return fields


def per_rank_bytes(doc: ResultDocument) -> int:
    """Bytes each rank moves per iteration (a table's File Size Per Proc): the pattern's size
    per rank, or for another workload its data set over its ranks."""
    size = doc.settings.get("size_per_rank_bytes")
    if isinstance(size, int):
        return size
    return doc.cache.data_set_bytes // max(doc.ranks, 1)


def point_key(run: Mapping[str, Any], *, without: Iterable[str] = ()) -> PointKey:
    """The identity of the run's point; `without` drops fields (the x axis of a plot)."""
    dropped = set(without)
    return tuple(sorted((k, v) for k, v in spec_fields(run).items() if k not in dropped))


def varying_fields(runs: Iterable[Mapping[str, Any]]) -> list[str]:
    """Fields whose value is not the same in every run that has them, in spec order. A field
    only some runs have is one workload's param that another does not take: the workloads
    already differ, and the field does not tell their runs apart."""
    every = [spec_fields(run) for run in runs]
    names = dict.fromkeys(name for fields in every for name in fields)
    return [name for name in names if len({f[name] for f in every if name in f}) > 1]


def describe(fields: Mapping[str, Any], names: Iterable[str]) -> str:
    """Those fields in words, for a legend or a table cell: 'sfmw file:///scratch transfer
    1 MiB fsync'. Sizes print with units, flags by name (or 'no <flag>')."""
    words = []
    for name in names:
        value = fields.get(name)
        if name in ("workload", "target"):
            words.append(str(value))
        elif name == "ranks":
            words.append(f"{value} rank{'' if value == 1 else 's'}")
        elif name == "size_per_rank_bytes" and isinstance(value, int):
            words.append(f"{format_bytes(value)}/rank")
        elif name == "stripe_count":
            words.append(
                "default stripes" if value is None else f"{value} stripe{'s' * (value != 1)}"
            )
        elif name == "stripe_size_bytes" and value is None:
            words.append("default stripe size")
        elif name == "phases":
            words.append("phases " + (",".join(value) if value else "default"))
        elif value is None or isinstance(value, bool):
            words.append(_words(name) if value else f"no {_words(name)}")
        elif name.endswith("_bytes") and isinstance(value, int):
            words.append(f"{_words(name)} {format_bytes(value)}")
        elif name.endswith("_s") and isinstance(value, int | float):
            words.append(f"{_words(name)} {value:g} s")
        else:
            words.append(f"{name.replace('_', ' ')} {value}")
    return " ".join(words)


def _words(name: str) -> str:
    """A field's name without its unit, in words: duration_s -> 'duration'."""
    return name.removesuffix("_bytes").removesuffix("_s").replace("_", " ")
