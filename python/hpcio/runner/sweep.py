"""Run specs one after another, appending each document as it completes (resumable)."""

from __future__ import annotations

from collections.abc import Callable, Sequence

from hpcio.results import io as results_io
from hpcio.results.schema import ResultDocument
from hpcio.runner.run import Progress, execute
from hpcio.runner.world import Comm
from hpcio.spec.model import RunSpec


def run_all(
    world: Comm,
    specs: Sequence[RunSpec],
    output: str | None,
    progress: Progress | None = None,
    announce: Callable[[RunSpec], None] | None = None,
    done: Callable[[ResultDocument], None] | None = None,
) -> list[ResultDocument]:
    """Execute every spec; rank 0 appends each document to `output` as soon as it exists."""
    documents = []
    for spec in specs:
        if announce and world.rank == 0:
            announce(spec)
        keeps_partial = output and output != results_io.STDOUT
        checkpoint = (lambda p: results_io.save_partial(output, p)) if keeps_partial else None
        doc = execute(world, spec, progress, checkpoint)
        if doc is not None:
            if output:
                results_io.append(output, doc)
                results_io.discard_partial(output)
            if done:
                done(doc)
            documents.append(doc)
    return documents
