"""mdtest's phases on a POSIX target, with os.* calls from Python: each rank makes its items one
call at a time, as mdtest does, between barriers. A failed call is counted and the rank goes on
(mdtest warns and goes on), so every rank meets every barrier."""

from __future__ import annotations

import os
import shutil
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from hpcio.workloads.mdtest.phases import PhaseClock
from hpcio.workloads.mdtest.tree import TOP, Tree
from hpcio.workloads.native import _engine

if TYPE_CHECKING:
    from hpcio.workloads.contract import Context

_DIR_MODE = 0o755
_FILE_MODE = 0o644


def run_posix(context: Context, tree: Tree) -> None:
    """One iteration of mdtest on this rank: the tree, the directory phases, the file
    phases, the tree's removal; whatever a failed call left is removed at the end."""
    run, rank = context.run, context.who.rank
    p = run.params
    clock = PhaseClock(context, context.communicator())
    top = context.path(TOP)
    if rank == 0:
        os.makedirs(top, exist_ok=True)
    try:
        mine = (
            [os.path.join(top, d) for d in tree.tree_paths(rank)] if tree.makes_tree(rank) else []
        )
        clock.phase("tree_create", lambda: _each(clock, "tree_create", mine, _mkdir))
        if p.items_kind in ("both", "dirs"):
            dirs = [os.path.join(top, d) for d in tree.item_paths(rank, "dir")]
            clock.phase("dir_create", lambda: _each(clock, "dir_create", dirs, _mkdir))
            clock.phase("dir_stat", lambda: _each(clock, "dir_stat", dirs, os.stat))
            clock.phase("dir_remove", lambda: _each(clock, "dir_remove", dirs, os.rmdir))
        if p.items_kind in ("both", "files"):
            files = [os.path.join(top, f) for f in tree.item_paths(rank, "file")]
            made = clock.phase("file_create", lambda: _create(context, clock, files))
            files = files[:made]
            clock.phase("file_stat", lambda: _each(clock, "file_stat", files, os.stat))
            clock.phase("file_read", lambda: _read(context, clock, files))
            clock.phase("file_remove", lambda: _each(clock, "file_remove", files, os.unlink))
        clock.phase("tree_remove", lambda: _each(clock, "tree_remove", mine[::-1], os.rmdir))
    finally:
        clock.finish()
        if rank == 0:
            # Empty unless a call failed: nothing of the run stays behind.
            shutil.rmtree(top, ignore_errors=True)


def _mkdir(path: str) -> None:
    os.mkdir(path, _DIR_MODE)


def _each(clock: PhaseClock, phase: str, paths: Sequence[str], call: Callable[[str], Any]) -> int:
    """`call` on every path, one after another; the calls made."""
    timed = clock.latencies
    for path in paths:
        try:
            if timed:
                start = _engine.clock_ns()
                call(path)
                clock.took(start)
            else:
                call(path)
        except OSError as e:
            clock.failed(phase, path, e)
    return len(paths)


def _create(context: Context, clock: PhaseClock, files: Sequence[str]) -> int:
    """Create every file (and write --write-bytes to it), until the stonewall if one is set;
    then on to the most files any rank made (mdtest -W); the files made."""
    p = context.run.params
    data = bytes(_payload(context, p.write_bytes)) if p.write_bytes else b""
    flags = os.O_CREAT | os.O_WRONLY
    made = 0
    deadline = clock.stonewall_ns()
    for path in files:
        if deadline is not None and _engine.clock_ns() >= deadline:
            break
        _create_one(clock, path, flags, data, context.run.fsync)
        made += 1
    if deadline is not None:
        most = clock.most(made)
        for path in files[made:most]:
            _create_one(clock, path, flags, data, context.run.fsync)
        made = most
    return made


def _create_one(clock: PhaseClock, path: str, flags: int, data: bytes, sync: bool) -> None:
    """One file created (and written); with --fsync, synced before its close (mdtest -y)."""
    start = _engine.clock_ns() if clock.latencies else 0
    try:
        fd = os.open(path, flags, _FILE_MODE)
        try:
            if data:
                os.write(fd, data)
            if sync:
                os.fsync(fd)
        finally:
            os.close(fd)
    except OSError as e:
        clock.failed("file_create", path, e)
        return
    if clock.latencies:
        clock.took(start)


def _read(context: Context, clock: PhaseClock, files: Sequence[str]) -> int:
    """Open each file, read --read-bytes from it (none: open and close, as mdtest -e 0)."""
    size = context.run.params.read_bytes
    for path in files:
        start = _engine.clock_ns() if clock.latencies else 0
        try:
            fd = os.open(path, os.O_RDONLY)
            try:
                if size:
                    got = os.read(fd, size)
                    if len(got) != size:
                        raise OSError(f"read {len(got)} of {size} bytes")
            finally:
                os.close(fd)
        except OSError as e:
            clock.failed("file_read", path, e)
            continue
        if clock.latencies:
            clock.took(start)
    return len(files)


def _payload(context: Context, size: int) -> Any:
    buffer = _engine.PayloadBuffer(context.run.seed, size)
    buffer.fill(context.who.rank, TOP, 0, size)
    return buffer.view
