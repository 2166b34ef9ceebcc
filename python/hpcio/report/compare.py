"""Two result files side by side: the same points' means, their ratio, and whether the
difference is larger than the run-to-run spread of the iterations.

The rule: a difference is beyond the spread when |mean_B - mean_A| > stddev_A + stddev_B,
with each stddev the population standard deviation over that run's iterations (as IOR and
`summary.<phase>` report it). Within that band the two runs overlap by one standard deviation
each and the difference is not told apart from noise. A run of one iteration has no spread,
so its points are marked as such rather than called different.
"""

from __future__ import annotations

import csv
import dataclasses
import io
import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from hpcio.errors import SpecError
from hpcio.report import pooled
from hpcio.report.points import PointKey, describe, point_key, spec_fields, varying_fields
from hpcio.report.pooled import iteration_count, pooled_stats
from hpcio.results.schema import ResultDocument, Stats
from hpcio.results.stats import stats
from hpcio.units import format_bytes
from hpcio.workloads import shown

#: --metric -> (summary statistic, unit, decimals). Latency is the studies' Latency: the mean
#: phase time over iterations.
METRICS = {
    "bandwidth": ("bandwidth_mib_s", "MiB/s", 3),
    "latency": ("seconds", "s", 5),
    # Training runs: accelerator utilization, each iteration's (DLIO's mean over epochs).
    "au": ("au_percent", "%", 2),
    # mdtest runs: the rate of each of its phases (file create, dir stat...), each iteration's.
    "ops": ("ops_per_s", "ops/s", 0),
    # A mixed phase's (--rwmix-read) reads and writes: each side's bytes over the phase time.
    "read-bandwidth": ("read_bandwidth_mib_s", "MiB/s", 3),
    "write-bandwidth": ("write_bandwidth_mib_s", "MiB/s", 3),
}
_MEANING = {
    "bandwidth": "faster",
    "latency": "slower",
    "au": "keeps the simulated accelerators busier",
    "ops": "faster",
    "read-bandwidth": "faster",
    "write-bandwidth": "faster",
}
RULE = (
    "beyond spread: |B mean - A mean| > A stddev + B stddev (population stddev over "
    "iterations); a run of one iteration has no spread"
)
BEYOND = "beyond spread"
WITHIN = "within spread"
NO_SPREAD = "no spread (1 iteration)"
REPEATED = (
    "repeated runs: where a file holds several runs of one point, its mean and stddev are over "
    "all their iterations (JSON: runs)"
)
BANDWIDTH_MEANS = (
    "bandwidth mean: bytes over the mean phase time, as the report tables give it; "
    "stddev, min and max over the iterations' bandwidths (JSON: mean_of_iterations, IOR's Mean)"
)
ONLY_A = "only in A"
ONLY_B = "only in B"
NOTHING_MATCHED = (
    "no point is in both files: points match on workload, phase and every spec field; "
    "--ignore FIELDS (e.g. target) leaves fields out"
)

#: Fields with a column of their own; any other field that differs between points is
#: described in the "Other" column.
_COLUMN_FIELDS = ("workload", "target", "ranks", "size_per_rank_bytes", "transfer_bytes")


@dataclass(frozen=True, slots=True)
class Side:
    """One file's statistic for a point, and the spec of the run it came from."""

    stats: Stats
    iterations: int
    spec: dict[str, Any]
    #: Documents of the point in this file (a run repeated): stats are over all their
    #: iterations.
    runs: int = 1
    #: For bandwidth, whose mean is the headline (bytes over mean phase time): IOR's Mean,
    #: the mean of the iterations' bandwidths.
    mean_of_iterations: float | None = None


@dataclass(frozen=True, slots=True)
class ComparedPoint:
    """One point (pattern, phase and spec) as measured in A and in B (None: not there)."""

    phase: str
    a: Side | None
    b: Side | None
    #: Spec fields shown in the "Other" column (those that differ between points).
    other_fields: tuple[str, ...] = ()

    @property
    def spec(self) -> dict[str, Any]:
        """A's spec, or B's for a point only in B."""
        side = self.a or self.b
        assert side is not None  # a point comes from at least one file
        return side.spec

    @property
    def ratio(self) -> float | None:
        """B mean / A mean."""
        if self.a is None or self.b is None or self.a.stats.mean == 0:
            return None
        return self.b.stats.mean / self.a.stats.mean

    @property
    def difference(self) -> str:
        """One of BEYOND, WITHIN, NO_SPREAD, ONLY_A, ONLY_B."""
        if self.b is None:
            return ONLY_A
        if self.a is None:
            return ONLY_B
        if min(self.a.iterations, self.b.iterations) < 2:
            return NO_SPREAD
        return BEYOND if beyond_spread(self.a.stats, self.b.stats) else WITHIN

    def shown(self, describe_spec: Callable[[dict[str, Any]], str]) -> str:
        """A spec detail as text: one value, or 'A's vs B's' where --ignore let them differ."""
        texts = [describe_spec(side.spec) for side in (self.a, self.b) if side is not None]
        return texts[0] if len(set(texts)) == 1 else " vs ".join(texts)


@dataclass(frozen=True, slots=True)
class Comparison:
    a_name: str
    b_name: str
    metric: str
    points: tuple[ComparedPoint, ...] = field(default=())
    ignored: tuple[str, ...] = ()

    @property
    def unit(self) -> str:
        return METRICS[self.metric][1]

    @property
    def matched(self) -> int:
        """Points measured in both files."""
        return sum(1 for p in self.points if p.a is not None and p.b is not None)

    @property
    def repeated(self) -> int:
        """Points measured by more than one run in a file."""
        return sum(1 for p in self.points if any(side and side.runs > 1 for side in (p.a, p.b)))

    @property
    def has_other(self) -> bool:
        return any(p.other_fields for p in self.points)

    def counts(self) -> dict[str, int]:
        """How many points have each difference, in a fixed order."""
        tally = dict.fromkeys((BEYOND, WITHIN, NO_SPREAD, ONLY_A, ONLY_B), 0)
        for point in self.points:
            tally[point.difference] += 1
        return tally


def beyond_spread(a: Stats, b: Stats) -> bool:
    """True when the means differ by more than the two standard deviations together."""
    return abs(b.mean - a.mean) > a.stddev + b.stddev


def compare(
    a_docs: Sequence[ResultDocument],
    b_docs: Sequence[ResultDocument],
    *,
    metric: str = "bandwidth",
    a_name: str = "A",
    b_name: str = "B",
    ignore: Sequence[str] = (),
) -> Comparison:
    """Pair every (point, phase) of A with the same in B.

    Points match on pattern, phase and every spec field that shapes the I/O (target URL,
    ranks, sizes, options), not on iterations, keep or seed, nor on the fields in `ignore`
    (say "target" to compare two file systems). Within one file the documents of one point
    (a run repeated) are pooled: mean and stddev over all their iterations.

    With metric "ops" a point's phases are those of mdtest (file_create, dir_stat...), each
    compared on its rate; with "bandwidth" the runs of rates alone (mdtest) are left out.

    Raises:
        SpecError: `ignore` names a field no document has, one file holds runs of a point
            that differ only in ignored fields, or a file has no training run for AU (no
            mdtest run for ops).
    """
    runs = [d.run for d in (*a_docs, *b_docs)]
    known = {name for run in runs for name in spec_fields(run)}
    for name in ignore:
        if name not in known:
            raise SpecError(
                f"--ignore {name}: not a spec field; choose from {', '.join(sorted(known))}"
            )
    ignore = _with_unshared_params(ignore, runs)
    statistic = METRICS[metric][0]
    measured: dict[tuple[PointKey, str], dict[str, list[ResultDocument]]] = {}
    for which, docs in (("a", a_docs), ("b", b_docs)):
        for doc in docs:
            for phase in _phases(doc, metric):
                if not pooled.has_statistic(doc, phase, statistic):
                    continue  # AU of a run that is not a training run
                point_phase = (point_key(doc.run, without=ignore), phase)
                measured.setdefault(point_phase, {}).setdefault(which, []).append(doc)
    if metric == "bandwidth" and not measured and runs:
        every = (*a_docs, *b_docs)
        if not any(shown.shows_bandwidth(d.workload) for d in every):
            raise SpecError(
                "--metric bandwidth: these files hold mdtest runs alone, whose figures are "
                "rates of calls, not bandwidth: give --metric ops"
            )
    if metric in _NONE_TO_COMPARE:
        for which, name in (("a", a_name), ("b", b_name)):
            if not any(which in by_file for by_file in measured.values()):
                raise SpecError(_NONE_TO_COMPARE[metric].format(name=name))
    sides: dict[tuple[PointKey, str], dict[str, Side]] = {}
    for (key, phase), by_file in measured.items():
        for which, docs in by_file.items():
            _refuse_mixed(docs, ignore, a_name if which == "a" else b_name)
            if metric == "ops":
                rates = _rates(docs, phase)
                sides.setdefault((key, phase), {})[which] = Side(
                    stats(rates), len(rates), spec_fields(docs[0].run), len(docs)
                )
                continue
            found = pooled_stats(docs, phase, statistic)
            of_iterations = None
            if metric == "bandwidth":
                of_iterations = found.mean
                headline = pooled.headline_bandwidth_mib_s(docs, phase)
                found = dataclasses.replace(found, mean=headline)
            sides.setdefault((key, phase), {})[which] = Side(
                found,
                iteration_count(docs, phase),
                spec_fields(docs[0].run),
                len(docs),
                of_iterations,
            )
    others = tuple(f for f in varying_fields(runs) if f not in _COLUMN_FIELDS)
    points = [
        ComparedPoint(phase, pair.get("a"), pair.get("b"), others)
        for (_, phase), pair in sides.items()
    ]
    # Patterns and phases in the order the files hold them; numbers ascending within.
    pattern_order = {
        name: i for i, name in enumerate(dict.fromkeys(p.spec["workload"] for p in points))
    }
    phase_order = {name: i for i, name in enumerate(dict.fromkeys(p.phase for p in points))}

    def order(point: ComparedPoint) -> tuple[Any, ...]:
        spec = point.spec
        return (
            pattern_order[spec["workload"]],
            phase_order[point.phase],
            spec["target"],
            spec["ranks"],
            # A library's workload has no transfer size, python-files no size per rank.
            spec.get("size_per_rank_bytes") or 0,
            spec.get("transfer_bytes") or 0,
            point.shown(lambda s: describe(s, others)),
        )

    return Comparison(a_name, b_name, metric, tuple(sorted(points, key=order)), tuple(ignore))


_NONE_TO_COMPARE = {
    "au": "--metric au: {name} holds no training runs (accelerator utilization is a training "
    "run's figure); compare bandwidth instead",
    "ops": "--metric ops: {name} holds no mdtest runs (operations per second of metadata "
    "phases); compare bandwidth instead",
    "read-bandwidth": "--metric read-bandwidth: {name} holds no mixed phases (--rwmix-read); "
    "compare bandwidth instead",
    "write-bandwidth": "--metric write-bandwidth: {name} holds no mixed phases (--rwmix-read); "
    "compare bandwidth instead",
}
_RATE = "_ops_per_s"


def _phases(doc: ResultDocument, metric: str) -> list[str]:
    """What a document's points are compared on: its phases, or mdtest's for "ops" (its
    rates, in the order the run made them); none where the metric is not its figure."""
    if metric == "ops":
        names = (name for p in doc.phases for name in p.metrics if name.endswith(_RATE))
        return [name.removesuffix(_RATE) for name in dict.fromkeys(names)]
    if metric == "bandwidth" and not shown.shows_bandwidth(doc.workload):
        return []
    return list(doc.summary)


def _rates(docs: Sequence[ResultDocument], phase: str) -> list[float]:
    """mdtest phase `phase`'s rate in every iteration of `docs` that made it (ops/s)."""
    return [float(p.metrics[phase + _RATE]) for doc in docs for p in doc.phases
            if phase + _RATE in p.metrics]  # fmt: skip


def _with_unshared_params(ignore: Sequence[str], runs: Sequence[dict[str, Any]]) -> list[str]:
    """`ignore`, and when it names the workload, the params only some of the runs' workloads
    take: runs of two workloads never share those, and would otherwise match nothing."""
    if "workload" not in ignore:
        return list(ignore)
    every = [set(spec_fields(run)) for run in runs]
    unshared = set.union(*every) - every[0].intersection(*every[1:])
    return [*ignore, *sorted(unshared - set(ignore))]


def _refuse_mixed(docs: Sequence[ResultDocument], ignore: Sequence[str], name: str) -> None:
    """One file's documents for one point must be the same run repeated: runs that differ
    only in an --ignore field cannot be told apart, and pooling them would mix them.

    Raises:
        SpecError: naming the file and the fields.
    """
    if len({point_key(doc.run) for doc in docs}) > 1:
        differ = [f for f in varying_fields(doc.run for doc in docs) if f in ignore]
        raise SpecError(
            f"--ignore {','.join(ignore)}: {name} holds runs of one point that differ in "
            f"{', '.join(differ)}; compare them separately, or do not ignore "
            f"{', '.join(differ)}"
        )


def columns(comparison: Comparison) -> list[str]:
    """Headers of one table (the points of one pattern and phase)."""
    unit = comparison.unit
    names = ["Target", "Ranks", "Size Per Proc", "Transfer"]
    if comparison.has_other:
        names.append("Other")
    return [
        *names,
        f"A mean ({unit})",
        f"B mean ({unit})",
        "B/A",
        f"A stddev ({unit})",
        f"B stddev ({unit})",
        "Difference",
    ]


#: Columns of text (left-aligned in Markdown); the rest are numbers.
TEXT_COLUMNS = frozenset({"Target", "Other", "Difference"})


def cells(comparison: Comparison, point: ComparedPoint) -> list[str]:
    """A point's row as text, in the order of columns()."""
    decimals = METRICS[comparison.metric][2]

    def number(value: float | None, places: int) -> str:
        return "N/A" if value is None else f"{value:.{places}f}"

    row = [
        point.shown(lambda s: str(s["target"])),
        point.shown(lambda s: str(s["ranks"])),
        point.shown(lambda s: _size_or_na(s.get("size_per_rank_bytes"))),
        point.shown(lambda s: _size_or_na(s.get("transfer_bytes"))),
    ]
    if comparison.has_other:
        row.append(point.shown(lambda s: describe(s, point.other_fields)))
    a = point.a.stats if point.a else None
    b = point.b.stats if point.b else None
    return [
        *row,
        number(a.mean if a else None, decimals),
        number(b.mean if b else None, decimals),
        number(point.ratio, 3),
        number(a.stddev if a else None, decimals),
        number(b.stddev if b else None, decimals),
        point.difference,
    ]


def _size_or_na(size: int | None) -> str:
    """A size through the size formatter ('4 KiB', not '0.00390625' MiB)."""
    return "N/A" if size is None else format_bytes(size)


def tables(comparison: Comparison) -> list[tuple[str, list[ComparedPoint]]]:
    """Points grouped by (pattern, phase), titled 'sfmw write' ('sfmw vs mfmw write' where
    A's workload and B's differ, --ignore workload), in order of appearance."""
    groups: dict[str, list[ComparedPoint]] = {}
    for point in comparison.points:
        workload = point.shown(lambda s: str(s["workload"]))
        groups.setdefault(f"{workload} {point.phase}", []).append(point)
    return list(groups.items())


def summary_lines(comparison: Comparison) -> list[str]:
    """The files, the metric, the rule and how many points fell where."""
    counts = ", ".join(f"{n} {what}" for what, n in comparison.counts().items() if n)
    ignored = ", ".join(comparison.ignored)
    return [
        f"A: {comparison.a_name}",
        f"B: {comparison.b_name}",
        f"metric: {comparison.metric} ({comparison.unit}); B/A > 1 means B "
        + _MEANING[comparison.metric],
        RULE,
        *([f"matched ignoring: {ignored}"] if ignored else []),
        *([REPEATED] if comparison.repeated else []),
        *([BANDWIDTH_MEANS] if comparison.metric == "bandwidth" else []),
        f"points: {counts or 'none'}",
        *([NOTHING_MATCHED] if comparison.points and not comparison.matched else []),
    ]


def render(comparison: Comparison, fmt: str) -> str:
    """The comparison as Markdown ("md"), CSV ("csv") or JSON ("json")."""
    if fmt == "json":
        return json.dumps(_as_json(comparison), indent=2) + "\n"
    if fmt == "csv":
        out = io.StringIO()
        writer = csv.writer(out, lineterminator="\n")
        writer.writerow(["table", *columns(comparison)])
        for title, points in tables(comparison):
            writer.writerows([title, *cells(comparison, p)] for p in points)
        return out.getvalue()
    parts = [*(f"- {line}" for line in summary_lines(comparison)), ""]
    header = columns(comparison)
    rule = "|" + "|".join(" --- " if h in TEXT_COLUMNS else " ---: " for h in header) + "|"
    for title, points in tables(comparison):
        parts.append(f"### {title}\n")
        parts.append("| " + " | ".join(header) + " |")
        parts.append(rule)
        parts.extend("| " + " | ".join(cells(comparison, p)) + " |" for p in points)
        parts.append("")
    return "\n".join(parts)


def _as_json(comparison: Comparison) -> dict[str, Any]:
    def side(one: Side | None) -> dict[str, Any] | None:
        if one is None:
            return None
        s = one.stats
        return {
            "mean": s.mean,
            "median": s.median,
            "min": s.min,
            "max": s.max,
            "stddev": s.stddev,
            "iterations": one.iterations,
            "runs": one.runs,
            **(
                {"mean_of_iterations": one.mean_of_iterations}
                if one.mean_of_iterations is not None
                else {}
            ),
            "spec": {k: list(v) if isinstance(v, tuple) else v for k, v in one.spec.items()},
        }

    return {
        "a": comparison.a_name,
        "b": comparison.b_name,
        "metric": comparison.metric,
        "unit": comparison.unit,
        "rule": RULE,
        "ignored": list(comparison.ignored),
        "counts": comparison.counts(),
        "points": [
            {
                "workload": p.spec["workload"],
                "phase": p.phase,
                "a": side(p.a),
                "b": side(p.b),
                "ratio": p.ratio,
                "difference": p.difference,
            }
            for p in comparison.points
        ],
    }
