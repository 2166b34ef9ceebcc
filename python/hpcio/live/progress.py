"""A suite's progress on rank 0: a rich bar on a terminal, one plain line per point elsewhere.

Both show points done and left, the current point and an ETA. The ETA weighs points by the
bytes they move (a 1 GiB point takes far longer than a 1 MiB one), from the rate seen so far
in this process.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, TextIO

from hpcio.results.schema import PhaseFigures, ResultDocument
from hpcio.results.stats import headline_bandwidth_mib_s
from hpcio.spec.model import RunSpec
from hpcio.spec.suite import describe

if TYPE_CHECKING:
    from rich.progress import TaskID

#: Displays `SuiteProgress` can drive: a live rich bar, or one line per finished point.
DISPLAYS = ("bar", "lines")

#: A phase's fixed cost (launch, open, close, barriers) in bytes-moved equivalents, so the ETA
#: does not treat a 1 MiB point as free.
_PHASE_OVERHEAD_BYTES = 16 << 20


def point_work(point: RunSpec) -> float:
    """Bytes a point moves over its phases and iterations, plus a fixed cost per phase: its
    weight in the ETA, as its workload counts them."""
    workload = point.workload
    total = 0.0
    for phase in workload.phases(point):
        total += workload.moved_bytes(point, phase) + _PHASE_OVERHEAD_BYTES
    return total * point.iterations


def phase_calls(point: RunSpec) -> int:
    """Timed phases a point runs: its phases x iterations."""
    return len(point.workload.phases(point)) * point.iterations


def lines_progress(
    points: list[RunSpec],
    done_points: int = 0,
    name: Callable[[RunSpec], str] = describe,
    display: str = "lines",
    columns: int | None = None,
) -> SuiteProgress:
    """One line per finished point with [i/N] and an ETA (sweeps, profiles), as a suite's; with
    display "bar", a suite's bar as well, `columns` wide (None: as the terminal says)."""
    return SuiteProgress(
        name=name,
        total_points=len(points) + done_points,
        done_points=done_points,
        total_work=sum(map(point_work, points)),
        done_work=0.0,
        work=point_work,
        phase_calls=phase_calls,
        display=display,
        columns=columns,
    )


class SuiteProgress:
    """Progress of a suite's points. Rank 0 only; `work` gives a point's weight (bytes)."""

    def __init__(
        self,
        *,
        total_points: int,
        done_points: int,
        total_work: float,
        done_work: float,
        work: Callable[[RunSpec], float],
        phase_calls: Callable[[RunSpec], int],
        display: str,
        out: TextIO | None = None,
        name: Callable[[RunSpec], str] = describe,
        columns: int | None = None,
    ) -> None:
        """
        Args:
            total_points: points in the whole suite.
            done_points: points already in the results file, or run by an earlier launch.
            total_work: weight of the whole suite, in bytes moved.
            done_work: weight of the points already done, in bytes moved.
            work: a point's weight, in bytes moved over all its phases and iterations.
            phase_calls: how many timed phases a point runs (phases x iterations).
            display: "bar" (rich, for a terminal) or "lines".
            out: where to print (stdout).
            name: a point in a few words (spec/suite.py's describe).
            columns: the bar's width; None: the terminal's (COLUMNS for a rank).
        """
        self._name = name
        self._total_points = total_points
        self._done_points = done_points
        self._total_work = max(total_work, 1.0)
        self._done_work = done_work
        self._work = work
        self._phase_calls = phase_calls
        self._out = out or sys.stdout
        self._started = time.monotonic()
        self._work_at_start = done_work
        self._point: RunSpec | None = None
        self._point_started = self._started
        self._point_work_done = 0.0
        self._status = ""
        self._bar = _RichBar(self._out, columns) if display == "bar" else None
        if self._bar:
            self._bar.start(self._total_work, self._done_work, self._fields("starting"))

    def extend(self, points: Sequence[RunSpec]) -> None:
        """More points to run, chosen as the runs go (hpcio tune's search)."""
        self._total_points += len(points)
        self._total_work += sum(map(self._work, points))

    def announce(self, point: RunSpec) -> None:
        """A point starts."""
        self._point = point
        self._point_started = time.monotonic()
        self._point_work_done = 0.0
        if self._bar:
            self._bar.update(self._done_work, self._fields(self._name(point)))

    def phase(self, figures: PhaseFigures) -> None:
        """A phase of the current point ended."""
        if self._point is None:
            return
        # Advance by this phase's share of the point, never past the point's own weight.
        share = self._work(self._point) / max(1, self._phase_calls(self._point))
        self._point_work_done = min(self._point_work_done + share, self._work(self._point))
        if self._bar:
            self._bar.update(
                self._done_work + self._point_work_done, self._fields(self._name(self._point))
            )

    def finished(self, document: ResultDocument) -> None:
        """The current point's document was written."""
        if self._point is None:
            return
        self._done_points += 1
        self._done_work += self._work(self._point)
        line = self._line(self._point, document)
        if self._bar:
            self._bar.print(line)
            after = "finished" if self._done_points >= self._total_points else "next point"
            self._bar.update(self._done_work, self._fields(after))
        else:
            print(line, file=self._out, flush=True)
        self._point = None

    def status(self, line: str) -> None:
        """The current phase's live status line (live/status.py), shown in the bar before the
        point's name; "" takes it away. Without a bar, nothing: the line goes to stderr."""
        self._status = line
        if self._bar and self._point is not None:
            self._bar.update(
                self._done_work + self._point_work_done, self._fields(self._name(self._point))
            )

    def close(self) -> None:
        """Stop the bar (idempotent); call in a finally, so a failure leaves a sane terminal."""
        if self._bar:
            self._bar.stop()
            self._bar = None

    def eta_s(self) -> float | None:
        """Seconds left at the rate seen so far in this process; None before any progress."""
        moved = self._done_work + self._point_work_done - self._work_at_start
        elapsed = time.monotonic() - self._started
        if moved <= 0 or elapsed <= 0:
            return None
        left = self._total_work - self._done_work - self._point_work_done
        return max(0.0, left / (moved / elapsed))

    def _fields(self, description: str) -> dict[str, str]:
        left = self._total_points - self._done_points
        return {
            # The status first: a narrow terminal cuts the point's name, said above it anyway.
            "description": f"{self._status}  {description}" if self._status else description,
            "points": f"{self._done_points}/{self._total_points} done, {left} left",
            "eta": format_duration(self.eta_s()),
        }

    def _line(self, point: RunSpec, document: ResultDocument) -> str:
        rates = ", ".join(
            f"{phase} {headline_bandwidth_mib_s(document, phase):.2f} MiB/s"
            for phase in document.summary
        )
        took = time.monotonic() - self._point_started
        left = self._total_points - self._done_points
        return (
            f"[{self._done_points}/{self._total_points}] {self._name(point)}: {rates} "
            f"in {took:.1f} s; {left} left, eta {format_duration(self.eta_s())}"
        )


def format_duration(seconds: float | None) -> str:
    """3725.2 -> '1:02:05'; None -> '-:--:--' (not known yet)."""
    if seconds is None:
        return "-:--:--"
    whole = round(seconds)
    return f"{whole // 3600}:{whole // 60 % 60:02d}:{whole % 60:02d}"


class _RichBar:
    """rich.progress with the columns a suite needs; a terminal is assumed (the caller chose
    'bar' because stdout was one, possibly through mpiexec's forwarding)."""

    def __init__(self, out: TextIO, columns: int | None = None) -> None:
        from rich.console import Console
        from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn
        from rich.table import Column

        def fixed() -> Column:
            return Column(no_wrap=True)

        self._progress = Progress(
            TextColumn("{task.fields[points]}", table_column=fixed()),
            BarColumn(bar_width=20, table_column=fixed()),
            TimeElapsedColumn(table_column=fixed()),
            TextColumn("eta {task.fields[eta]}", table_column=fixed()),
            # The current point takes what width is left and is cut short first.
            TextColumn(
                "{task.description}",
                markup=False,  # a point's name and the status line hold brackets: "[write]"
                table_column=Column(ratio=1, no_wrap=True, overflow="ellipsis"),
            ),
            console=Console(file=out, force_terminal=True, width=columns),
            expand=True,
        )
        self._task: TaskID | None = None

    def start(self, total: float, completed: float, fields: dict[str, str]) -> None:
        self._progress.start()
        self._task = self._progress.add_task(
            fields["description"],
            total=total,
            # rich's annotation says int; a task's completed is a float (its update takes one).
            completed=completed,  # type: ignore[arg-type]
            points=fields["points"],
            eta=fields["eta"],
        )

    def update(self, completed: float, fields: dict[str, str]) -> None:
        assert self._task is not None  # start() added it
        self._progress.update(
            self._task,
            completed=completed,
            description=fields["description"],
            points=fields["points"],
            eta=fields["eta"],
        )

    def print(self, line: str) -> None:
        self._progress.console.print(line, markup=False, highlight=False, soft_wrap=True)

    def stop(self) -> None:
        self._progress.stop()
