"""The mdtest workload: its params (mdtest's -n -I -z -b -u -w -e -F/-D -W), checks, words,
and the reduction of every rank's items and times into mdtest's rates."""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from hpcio.errors import SpecError
from hpcio.units import format_bytes
from hpcio.workloads.contract import Body, Context, Phase, PythonBody, RankInfo, Workload
from hpcio.workloads.mdtest import objects, posix, rates
from hpcio.workloads.mdtest.params import MdtestParams
from hpcio.workloads.mdtest.tree import TOP, Tree
from hpcio.workloads.native import _engine

if TYPE_CHECKING:
    from hpcio.results.schema import PhaseFigures
    from hpcio.spec.model import RunSpec

_NS = 1e9
_OWN = re.compile(re.escape(TOP) + r"([/+].*)?")


class Mdtest(Workload):
    name = "mdtest"
    family = "metadata"
    params = MdtestParams
    summary = "mdtest's metadata phases: create, stat, read, remove files and directories"
    own_phases = (Phase.WRITE,)
    # Its figures are rates of calls; the bytes of --write-bytes and --read-bytes go through
    # os.write and os.read, which the engine does not count: no bandwidth to show.
    shows_bandwidth = False
    lower = {"buffers": "--write-bytes or --read-bytes",  # noqa: RUF012
             "data": "--items or --write-bytes",
             "disk": "--items, --write-bytes or -n"}  # fmt: skip

    def validate(self, run: RunSpec) -> None:
        super().validate(run)
        p = run.params
        if run.phases is not None and tuple(run.phases) != (Phase.WRITE.value,):
            raise SpecError(
                f"{self.name} makes all of mdtest's phases in one hpcio phase: leave out --phases"
            )
        if p.depth < 0 or p.items_per_dir < 0:
            raise SpecError("--depth and --items-per-dir must be 0 or more")
        tree = self.tree(run)
        if p.read_bytes > p.write_bytes:
            raise SpecError(
                f"--read-bytes {format_bytes(p.read_bytes)} is more than --write-bytes "
                f"{format_bytes(p.write_bytes)}: a file holds only what its creation wrote"
            )
        if p.stonewall_s is not None and p.branch > 1:
            # mdtest refuses it too: its stonewall works on one directory loop.
            raise SpecError("--stonewall needs --branch 1 (as mdtest -W)")
        if run.direct:
            raise SpecError(f"--direct: {self.name} makes small files from Python buffers")
        if run.target.is_object_store:
            objects.check(run, tree)

    def tree(self, run: RunSpec) -> Tree:
        p = run.params
        return Tree.of(p.items, p.items_per_dir, p.depth, p.branch, p.dir_per_rank)

    def body(self, run: RunSpec, phase: Phase, who: RankInfo) -> Body:
        tree = self.tree(run)

        def iteration(context: Context) -> None:
            if run.target.is_object_store:
                objects.run_objects(context, tree)
            else:
                posix.run_posix(context, tree)

        return PythonBody(iteration)

    def keys(self, run: RunSpec) -> list[str]:
        """Every rank's files (objects): the body removes all it makes, as mdtest does, so
        these are for a run that was stopped (its directories go once empty, `hpcio clean`
        takes the empty ones an mdtest tree holds)."""
        if run.params.items_kind == "dirs":
            return [TOP]
        tree = self.tree(run)
        if run.target.is_object_store:
            return [objects.object_key(path) for r in range(run.ranks)
                    for path in tree.item_paths(r, "file")]  # fmt: skip
        return [f"{TOP}/{path}" for r in range(run.ranks) for path in tree.item_paths(r, "file")]

    def owns_key(self, name: str) -> bool:
        return _OWN.fullmatch(name) is not None

    def stored_bytes(self, run: RunSpec) -> int:
        files = run.params.items_kind != "dirs"
        return run.ranks * self.tree(run).items * run.params.write_bytes if files else 0

    def moved_bytes(self, run: RunSpec, phase: Phase) -> int:
        return 0

    def describe(self, run: RunSpec) -> str:
        p = run.params
        tree = self.tree(run)
        shape = "a tree per rank" if p.dir_per_rank else "one shared tree"
        words = (
            f"{tree.items} {p.items_kind if p.items_kind != 'both' else 'files and dirs'} per "
            f"rank, {shape} of {tree.dirs} dir(s) (depth {p.depth}, branch {p.branch}), "
            f"{tree.items_per_dir} per dir"
        )
        if p.write_bytes or p.read_bytes:
            words += f", write {format_bytes(p.write_bytes)} read {format_bytes(p.read_bytes)}"
        if p.stonewall_s is not None:
            words += f", stonewall {p.stonewall_s:g} s"
        return words

    def disk_words(self, run: RunSpec) -> str:
        return (
            f"{run.ranks} rank(s) x {self.tree(run).items} x {format_bytes(run.params.write_bytes)}"
        )

    def label(self, settings: dict[str, Any]) -> str:
        return f"{self.name}{' -u' if settings.get('dir_per_rank') else ''}"

    def reduce_metrics(self, per_rank: Sequence[dict[str, Any]]) -> dict[str, Any]:
        """mdtest's rate of each phase this iteration made (rates.iteration_rate), the
        slowest rank's time, the items of all ranks, failed calls summed, and latency
        percentiles from every rank's histograms merged."""
        if not per_rank:
            return {}
        total: dict[str, Any] = {
            "failed_calls": sum(int(m.get("failed_calls", 0)) for m in per_rank)
        }
        for phase, _ in rates.PHASES:
            if f"{phase}_items" not in per_rank[0]:
                continue
            items = [int(m[f"{phase}_items"]) for m in per_rank]
            seconds = [float(m[f"{phase}_s"]) for m in per_rank]
            total[f"{phase}_ops_per_s"] = rates.iteration_rate(phase, items, seconds)
            total[f"{phase}_items"] = items[0] if phase in rates.TREE_PHASES else sum(items)
            total[f"{phase}_s"] = max(seconds)
            hdrs = [m[f"{phase}_hdr"] for m in per_rank if m.get(f"{phase}_hdr")]
            if hdrs:
                s = _engine.histogram_summary(_engine.histogram_merge(hdrs), [0.5, 0.99])
                p50, p99 = s["quantiles_ns"]
                total[f"{phase}_p50_s"] = p50 / _NS
                total[f"{phase}_p99_s"] = p99 / _NS
                total[f"{phase}_max_s"] = s["max_ns"] / _NS
        return total

    def progress_words(self, figures: PhaseFigures) -> str:
        """The rate of each mdtest phase of the iteration, grouped by kind of item, and the
        iteration's time: 'ops/s: tree create 52; dir create 28,633 stat 226,106 ...'."""
        groups: list[list[str]] = []
        kinds: list[str] = []
        for key, _ in rates.PHASES:
            rate = figures.metrics.get(f"{key}_ops_per_s")
            if rate is None:
                continue
            kind, step = key.split("_")
            if kinds and kinds[-1] == kind:
                groups[-1].append(f"{step} {float(rate):,.0f}")
            else:
                kinds.append(kind)
                groups.append([f"{kind} {step} {float(rate):,.0f}"])
        words = "ops/s: " + "; ".join(" ".join(group) for group in groups)
        failed = int(figures.metrics.get("failed_calls", 0))
        if failed:
            words += f"; {failed} call(s) failed"
        return f"{words}  ({figures.phase_time_s:.2f} s)"

    def notes(self, phase: str, metrics: Sequence[dict[str, Any]]) -> list[str]:
        """mdtest's SUMMARY rate table: per phase, mean, max, min and stddev over the
        iterations, in operations per second (and the p99 of a call with --op-latency)."""
        rows = []
        timed = False
        for key, title in rates.PHASES:
            found = [float(m[f"{key}_ops_per_s"]) for m in metrics if f"{key}_ops_per_s" in m]
            if not found:
                continue
            s = rates.summarize(found)
            row = f"{title:<20} {s.mean:>12,.0f} {s.max:>12,.0f} {s.min:>12,.0f} {s.stddev:>10,.0f}"
            p99s = [float(m[f"{key}_p99_s"]) for m in metrics if f"{key}_p99_s" in m]
            if p99s:
                timed = True
                row += f" {max(p99s) * 1e6:>12,.1f}"
            rows.append(row)
        if not rows:
            return []
        mean = f"mean of {len(metrics)}"
        head = f"{'mdtest (ops/s)':<20} {mean:>12} {'max':>12} {'min':>12} {'stddev':>10}"
        lines = [head + (f" {'p99 op (us)':>12}" if timed else ""), *rows]
        failed = sum(int(m.get("failed_calls", 0)) for m in metrics)
        if failed:
            lines.append(f"mdtest: {failed} call(s) failed (the phase's errors name the first)")
        return lines
