"""`hpcio env`: what this machine would measure with, before trusting a figure from it: hpcio
and its engine build, Python, MPI and the launcher, the I/O libraries and whether they are
parallel, the node's cores and memory, and with --target the storage under it."""

from __future__ import annotations

import argparse
import json
import os
import socket
from collections.abc import Sequence
from typing import Any

from hpcio import kinds
from hpcio.commands.store_options import add_store_option_argument, store_options
from hpcio.errors import SpecError, TargetError
from hpcio.spec.target import TargetSpec, parse_targets
from hpcio.units import format_bytes


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--target", help="also describe this target: file:///dir, s3://b/p, ...")
    add_store_option_argument(parser)
    parser.add_argument("--format", choices=("text", "json"), default="text",
                        help="text (default) or one JSON object on stdout")  # fmt: skip


#: A check of the target answers within this, not after a run's minutes of retries.
_CHECK_OPTIONS = {"timeout": "10s", "connect_timeout": "5s", "max_retries": "0"}


def main(args: argparse.Namespace, argv: Sequence[str]) -> int:
    from hpcio.runner import machine, pagecache

    if args.target is not None and not args.target.strip():
        raise SpecError("--target is empty: give a URL, e.g. --target file:///scratch/me")
    targets: tuple[TargetSpec, ...] = ()
    if args.target:
        given = parse_targets(args.target, **store_options(args.store_option))
        targets = tuple(
            TargetSpec.from_url(t.url, **{dict(kinds.of(t.kind).aliases).get(k.lower(), k): v
                                          for k, v in t.options.items()})
            for t in given
        )  # fmt: skip
    facts: dict[str, Any] = {
        "software": machine.software(),
        "node": {
            "hostname": socket.gethostname(),
            "cores": len(os.sched_getaffinity(0)),
            "memory_bytes": pagecache.node_ram_bytes(),
        },
    }
    problems = []
    checked = []
    for target in targets:
        found = machine.storage(target)
        found["problem"] = problem = usable(target)
        checked.append(found)
        if problem is not None:
            problems.append(f"target {target.url}: {problem}")
    if checked:
        facts["target"] = checked[0]
    if len(checked) > 1:
        facts["targets"] = checked
    if args.format == "json":
        print(json.dumps(facts, indent=2))
    else:
        print("\n".join(text_lines(facts)))
    if problems:
        raise TargetError("; ".join(problems))
    return 0


def usable(target: TargetSpec) -> str | None:
    """Why a run could not use `target` (one line: a missing directory, a missing bucket,
    rejected credentials, an endpoint that does not answer), or None. Reads only: a listing
    or a stat, within seconds."""
    from hpcio import _engine

    if not target.is_object_store:
        if not os.path.exists(target.path):
            return "no such directory"
        if not os.path.isdir(target.path):
            return "not a directory"
        if not os.access(target.path, os.W_OK | os.X_OK):
            return "not writable by this user"
        return None
    options = {**_CHECK_OPTIONS, **target.options}
    try:
        _engine.Target(target.url, options=options).probe(write=False)
    except OSError as e:
        return str(e.strerror or e)
    except ValueError as e:
        return str(e)
    return None


def text_lines(facts: dict[str, Any]) -> list[str]:
    sw, node = facts["software"], facts["node"]
    git = f", git {sw['git']}" if sw["git"] else ""
    lines = [f"hpcio       {sw['hpcio']}{git}; engine: {sw['engine_build']} build"]
    if sw["engine_build"] == "debug":
        lines.append("            a debug engine's figures are meaningless: run scripts/setup")
    lines.append(f"python      {sw['python']}")
    mpi = sw["mpi"]
    if mpi.get("library"):
        lines.append(
            f"mpi         {mpi['library']} (MPI {mpi['standard']}, mpi4py {mpi['mpi4py']})"
        )
    else:
        lines.append(f"mpi         not found: {mpi.get('error', '')}")
    lines.append(f"launcher    {sw['launcher'] or 'none: -n needs mpiexec on PATH, or srun'}")
    for name, about in sw["libraries"].items():
        if name == "pnetcdf":
            found = "libpnetcdf found" if about["library"] else "not installed"
            lines.append(f"{'pnetcdf':<12}{found}")
            continue
        version = about["version"] or "not installed"
        parallel = about.get("parallel")
        note = "" if parallel is None else (" (parallel)" if parallel else " (serial: no MPI)")
        lines.append(f"{name:<12}{version}{note}")
    lines.append(
        f"node        {node['hostname']}: {node['cores']} core(s) for this process, "
        f"{format_bytes(node['memory_bytes'])} of memory"
    )
    for target in facts.get("targets") or [facts.get("target")]:
        if target is not None:
            lines += _target_lines(target)
    return lines


def _target_lines(t: dict[str, Any]) -> list[str]:
    if "kind" in t:
        return [
            f"target      {t['url']} ({t['kind']})",
            f"  endpoint      {t['endpoint']}",
            f"  credentials   {t['credentials']}",
        ]
    if not t["exists"]:
        return [f"target      file://{t['path']}: no such directory"]
    direct = {True: "yes", False: "refused by the file system", None: "unknown (cannot write)"}
    free = (
        f"{format_bytes(t['free_bytes'])} of {format_bytes(t['size_bytes'])}"
        if t["free_bytes"] is not None
        else "unknown"
    )
    lines = [
        f"target      file://{t['path']}",
        f"  file system   {t['file_system'] or 'unknown'} on {t['source'] or '?'}, mounted at "
        f"{t['mount_point'] or '?'}",
        f"  mount options {t['mount_options'] or 'unknown'}",
    ]
    if "lustre_striping" in t:
        lines.append(f"  lustre        {' '.join(t['lustre_striping'].split())}")
    if "cephfs_layout" in t:
        lines.append(f"  cephfs layout {t['cephfs_layout']} (of new files here)")
    lines += [
        f"  O_DIRECT      {direct[t['o_direct']]}",
        f"  free space    {free}",
        f"  read ceiling  {t['read_ceiling']}",
    ]
    return lines
