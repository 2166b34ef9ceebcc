"""Run specs one after another, each document in the results file as its iterations finish."""

from __future__ import annotations

import sys
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

from hpcio.results import io as results_io
from hpcio.results.schema import ResultDocument
from hpcio.runner.cleanup import finished_iterations, say_kept
from hpcio.runner.run import Progress, execute
from hpcio.runner.tracing import root_for
from hpcio.runner.world import Comm, launched_by_hpcio

if TYPE_CHECKING:
    from hpcio.spec.model import RunSpec


def run_all(
    world: Comm,
    specs: Sequence[RunSpec],
    output: str | None,
    progress: Progress | None = None,
    announce: Callable[[RunSpec], None] | None = None,
    done: Callable[[ResultDocument], None] | None = None,
) -> list[ResultDocument]:
    """Execute every spec; rank 0 keeps each run's document in `output` from its first
    finished iteration on (status "interrupted" until the run completes)."""
    documents = []
    for spec in specs:
        if announce and world.rank == 0:
            announce(spec)
        line = results_io.RunLine(output) if output else None

        def interrupted(line: results_io.RunLine | None = line) -> None:
            if line is None or world.rank != 0:
                return
            if line.path == results_io.STDOUT:
                line.release()  # stdout cannot be rewritten: the document goes out now
            elif not launched_by_hpcio():  # the self-launching hpcio says it, from the file
                kept = line.kept()
                say_kept(line.path, finished_iterations(kept) if kept else 0)
                sys.stderr.flush()

        doc = execute(
            world,
            spec,
            progress,
            line.write if line else None,
            interrupted,
            trace_root=root_for(output),
        )
        if doc is not None:
            if line is not None:
                line.write(doc)
            if done:
                done(doc)
            documents.append(doc)
    return documents
