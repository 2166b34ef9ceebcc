"""What runs leave behind and who removes it: the launching hpcio after an MPI job that failed
or was stopped (it says how the job ended, aborts the uploads its ranks left open, removes the
files they wrote and says which finished iterations the results file kept), and `hpcio clean`
(every file and upload of hpcio's under a target)."""

from __future__ import annotations

import contextlib
import itertools
import os
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, TypeVar

from hpcio import _engine
from hpcio.errors import HpcioError, TargetError
from hpcio.results import io as results_io
from hpcio.results.schema import ResultDocument
from hpcio.runner import journal
from hpcio.runner.lock import LOCK_KEY

if TYPE_CHECKING:
    from hpcio.spec.model import RunSpec
    from hpcio.spec.target import TargetSpec

#: The exit code of a job stopped by SIGINT: the launcher has said so already.
_INTERRUPTED = 130

#: The clean-up meets the faults the run met (resets, stalls: issue 28), so each of its LISTs,
#: aborts and removals is tried this many times, waiting CLEANUP_BACKOFF_S, then twice as long,
#: between tries: 15.5 s of waiting at most, beyond the engine's own retries of each request.
CLEANUP_ATTEMPTS = 6
CLEANUP_BACKOFF_S = 0.5

_T = TypeVar("_T")


#: A try that failed after this long met a store that did not answer (a stall: the engine's
#: own retries spent the user's --store-option timeout budget): it is not tried again, so a
#: clean-up never waits CLEANUP_ATTEMPTS times the user's bound (issue 28: no hang).
CLEANUP_SLOW_TRY_S = 5.0


def retrying(call: Callable[[], _T]) -> _T:
    """`call()`, tried again after an OSError that came at once (a reset) up to
    CLEANUP_ATTEMPTS times in all with a doubling backoff; the last try's OSError, or that of
    a try that took CLEANUP_SLOW_TRY_S or more (a stall), is raised."""
    for attempt in range(CLEANUP_ATTEMPTS - 1):
        started = time.monotonic()
        try:
            return call()
        except OSError:
            if time.monotonic() - started >= CLEANUP_SLOW_TRY_S:
                raise
            time.sleep(CLEANUP_BACKOFF_S * 2**attempt)
    return call()


def written_keys(specs: Sequence[RunSpec]) -> list[str]:
    """The files or objects `specs` write, each once, in the same order on every rank (ranks
    share the removal out by position): what a run or a failed job leaves behind."""

    keys = (key for spec in specs if spec.writes for key in spec.workload.keys(spec))
    return list(dict.fromkeys(keys))


def remove_empty_directories(spec: TargetSpec, keys: Sequence[str]) -> None:
    """On a file:// target, the directories that keys with a "/" lived in (a zarr array's),
    deepest first, each once it is empty: removing the keys leaves them behind."""
    if spec.is_object_store:
        return
    directories: set[str] = set()
    for key in keys:
        parent = os.path.dirname(key)
        while parent:
            directories.add(parent)
            parent = os.path.dirname(parent)
    for directory in sorted(directories, key=lambda d: d.count("/"), reverse=True):
        with contextlib.suppress(OSError):  # not empty: someone else's files are there
            os.rmdir(os.path.join(spec.path, directory))


def _files_under(spec: TargetSpec, keys: Sequence[str]) -> list[str]:
    """`keys` with each directory among them (a zarr array's, on file://) replaced by the
    files below it, as keys."""
    found = []
    for key in keys:
        top = os.path.join(spec.path, key)
        if spec.is_object_store or not os.path.isdir(top):
            found.append(key)
            continue
        for folder, _, names in os.walk(top):
            relative = os.path.relpath(folder, spec.path)
            found += [f"{relative}/{name}" for name in sorted(names)]
    return found


def _remove_empty_trees(spec: TargetSpec, keys: Sequence[str]) -> None:
    """The directories below each of `keys` that is a directory on a file:// target, deepest
    first, once empty (mdtest's tree holds empty directories no file key names), and it."""
    for key in keys:
        top = os.path.join(spec.path, key)
        if spec.is_object_store or not os.path.isdir(top):
            continue
        for folder, _, _ in os.walk(top, topdown=False):
            with contextlib.suppress(OSError):  # not empty: someone else's files are there
                os.rmdir(folder)


#: How the files of Open MPI's shared-memory transport (btl vader, sm) are named: every rank
#: maps its own and its peers'; MPI_Finalize removes them, an exit without it leaves them.
_MPI_SEGMENT_PREFIXES = ("vader_segment.", "sm_segment.")


def remove_mpi_segments() -> None:
    """Unlink the Open MPI shared-memory segments this process maps (its own and its peers'):
    an interrupted rank leaves without MPI_Finalize, which would otherwise have removed them,
    and /dev/shm is RAM that outlives the job."""
    try:
        with open("/proc/self/maps", encoding="utf-8", errors="replace") as maps:
            mapped = {fields[5].strip() for line in maps if len(fields := line.split(None, 5)) == 6}
    except OSError:
        return
    for path in mapped:
        if os.path.basename(path).startswith(_MPI_SEGMENT_PREFIXES):
            with contextlib.suppress(OSError):  # a peer removed it first
                os.unlink(path)


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

    # Several targets: any rank's uploads and objects may be on any of them.
    every = [each for s in specs for each in s.each_target()]
    for spec in {(s.target.url, s.target.endpoint): s for s in every}.values():
        target = spec.target
        if target.is_object_store and target.traits.lasting:
            aborted = len(journal.abort_abandoned(target.url, target.options, job))
            # The journal holds the uploads the ranks knew of; a create whose answer was lost
            # made one no rank knew, which only the store's own list shows.
            aborted += abort_run_uploads(spec, written_keys(specs)) if spec.writes else 0
            if spec.writes:
                remove_probes(spec)
            if aborted:
                print(f"hpcio: aborted {aborted} incomplete upload(s) the job left on "
                      f"{target.url}", file=sys.stderr)  # fmt: skip
        if not spec.keep and spec.writes:
            with contextlib.suppress(OSError, HpcioError):  # `hpcio clean` removes the rest
                keys = written_keys(specs)
                retrying(lambda: open_target(spec).remove(keys))  # noqa: B023
                remove_empty_directories(spec.target, keys)
    if output and output != results_io.STDOUT:
        interrupted = results_io.interrupted_since(output, since)
        shown = "stdout" if output == os.environ.get(results_io.SPOOL_VARIABLE) else output
        if interrupted is not None or stopped:
            say_kept(shown, finished_iterations(interrupted) if interrupted else 0)


def after_finished_job(specs: Sequence[RunSpec]) -> None:
    """The MPI job ended well: abort any upload still open under the keys it wrote (a create
    whose answer a reset lost made one the engine's own clean-up could miss), saying so, and
    remove any probe object left (remove_probes)."""
    every = [each for s in specs if s.writes for each in s.each_target()]
    for spec in {(s.target.url, s.target.endpoint): s for s in every}.values():
        aborted = abort_run_uploads(spec, written_keys(specs))
        remove_probes(spec)
        if aborted:
            print(f"hpcio: aborted {aborted} incomplete upload(s) the run left on "
                  f"{spec.target.url}", file=sys.stderr)  # fmt: skip


#: How the target probe names its object, followed by the probing process's id (engine
#: object.rs probe_path).
PROBE_START = ".hpcio-probe-"


def remove_probes(spec: RunSpec) -> int:
    """Remove every probe object under `spec`'s target (an object store that keeps its
    objects): the launcher's and rank 0's probes delete their own, but a DELETE that failed
    past its retries, or a PUT whose answer was lost and that landed after it, leaves one
    (issue 28). The run holds the target's lock, so these are its own or those of a run its
    lock refused, whose probes are over. Each LIST and removal is retried (`retrying`); best
    effort past that. Returns how many were listed."""
    target_spec = spec.target
    if not (target_spec.is_object_store and target_spec.traits.lasting):
        return 0
    try:
        target = _engine.Target(target_spec.url, options=dict(target_spec.options))
        probes = retrying(lambda: target.list(PROBE_START))
        if probes:
            retrying(lambda: target.remove(probes))
    except (OSError, ValueError):
        return 0
    return len(probes)


def remove_probe(target: _engine.Target) -> None:
    """Remove this process's probe object after a failed write probe, the DELETE retried
    past the faults that failed the probe (the engine tried it, but fewer times)."""
    with contextlib.suppress(OSError):
        retrying(lambda: target.remove([f"{PROBE_START}{os.getpid()}"]))


def abort_run_uploads(spec: RunSpec, keys: Sequence[str]) -> int:
    """Abort every multipart upload the store lists as open under one of `keys` or the run's
    lock object, on `spec`'s target (an object store that keeps its objects; else nothing).
    They are the run's: it holds the target's lock and was about to overwrite those keys.
    Each LIST and abort is retried (`retrying`); best effort past that, as `hpcio clean`
    lists and aborts what is left. Returns how many went."""
    target_spec = spec.target
    if not (target_spec.is_object_store and target_spec.traits.lasting):
        return 0
    wanted = {*keys, LOCK_KEY}
    # One LIST for all: the keys' common start (of the sorted first and last, that of all).
    first, last = min(wanted), max(wanted)
    same = (a == b for a, b in zip(first, last, strict=False))
    start = first[: sum(1 for _ in itertools.takewhile(bool, same))]
    try:
        target = _engine.Target(target_spec.url, options=dict(target_spec.options))
        listed = retrying(lambda: target.list_uploads(start))
    except (OSError, ValueError):
        return 0
    return sum(_abort(target, key, upload_id) for key, upload_id in listed if key in wanted)


def _abort(target: _engine.Target, key: str, upload_id: str) -> bool:
    """Abort one listed upload, tried as `retrying` does; a try that failed may have been
    carried out all the same (its answer lost), so before the next the store's list says
    whether the upload is still there. Whether it is gone."""
    for attempt in range(CLEANUP_ATTEMPTS):
        started = time.monotonic()
        try:
            target.abort_upload(key, upload_id)
        except OSError:
            if time.monotonic() - started >= CLEANUP_SLOW_TRY_S:
                return False  # the store stalls: `hpcio clean` aborts it later
            time.sleep(CLEANUP_BACKOFF_S * 2**attempt)
            with contextlib.suppress(OSError):
                if (key, upload_id) not in target.list_uploads(key):
                    return True
            continue
        return True
    return False


def finished_iterations(document: ResultDocument) -> int:
    return len({p.iteration for p in document.phases})


def say_kept(output: str, iterations: int) -> None:
    if iterations:
        print(f"hpcio: kept the {iterations} finished iteration(s) in {output} "
              "(status interrupted)", file=sys.stderr)  # fmt: skip
    else:
        print(f"hpcio: no iteration had finished; nothing added to {output}", file=sys.stderr)


#: Every name is_own_key accepts starts with this: the store lists only these.
OWN_PREFIX = "hpcio-"


@dataclass(frozen=True, slots=True)
class Leftovers:
    """What `clean_target` found under a target, and removed unless it was a dry run."""

    #: Keys with an incomplete upload the store itself lists.
    uploads: list[str]
    #: Keys whose upload this node's journal held (aborted; none in a dry run).
    journaled: list[str]
    #: hpcio's own files or objects, and the lock a killed run left.
    keys: list[str]
    #: How many of `keys` went (0 in a dry run).
    removed: int


def clean_target(spec: TargetSpec, dry_run: bool = False) -> Leftovers:
    """Abort the incomplete uploads of hpcio's objects under `spec` and remove hpcio's own
    files or objects there, nothing else (`dry_run`: only find them).

    Raises:
        TargetError: the store could not be listed or refused a request.
    """
    from hpcio.workloads.registry import is_own_key

    try:
        target = _engine.Target(spec.url, options=dict(spec.options))
        # A run's lock goes too: one a killed run left on an object store would block the next.
        keys = [k for k in target.list(OWN_PREFIX) if is_own_key(k) or k == LOCK_KEY]
        owned = keys
        keys = _files_under(spec, keys)
        if spec.is_object_store and spec.traits.lasting:
            from hpcio.workloads.seismic.stores import keys_below

            keys += [k for k in keys_below(spec, OWN_PREFIX) if is_own_key(k)]
        # S3 bills for the parts of an upload never completed or aborted: the store's own list
        # finds those of runs on any node; the journal those of this node on other stores.
        uploads = [(k, i) for k, i in target.list_uploads(OWN_PREFIX) if is_own_key(k)]
        if not dry_run:
            for key, upload_id in uploads:
                target.abort_upload(key, upload_id)
        removed = 0 if dry_run else target.remove(keys)
        if not dry_run:
            remove_empty_directories(spec, keys)
            _remove_empty_trees(spec, owned)
        journaled = [] if dry_run else journal.abort_abandoned(spec.url, spec.options)
    except OSError as e:
        raise TargetError(f"clean: {_plain(e)}") from None
    except ValueError as e:
        raise TargetError(f"clean {spec.url}: {e}") from None
    return Leftovers([key for key, _ in uploads], journaled, keys, removed)


def _plain(e: OSError) -> str:
    """The engine's message without Python's "[Errno N]" and Rust's "(os error N)"."""
    text = e.strerror or str(e)
    return text.replace(f" (os error {e.errno})", "") if e.errno else text
