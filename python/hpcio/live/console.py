"""What rank 0 prints while a run goes and when it ends."""

from __future__ import annotations

import contextlib
import os
import re
import sys
from collections.abc import Sequence

from hpcio.conditions_hint import fill_hint
from hpcio.options import declared
from hpcio.results.schema import LatencyPercentiles, PhaseFigures, PhaseSummary, ResultDocument
from hpcio.results.stats import headline_bandwidth_mib_s
from hpcio.runner.world import Topology
from hpcio.spec.model import RunSpec
from hpcio.units import format_counts
from hpcio.workloads import registry
from hpcio.workloads.contract import Workload

_MIB = float(1 << 20)


def header(run: RunSpec, nodes: int, ranks_per_node: int) -> str:
    workload = run.workload
    flags = [name for name in ("fsync", "direct", "verify") if getattr(run, name)]
    flags += [o.flag.lstrip("-") for o in declared(workload.params)
              if o.kind.flag and o.flag and getattr(run.params, o.field)]  # fmt: skip
    what = workload.describe(run)
    on = ", ".join(t.shown for t in run.targets)
    return (
        f"hpcio run: {run.workload.name} on {on}, {run.ranks} ranks on {nodes} node(s) "
        f"({ranks_per_node} per node), {what + ', ' if what else ''}"
        f"{run.iterations} iteration(s)" + (f" [{' '.join(flags)}]" if flags else "")
    )


def progress_line(f: PhaseFigures, iterations: int, workload: Workload | None = None) -> str:
    own = workload.progress_words(f) if workload is not None else None
    if own is not None:
        return f"  iter {f.iteration + 1}/{iterations}  {own}"
    line = (
        f"  iter {f.iteration + 1}/{iterations}  {f.phase:<5}  "
        f"{f.bandwidth_bytes_per_s / _MIB:>10.2f} MiB/s  {f.phase_time_s:>9.4f} s  "
        f"(open {f.open_time_s:.4f}, transfer {f.transfer_time_s:.4f}, "
        f"close {f.close_time_s:.4f}; stonewall {f.stonewall_bandwidth_bytes_per_s / _MIB:.2f} "
        f"MiB/s)"
    )
    requests = first_byte(f.ttfb_get, f.ttfb_put, f.requests_per_s)
    line = f"{line}  {requests}" if requests else line
    if f.read_side is not None and f.write_side is not None:
        read, write = f.read_side, f.write_side
        line += (
            "\n  "
            + " " * len(f"iter {f.iteration + 1}/{iterations}  ")
            + sides(
                f.phase,
                read.bandwidth_bytes_per_s / _MIB,
                write.bandwidth_bytes_per_s / _MIB,
                read.ops_total,
                write.ops_total,
            )
        )
    return line


def sides(phase: str, read_mib_s: float, write_mib_s: float, reads: int, writes: int) -> str:
    """A mixed phase's sides: "mixed  read 812.3 MiB/s  write 270.1 MiB/s  (75% reads)", the
    share of reads as the phase made them (the draw's, not the asked one)."""
    share = f"  ({100 * reads / (reads + writes):.0f}% reads)" if reads + writes else ""
    return f"{phase:<5}  read {read_mib_s:.1f} MiB/s  write {write_mib_s:.1f} MiB/s{share}"


def first_byte(
    get: LatencyPercentiles | None, put: LatencyPercentiles | None, requests_per_s: float | None
) -> str:
    """An object-store phase's time to first byte (GETs, PUTs/parts) and request rate, as
    "TTFB get p50 20.1 ms p99 20.4 ms, 97 req/s"; "" where no request went to a store."""
    said = [
        f"TTFB {name} p50 {t.p50_s * 1e3:.1f} ms p99 {t.p99_s * 1e3:.1f} ms"
        for name, t in (("get", get), ("put", put))
        if t is not None and t.count
    ]
    if not said:
        return ""
    rate = f", {requests_per_s:.0f} req/s" if requests_per_s is not None else ""
    return "; ".join(said) + rate


def summary(doc: ResultDocument) -> str:
    workload = registry.found(doc.workload)
    bandwidths = workload is None or workload.shows_bandwidth
    lines = []
    if bandwidths:
        lines.append(
            "  phase  bandwidth (MiB/s)  mean of iters      min        max   time mean (s)"
            "   p50 op (ms)  p99 op (ms)"
        )
    for phase, s in doc.summary.items() if bandwidths else ():
        bw = s.bandwidth_mib_s
        lines.append(
            f"  {phase:<5}  {headline_bandwidth_mib_s(doc, phase):>17.2f} {bw.mean:>14.2f} "
            f"{bw.min:>8.2f} {bw.max:>10.2f} "
            f"{s.seconds.mean:>15.4f} {s.latency.p50_s * 1e3:>13.3f} {s.latency.p99_s * 1e3:>12.3f}"
        )
    for phase, s in doc.summary.items():
        if s.read_side is not None and s.write_side is not None:
            read, write = s.read_side, s.write_side
            lines.append("  " + sides(
                phase, read.bandwidth_mib_s.mean, write.bandwidth_mib_s.mean, read.ops_total,
                write.ops_total,
            ) + "".join(
                f"  {name} p99 {side.latency.p99_s * 1e3:.3f} ms"
                for name, side in (("read", read), ("write", write))
                if side.latency is not None
            ))  # fmt: skip
    if workload is not None:
        for phase in doc.summary:
            metrics = [f.metrics for f in doc.phases if f.phase == phase and f.metrics]
            lines.extend(f"  {note}" for note in workload.notes(phase, metrics))
    requests = []
    for phase, s in doc.summary.items():
        rate = s.requests_per_s.mean if s.requests_per_s is not None else None
        if said := first_byte(s.ttfb_get, s.ttfb_put, rate):
            requests.append(f"{phase}: {said}")
    if requests:
        lines.append("  requests: " + "; ".join(requests))
    lines.extend(per_target(doc))
    used = [
        f"{phase}: {client_cpu(s, per_gib=bandwidths)}"
        for phase, s in doc.summary.items()
        if s.cpu_core_fraction
    ]
    if used:
        lines.append("  client CPU: " + "; ".join(used))
    pushed_back = [
        f"{phase}: {s.throttled} throttled, {s.retried} retried" + (
            f" ({format_counts(s.store_failures)})" if s.store_failures else ""
        )
        for phase, s in doc.summary.items()
        if s.throttled or s.retried
    ]  # fmt: skip
    if pushed_back:
        lines.append("  the store pushed back: " + "; ".join(pushed_back))
    lines.append("  cache: " + "; ".join(doc.cache.notes))
    lines.extend(f"  warning: {w}" for w in doc.warnings)
    if doc.cores_per_node is not None and doc.cores_per_node < doc.ranks_per_node:
        lines.append(f"  warning: {oversubscribed(doc.ranks_per_node, doc.cores_per_node)}")
    return "\n".join(lines)


def per_target(doc: ResultDocument) -> list[str]:
    """A run over several targets: each phase's bandwidth on each (its bytes over its own
    ranks' phase time, mean over iterations); nothing with one target."""
    lines = []
    for phase in doc.summary:
        figures = [f.targets for f in doc.phases if f.phase == phase and f.targets]
        if not figures:
            continue
        said = []
        for index, target in enumerate(figures[0]):
            mine = [f[index] for f in figures if index < len(f)]
            seconds = sum(t.phase_time_s for t in mine) / len(mine)
            moved = sum(t.bytes_total for t in mine) / len(mine)
            mib_s = moved / _MIB / seconds if seconds else 0.0
            said.append(f"{target.url} {mib_s:.2f} MiB/s ({target.ranks} ranks)")
        lines.append(f"  {phase} per target: " + ", ".join(said))
    return lines


def _mean(values: Sequence[float]) -> float:
    return sum(values) / len(values) if values else 0.0


def link_notes(doc: ResultDocument, run: RunSpec, cap_mib_s: float) -> list[str]:
    """Whether each phase filled a link of `cap_mib_s` (--link), and where it did not, the
    setting that would (hpcio/conditions_hint.py)."""
    in_flight = int(getattr(run.params, "in_flight", 1))
    transfer = int(getattr(run.params, "transfer_bytes", 0))
    shared = any(w.shared for w in run.workload.objects_written(run))
    notes = []
    for phase in doc.summary:
        mib_s = headline_bandwidth_mib_s(doc, phase)
        figures = [f for f in doc.phases if f.phase == phase]
        # A shared object's write phase closes by completing its upload (rank 0, the store
        # assembling the parts): that part of the phase is the store's, not the link's.
        commit_s = _mean([f.close_time_s for f in figures]) if phase == "write" else 0.0
        hint = fill_hint(mib_s=mib_s, cap_mib_s=cap_mib_s, ranks=doc.ranks, in_flight=in_flight,
                         transfer_bytes=transfer, shared=shared,
                         phase_s=_mean([f.phase_time_s for f in figures]),
                         commit_s=commit_s)  # fmt: skip
        said = hint or (
            f"{mib_s:.0f} MiB/s is {mib_s / cap_mib_s:.2f} of the link's {cap_mib_s:.0f} MiB/s "
            f"({doc.ranks} rank(s) x {in_flight} in flight)"
        )
        notes.append(f"  link: {phase}: {said}")
    return notes


def client_cpu(s: PhaseSummary, *, per_gib: bool = True) -> str:
    """CPU-seconds per GiB (unless not `per_gib`: a workload of calls, not bytes) and the
    fraction of a core per rank, means over iterations."""
    assert s.cpu_core_fraction is not None
    per_gib_words = (
        f"{s.cpu_seconds_per_gib.mean:.3g} CPU-s/GiB, " if per_gib and s.cpu_seconds_per_gib else ""
    )
    notes = []
    if s.cpu_demand_fraction is not None:
        waiting = max(0.0, s.cpu_demand_fraction.mean - s.cpu_core_fraction.mean)
        notes.append(f"+{waiting:.0%} waiting for one")
    if s.client_bound_iterations:
        notes.append("client-bound")
    about = f" ({', '.join(notes)})" if notes else ""
    return f"{per_gib_words}{s.cpu_core_fraction.mean:.0%} of a core per rank{about}"


def oversubscribed(ranks_per_node: int, cores: int) -> str:
    return (
        f"{ranks_per_node} ranks per node shared {cores} core(s): ranks waited for a core, so "
        "the figures may show the CPU, not the storage"
    )


class Console:
    """Rank 0's running commentary: a header per run, a line per phase, a summary at the end.
    Over several runs (a sweep) each gets a [i/N] line with an ETA, and the cache notes and
    warnings are said once, when they first appear (every document keeps its own)."""

    def __init__(
        self,
        topology: Topology,
        *,
        quiet: bool = False,
        points: Sequence[RunSpec] = (),
        done_points: int = 0,
        display: str = "lines",
        link_mib_s: float | None = None,
    ) -> None:
        """
        Args:
            topology: where the ranks run (the header says it).
            quiet: only the summary.
            points: a sweep's points still to run: [i/N] lines with an ETA.
            done_points: a sweep's points already in its results file.
            display: over several points, "bar" (a suite's progress bar, the status line in
                it), "lines", or "auto": a bar when stdout is a terminal (live/terminal.py).
            link_mib_s: the cap of the link to the target (--link): each summary says whether
                the run filled it, and the setting that would where it did not.
        """
        self._topology = topology
        self._link_mib_s = link_mib_s
        self._run: RunSpec | None = None
        self._quiet = quiet
        self._iterations = 1
        self._workload: Workload | None = None
        self._said: set[str] = set()
        self._points = None
        self._drawing: contextlib.ExitStack | None = None
        if len(points) + done_points > 1:
            from hpcio.live.progress import lines_progress
            from hpcio.live.status import drawn_by
            from hpcio.live.terminal import stdout_columns

            columns = stdout_columns(os.environ)
            if display == "auto":
                display = "bar" if columns else "lines"
            self._points = lines_progress(
                list(points), done_points, display=display, columns=columns
            )
            if display == "bar":
                # The bar owns the terminal's last line: the status line goes into it.
                self._drawing = contextlib.ExitStack()
                self._drawing.enter_context(drawn_by(self._points.status))

    def close(self) -> None:
        """Stop the bar (idempotent); call in a finally, so a failure leaves a sane terminal."""
        if self._drawing is not None:
            self._drawing.close()
            self._drawing = None
        if self._points is not None:
            self._points.close()

    def announce(self, run: RunSpec) -> None:
        self._iterations = run.iterations
        self._workload = run.workload
        self._run = run
        if self._points is not None:
            self._points.announce(run)
        if not self._quiet:
            say(header(run, self._topology.nodes, self._topology.ranks_per_node))

    def progress(self, figures: PhaseFigures) -> None:
        if self._points is not None:
            self._points.phase(figures)
        if not self._quiet:
            say(progress_line(figures, self._iterations, self._workload))

    def finished(self, doc: ResultDocument) -> None:
        if self._points is not None:
            self._points.finished(doc)  # labels the table below, in -q too
        lines = summary(doc).splitlines()
        if self._link_mib_s and self._run is not None and doc.summary:
            lines += link_notes(doc, self._run, self._link_mib_s)
        if self._points is not None:
            lines = self._once(lines)
        say("\n".join(lines))

    def _once(self, lines: list[str]) -> list[str]:
        """The summary without the cache notes and warnings said at an earlier point (told
        apart by their words, not their figures)."""
        kept, skipped = [], False
        for line in lines:
            if line.startswith(("  cache: ", "  warning: ")):
                kind = _FIGURES.sub("#", line)
                if kind in self._said:
                    skipped = True
                    continue
                self._said.add(kind)
            kept.append(line)
        if skipped and "said" not in self._said:
            self._said.add("said")
            kept.append("  (cache notes and warnings as above from here on, unless they change; "
                        "each result document keeps its own)")  # fmt: skip
        return kept


#: Sizes and numbers in a note, so that notes differing only in them count as one.
_FIGURES = re.compile(r"[0-9][0-9.,]*( ?[KMGT]i?B)?")


def say(text: str) -> None:
    """Print a line. When the reader went away (`hpcio sweep ... | head`), carry on silently:
    the run and its result documents matter more than the commentary."""
    try:
        print(text, flush=True)
    except BrokenPipeError:
        silence_stdout()


def silence_stdout() -> None:
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, sys.stdout.fileno())
    os.close(devnull)
