"""`hpcio tune --target URL`: find the in-flight depth and transfer (part) size that fill the
path to a target, walking each axis until bandwidth stops rising (the knee rule, `KneeSearch`),
or with --full measuring the whole grid to compare; prints the table, the knee and the
`hpcio run` line that uses it."""

from __future__ import annotations

import argparse
import dataclasses
import shlex
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING

from hpcio import options as spec_options
from hpcio.commands import options, spine
from hpcio.commands.run import (
    add_common_arguments,
    add_dry_run_argument,
    add_output_arguments,
    common_settings,
    target_settings,
)
from hpcio.errors import SpecError
from hpcio.options import COUNT_RANGE, FLAG, SIZE, SIZE_RANGE, choice, declared, option
from hpcio.spec.model import RunSpec, workload_named
from hpcio.units import format_bytes

if TYPE_CHECKING:
    from hpcio.results.schema import ResultDocument


#: The knee rule: along an axis, doubling a setting must raise bandwidth by at least GAIN
#: over the knee so far (the last setting that did); after PATIENCE doublings in a row that
#: do not, the walk stops. Two, so that one point measured low (a loaded client, a store's
#: hiccup) does not end a walk that was still rising.
GAIN = 0.10
PATIENCE = 2
_MIB = float(1 << 20)


def _where(doc: ResultDocument) -> str:
    """The run's target, or its targets comma-separated (--target A,B)."""
    several = doc.run.get("targets") or [doc.run["target"]]
    return ",".join(t["url"] for t in several)


@dataclass(frozen=True, slots=True, kw_only=True)
class TuneSettings:
    """What `hpcio tune` sweeps and how long it measures each point."""

    pattern: str = option(
        "--pattern",
        kind=choice("mfmw", "sfmw"),
        default="mfmw",
        key=None,
        help="the pattern measured: mfmw (an object per rank, PUT or multipart; ranged GETs) "
        "or sfmw (one shared multipart object)",
    )
    phase: str = option(
        "--phase",
        kind=choice("write", "read"),
        default="write",
        key=None,
        help="the phase whose bandwidth is tuned (read: each point writes its data first)",
    )
    in_flight_range: tuple[int, ...] = option(
        "--in-flight-range",
        kind=COUNT_RANGE,
        default=(1, 2, 4, 8, 16, 32, 64),
        key=None,
        help="in-flight depths per rank, a doubling range (default 1..64)",
    )
    transfer_range: tuple[int, ...] = option(
        "--transfer-range",
        kind=SIZE_RANGE,
        default=tuple(1 << n for n in range(23, 27)),
        key=None,
        help="transfer (part) sizes, a doubling range (default 8MiB..64MiB; S3 parts are at "
        "least 5 MiB)",
    )
    size_per_rank_bytes: int = option(
        "--size-per-rank",
        kind=SIZE,
        unit="bytes",
        default=64 << 20,
        key=None,
        help="bytes each rank moves per point; raised to two transfers per lane where that is "
        "more, so that every lane is busy",
    )
    max_memory_bytes: int = option(
        "--max-memory",
        kind=SIZE,
        unit="bytes",
        default=1 << 30,
        key=None,
        help="leave out points whose transfer x in-flight depth (each rank's buffers) is larger",
    )
    full: bool = option(
        "--full",
        kind=FLAG,
        default=False,
        key=None,
        help="measure every point of the grid (to compare with the knee search)",
    )


Point = tuple[int, int]  # (in-flight depth, transfer bytes)


@dataclass
class KneeSearch:
    """Coordinate ascent with the knee rule, one point at a time: the depth axis at the
    starting transfer, then the transfer axis at the depth found, then the depth axis again at
    the transfer found, upward from the depth found. Each walk doubles its setting until
    PATIENCE doublings in a row raise bandwidth by less than GAIN over its knee (the last
    setting that did). The setting found is the best point measured (a knee, or a point past
    one that gained a little)."""

    depths: tuple[int, ...]
    transfers: tuple[int, ...]
    start_transfer: int
    fits: Callable[[Point], bool]
    #: Bandwidth (bytes/s) of each point measured.
    measured: dict[Point, float] = dataclasses.field(default_factory=dict)
    #: Why each walk stopped, for the closing lines.
    knees: list[str] = dataclasses.field(default_factory=list)

    def next_point(self) -> Point | None:
        """The next point to measure, or None when the search is over."""
        self.knees = []
        depths = [d for d in self.depths if self.fits((d, self.start_transfer))]
        if not depths:
            return None
        wanted, (depth, _) = self._walk("in-flight", [(d, self.start_transfer) for d in depths])
        if wanted is not None:
            return wanted
        larger = [(depth, t) for t in self.transfers if t >= self.start_transfer]
        wanted, (_, transfer) = self._walk("transfer", [p for p in larger if self.fits(p)])
        if wanted is not None or transfer == self.start_transfer:
            return wanted
        again = [(d, transfer) for d in self.depths if d >= depth]
        wanted, _ = self._walk("in-flight", [p for p in again if self.fits(p)])
        return wanted

    def best(self) -> Point | None:
        return max(self.measured, key=lambda p: self.measured[p], default=None)

    def _walk(self, axis: str, points: Sequence[Point]) -> tuple[Point | None, Point]:
        """(the next point of this walk to measure or None, the walk's knee so far: the last
        point that raised bandwidth by at least GAIN over the knee before it)."""
        knee: Point = points[0]
        flat: list[Point] = []
        for index, point in enumerate(points):
            bandwidth = self.measured.get(point)
            if bandwidth is None:
                return point, knee
            if index and bandwidth < (1 + GAIN) * self.measured[knee]:
                flat.append(point)
                if len(flat) == PATIENCE:
                    self.knees.append(self._flat(axis, knee, flat, ""))
                    return None, knee
                continue
            knee, flat = point, []
        if flat:
            self.knees.append(self._flat(axis, knee, flat, "the range ends: "))
        else:
            self.knees.append(
                f"{axis}: still rising at the end of the range, {_setting(axis, knee)}"
            )
        return None, knee

    def _flat(self, axis: str, knee: Point, flat: Sequence[Point], why: str) -> str:
        """Why a walk stopped at `knee`: the doublings after it that gained too little."""
        return (
            f"{axis}: {why}{' and '.join(_setting(axis, p) for p in flat)} gave "
            f"{' and '.join(f'{self.measured[p] / _MIB:.1f}' for p in flat)} MiB/s, less than "
            f"{1 + GAIN:.2f}x the {self.measured[knee] / _MIB:.1f} MiB/s of "
            f"{_setting(axis, knee)}: knee at {_setting(axis, knee)}"
        )


def _setting(axis: str, point: Point) -> str:
    return f"depth {point[0]}" if axis == "in-flight" else _size(point[1])


def _size(n_bytes: int) -> str:
    return format_bytes(n_bytes).replace(" ", "")


def add_arguments(p: argparse.ArgumentParser) -> None:
    add_common_arguments(p, skip=("phases",))
    spec_options.add_arguments(p, declared(TuneSettings))
    p.add_argument("--plots", metavar="DIR", help="write the sweep's plot as DIR/tune.png and .svg")
    add_output_arguments(p, "print only the closing table")
    add_dry_run_argument(p)
    options.once_each(p, keep=("store_option",))


def settings_of(args: argparse.Namespace) -> TuneSettings:
    """The tune settings typed, the rest their defaults."""
    return TuneSettings(**spec_options.values(args, declared(TuneSettings)))


def point_spec(args: argparse.Namespace, tune: TuneSettings, ranks: int, point: Point) -> RunSpec:
    """The run that measures one point: the pattern at that depth and transfer, each rank
    moving at least two transfers per lane (a time-based phase would be fairer to fast points,
    but an object is written once: repeating its parts would repeat them in its upload).

    Raises:
        SpecError: what the run's checks refuse (a transfer the pattern cannot take).
    """
    depth, transfer = point
    settings: dict[str, object] = {
        **common_settings(args),
        **target_settings(args),
        "ranks": ranks,
        "phases": ("write",) if tune.phase == "write" else ("write", "read"),
        "size_per_rank_bytes": size_per_rank(tune, point),
        "transfer_bytes": transfer,
        "in_flight": depth,
    }
    return RunSpec.build(workload_named(tune.pattern, "pattern"), **settings).validate()


def size_per_rank(tune: TuneSettings, point: Point) -> int:
    """--size-per-rank, or two transfers per lane where that is more."""
    return max(tune.size_per_rank_bytes, 2 * point[0] * point[1])


def grid(tune: TuneSettings) -> list[Point]:
    """Every point within --max-memory, depth by depth."""
    return [
        (depth, transfer)
        for depth in tune.in_flight_range
        for transfer in tune.transfer_range
        if _fits(tune, (depth, transfer))
    ]


def _fits(tune: TuneSettings, point: Point) -> bool:
    return point[0] * point[1] <= tune.max_memory_bytes


def search(tune: TuneSettings) -> KneeSearch:
    """The knee search over `tune`'s ranges, starting at the middle of the transfer sizes that
    fit --max-memory at the smallest depth (main() makes sure one does)."""
    depth = tune.in_flight_range[0]
    transfers = [t for t in tune.transfer_range if _fits(tune, (depth, t))]
    return KneeSearch(
        depths=tune.in_flight_range,
        transfers=tune.transfer_range,
        start_transfer=transfers[(len(transfers) - 1) // 2],
        fits=lambda point: _fits(tune, point),
    )


def point_of(doc: ResultDocument) -> Point:
    return int(doc.params["in_flight"]), int(doc.params["transfer_bytes"])


def bandwidth_of(doc: ResultDocument, phase: str) -> float:
    """The headline bandwidth of the tuned phase, bytes/s."""
    from hpcio.results.stats import headline_bandwidth_mib_s

    return headline_bandwidth_mib_s(doc, phase) * _MIB


def main(args: argparse.Namespace, argv: Sequence[str]) -> int:
    tune = settings_of(args)
    if not _fits(tune, (tune.in_flight_range[0], tune.transfer_range[0])):
        raise SpecError(
            f"--max-memory {_size(tune.max_memory_bytes)} is below every point's transfer x "
            "in-flight depth: raise it or lower --transfer-range"
        )
    searching = search(tune)
    if args.dry_run and not tune.full:
        print(
            f"hpcio tune: the knee search starts at the run below and picks each next point "
            f"from the figures, {len(grid(tune))} at most; --full --dry-run lists them all"
        )

    def specs(ranks: int) -> list[RunSpec]:
        if tune.full:
            return [point_spec(args, tune, ranks, p) for p in grid(tune)]
        first = searching.next_point()
        assert first is not None  # the search starts at a point that fits (search())
        return [point_spec(args, tune, ranks, first)]

    def following(docs: list[ResultDocument]) -> list[RunSpec]:
        for doc in docs:
            searching.measured[point_of(doc)] = bandwidth_of(doc, tune.phase)
        wanted = searching.next_point()
        return [] if wanted is None else [point_spec(args, tune, docs[0].ranks, wanted)]

    def closing(docs: list[ResultDocument]) -> None:
        for line in closing_lines(args, tune, docs, None if tune.full else searching):
            print(line)
        if args.plots:
            for path in write_plot(tune, docs, Path(args.plots)):
                print(f"wrote {path}")

    return spine.run(
        args,
        argv,
        spine.Spine(
            "tune",
            specs,
            following=None if tune.full else following,
            closing=closing,
            quiet_hides_summary=True,
            point_name=lambda run: (
                f"in-flight {run.params.in_flight:>3}, transfer {_size(run.params.transfer_bytes)}"
            ),
        ),
    )


def closing_lines(
    args: argparse.Namespace,
    tune: TuneSettings,
    docs: Sequence[ResultDocument],
    searched: KneeSearch | None = None,
) -> list[str]:
    """The table of points measured, the knees, the setting found and the run line that uses
    it. `searched`: the search that chose the points; None after --full, where the knee search
    is replayed on the grid's figures to compare with the grid's best.
    """
    if not docs:
        return ["hpcio tune: no point was measured"]
    measured = {point_of(d): (bandwidth_of(d, tune.phase), d) for d in docs}
    lines = [
        f"hpcio tune: {tune.pattern} {tune.phase} on {_where(docs[0])}, "
        f"{docs[0].ranks} rank(s); {len(measured)} of {len(grid(tune))} grid points measured "
        f"in {elapsed_s(docs):.1f} s",
        f"  {'in-flight':>9}  {'transfer':>9}  {'MiB/s':>9}  {'TTFB p50 (ms)':>13}  "
        f"{'TTFB p99 (ms)':>13}  {'req/s':>8}",
    ]
    for point, (bandwidth, doc) in sorted(measured.items()):
        lines.append(
            f"  {point[0]:>9}  {_size(point[1]):>9}  {bandwidth / _MIB:>9.1f}  "
            + _requests(tune, doc)
        )
    if searched is None:
        searched = replayed(tune, {p: b for p, (b, _) in measured.items()})
    lines.extend(f"  knee: {knee}" for knee in searched.knees)
    found = searched.best()
    best = max(measured, key=lambda p: measured[p][0])
    if tune.full and found is not None:
        lines.append(
            f"  full grid best: depth {best[0]}, transfer {_size(best[1])}: "
            f"{measured[best][0] / _MIB:.1f} MiB/s; the knee search picks depth {found[0]}, "
            f"transfer {_size(found[1])} from {len(searched.measured)} of these points: "
            f"{measured[found][0] / measured[best][0]:.2f} of the best"
        )
    chosen = found or best
    lines.append(
        f"  setting: depth {chosen[0]}, transfer {_size(chosen[1])}: "
        f"{measured[chosen][0] / _MIB:.1f} MiB/s"
    )
    lines.append("  use: " + run_line(args, tune, docs[0].ranks, chosen))
    return lines


def _requests(tune: TuneSettings, doc: ResultDocument) -> str:
    """TTFB p50 and p99 of the tuned phase's GETs (read) or PUTs (write), and requests/s."""
    summary = doc.summary[tune.phase]
    ttfb = summary.ttfb_get if tune.phase == "read" else summary.ttfb_put
    rate = summary.requests_per_s.mean if summary.requests_per_s else None
    said = f"{ttfb.p50_s * 1e3:>13.2f}  {ttfb.p99_s * 1e3:>13.2f}  " if ttfb else f"{'-':>13}  " * 2
    return said + (f"{rate:>8.0f}" if rate is not None else f"{'-':>8}")


def replayed(tune: TuneSettings, bandwidths: dict[Point, float]) -> KneeSearch:
    """The knee search run on figures already measured (a full grid's): it measures what it
    asks for from them, and stops where it would have, or where they run out."""
    replay = search(tune)
    while (wanted := replay.next_point()) is not None and wanted in bandwidths:
        replay.measured[wanted] = bandwidths[wanted]
    return replay


def elapsed_s(docs: Sequence[ResultDocument]) -> float:
    """From the first run's start to the last one's end (what the search or sweep took)."""
    started = min(datetime.fromisoformat(d.started_at_utc) for d in docs)
    finished = max(datetime.fromisoformat(d.finished_at_utc) for d in docs)
    return (finished - started).total_seconds()


def run_line(args: argparse.Namespace, tune: TuneSettings, ranks: int, point: Point) -> str:
    """The `hpcio run` command line that runs the pattern at the setting found (store options
    left out: they may hold secrets)."""
    words = ["hpcio", "run", "--pattern", tune.pattern, "--target", args.target]
    if ranks > 1:
        words += ["-n", str(ranks)]
    words += [
        "--size-per-rank", _size(size_per_rank(tune, point)),
        "--transfer", _size(point[1]),
        "--in-flight", str(point[0]),
    ]  # fmt: skip
    if tune.phase == "read":
        words += ["--phases", "write,read"]
    line = shlex.join(words)
    return line + (" (and your --store-option settings)" if args.store_option else "")


def write_plot(tune: TuneSettings, docs: Sequence[ResultDocument], directory: Path) -> list[Path]:
    """Bandwidth against in-flight depth, a line per transfer size, as DIR/tune.png and .svg."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    measured = {point_of(d): bandwidth_of(d, tune.phase) / _MIB for d in docs}
    directory.mkdir(parents=True, exist_ok=True)
    figure, axes = plt.subplots(figsize=(7, 4.5))
    for transfer in sorted({t for _, t in measured}):
        line = sorted((d, b) for (d, t), b in measured.items() if t == transfer)
        axes.plot([d for d, _ in line], [b for _, b in line], marker="o", label=_size(transfer))
    best = max(measured, key=lambda p: measured[p])
    axes.scatter([best[0]], [measured[best]], s=160, facecolors="none", edgecolors="black",
                 label="best measured")  # fmt: skip
    axes.set_xscale("log", base=2)
    axes.set_xlabel("in-flight depth per rank")
    axes.set_ylabel(f"{tune.phase} bandwidth (MiB/s)")
    axes.set_title(f"hpcio tune: {tune.pattern} {tune.phase} on {_where(docs[0])}")
    axes.legend(title="transfer")
    axes.grid(True, alpha=0.3)
    written = []
    for suffix in ("png", "svg"):
        path = directory / f"tune.{suffix}"
        figure.savefig(path, bbox_inches="tight")
        written.append(path)
    plt.close(figure)
    return written
