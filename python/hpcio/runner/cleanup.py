"""What the launching hpcio does after an MPI job that failed or was stopped: say how it ended,
abort the uploads its ranks left open, remove the files they wrote, and say which finished
iterations the results file kept."""

from __future__ import annotations

import contextlib
import os
import sys
from collections.abc import Sequence

from hpcio.errors import HpcioError
from hpcio.results import io as results_io
from hpcio.results.schema import ResultDocument
from hpcio.runner import journal
from hpcio.spec.model import RunSpec

#: The exit code of a job stopped by SIGINT: the launcher has said so already.
_INTERRUPTED = 130


def written_keys(specs: Sequence[RunSpec]) -> set[str]:
    """The files or objects `specs` write: what a failed job may have left behind."""
    from hpcio.workloads import patterns

    return {key for spec in specs if spec.writes for key in patterns.get(spec.pattern).keys(spec)}


def after_failed_job(
    code: int, specs: Sequence[RunSpec], job: str, output: str | None, since: int = 0
) -> None:
    """mpiexec ended with `code` (non-zero): say if a rank was killed, then clean up after
    the job (a signal's death counts as stopped: its ranks could not keep their iterations)."""
    killed = code > 128 or code < 0
    if killed and code != _INTERRUPTED:
        # A rank died from a signal and could not say so itself.
        signal_number = code - 128 if code > 128 else -code
        print(
            f"hpcio: error: the MPI job failed: a rank was killed (signal {signal_number})",
            file=sys.stderr,
        )
    clean_up_after(specs, job, output, since, stopped=killed)


def clean_up_after(
    specs: Sequence[RunSpec],
    job: str,
    output: str | None,
    since: int = 0,
    stopped: bool = False,
) -> None:
    """The MPI job failed or was `stopped` by a signal: abort the uploads its ranks could not,
    remove the files they left (unless --keep), and say where the iterations it finished are
    (rank 0 wrote them to `output`, after byte `since`, as they finished)."""
    from hpcio.runner.run import open_target

    for spec in {s.target.url: s for s in specs}.values():
        target = spec.target
        if target.is_object_store and target.kind != "memory":
            aborted = journal.abort_abandoned(target.url, target.options, job)
            if aborted:
                print(f"hpcio: aborted {len(aborted)} incomplete upload(s) the job left on "
                      f"{target.url}", file=sys.stderr)  # fmt: skip
        if not spec.keep and spec.writes:
            with contextlib.suppress(OSError, HpcioError):  # `hpcio clean` removes the rest
                open_target(spec).remove(sorted(written_keys(specs)))
    if output and output != results_io.STDOUT:
        interrupted = results_io.interrupted_since(output, since)
        shown = "stdout" if output == os.environ.get(results_io.SPOOL_VARIABLE) else output
        if interrupted is not None or stopped:
            say_kept(shown, finished_iterations(interrupted) if interrupted else 0)


def finished_iterations(document: ResultDocument) -> int:
    return len({p.iteration for p in document.phases})


def say_kept(output: str, iterations: int) -> None:
    if iterations:
        print(f"hpcio: kept the {iterations} finished iteration(s) in {output} "
              "(status interrupted)", file=sys.stderr)  # fmt: skip
    else:
        print(f"hpcio: no iteration had finished; nothing added to {output}", file=sys.stderr)
