"""mdtest's file phases on an object store: each rank PUTs its objects (of --write-bytes), lists
its tree's prefix, GETs them (--read-bytes of each) and DELETEs them, one request at a time as
mdtest's S3 backends do. Directories are prefixes there: nothing to create, stat or remove.
The engine lists a target's own level only, so a tree's levels are joined by '+' in one flat
name ('hpcio-mdtest+mdtest_tree.0.0+mdtest_tree.0.1+file.mdtest.0.7'): a listing of the
tree's root prefix still finds every object below it."""

from __future__ import annotations

from typing import TYPE_CHECKING

from hpcio.errors import SpecError
from hpcio.workloads.mdtest.phases import PhaseClock
from hpcio.workloads.mdtest.tree import TOP, Tree
from hpcio.workloads.plans import Op, PlanBuilder, Runs

if TYPE_CHECKING:
    from hpcio.spec.model import RunSpec
    from hpcio.workloads.contract import Context

#: Joins a tree's levels in an object's name.
SEP = "+"


def check(run: RunSpec, tree: Tree) -> None:
    """What an object store cannot do of mdtest's.

    Raises:
        SpecError: directory phases, or objects of no bytes.
    """
    p = run.params
    if p.items_kind != "files":
        raise SpecError(
            "an object store has no directories (a tree's directories are prefixes): "
            "give --items-kind files"
        )
    if p.write_bytes < 1:
        raise SpecError(
            "on an object store each object is one PUT of its bytes: give --write-bytes 1 or more"
        )


def run_objects(context: Context, tree: Tree) -> None:
    run, rank = context.run, context.who.rank
    p = run.params
    clock = PhaseClock(context, context.communicator())
    keys = [object_key(path) for path in tree.item_paths(rank, "file")]
    prefix = object_key(tree.dir_path(rank, 0)) + SEP
    try:
        clock.phase("file_create", lambda: _plan(context, Op.WRITE, keys, p.write_bytes))
        clock.phase("file_list", lambda: _list(context, clock, prefix, keys))
        if p.read_bytes:
            clock.phase("file_read", lambda: _plan(context, Op.READ, keys, p.read_bytes))
        clock.phase("file_remove", lambda: _remove(context, clock, keys))
    finally:
        clock.finish()
        # Whatever a failed request left (nothing otherwise).
        context.target.remove(
            [
                key
                for key in context.target.list(f"{TOP}/{tree.dir_path(rank, 0)}/")
                if key.startswith(f"{TOP}/")
            ]
        )


def object_key(path: str) -> str:
    """The object of a tree path: its levels joined by SEP under TOP."""
    return SEP.join((TOP, *path.split("/")))


def _plan(context: Context, op: Op, keys: list[str], size: int) -> int:
    """Every key opened, moved whole in one request (a PUT, or a ranged GET of `size`),
    closed, one key at a time; the keys."""
    builder = PlanBuilder()
    rank = context.who.rank
    for key in keys:
        builder.control(Op.OPEN_WRITE if op is Op.WRITE else Op.OPEN_READ, key)
        builder.runs(op, key, Runs.of(0, 1, rank), size)
        builder.control(Op.CLOSE, key)
    context.background(builder.build(), 1).wait()
    return len(keys)


def _list(context: Context, clock: PhaseClock, prefix: str, keys: list[str]) -> int:
    """One listing of the rank's tree (the shared tree's, without --dir-per-rank); its
    entries. A listing without every key of this rank's is a failure."""
    found = context.target.list(prefix)
    missing = len(set(keys) - set(found))
    if missing:
        clock.failed("file_list", prefix, OSError(f"{missing} of {len(keys)} objects not listed"))
    return len(found)


def _remove(context: Context, clock: PhaseClock, keys: list[str]) -> int:
    for key in keys:
        try:
            context.target.remove([key])
        except OSError as e:
            clock.failed("file_remove", key, e)
    return len(keys)
