"""`hpcio template slurm|pbs|k8s [job options] -- COMMAND`: a batch job (sbatch script, qsub
script, Kubernetes MPIJob or JobSet) that runs the hpcio COMMAND (run, sweep or suite run) on
a cluster. COMMAND is checked by hpcio's own parser and validation before anything is
written, so a job never fails in the queue on an option hpcio would refuse here."""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import shlex
import sys
from collections.abc import Iterator, Sequence
from typing import TextIO

from hpcio.errors import SpecError
from hpcio.jobs import k8s, scripts
from hpcio.jobs.model import Job, Step

KINDS = {
    "slurm": "an sbatch script (srun or mpiexec starts the ranks)",
    "pbs": "a qsub script (mpiexec on $PBS_NODEFILE)",
    "k8s": "a Kubeflow MPIJob or a JobSet manifest, with a results volume",
}
_EXAMPLE = (
    "hpcio template slurm --nodes 2 --tasks-per-node 4 -- run --pattern sfmw "
    "--target file:///lustre/me/hpcio -o results.jsonl"
)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    kinds = parser.add_subparsers(dest="kind", required=True, metavar="{slurm,pbs,k8s}")
    for kind, about in KINDS.items():
        job = kinds.add_parser(kind, help=about)
        job.usage = "%(prog)s --nodes N --tasks-per-node T [options] -- COMMAND"
        job.epilog = f"COMMAND is an hpcio command line without 'hpcio', e.g.: {_EXAMPLE}"
        _job_arguments(job, kind)


def _job_arguments(parser: argparse.ArgumentParser, kind: str) -> None:
    parser.add_argument("--nodes", type=int, required=True, help="nodes the job asks for")
    parser.add_argument(
        "--tasks-per-node", type=int, required=True, help="MPI ranks on each node (slots)"
    )
    parser.add_argument(
        "--time", default="01:00:00", help="time limit, HH:MM:SS or D-HH:MM:SS (01:00:00)"
    )
    parser.add_argument("--job-name", default="hpcio", help="the job's name (hpcio)")
    if kind != "k8s":
        flag, what = ("--partition", "partition") if kind == "slurm" else ("--queue", "queue")
        parser.add_argument(
            flag, dest="partition", help=f"the {what} (without it: a placeholder to fill in)"
        )
        parser.add_argument("--account", help="account to charge (without it: a placeholder)")
    if kind == "slurm":
        parser.add_argument(
            "--launcher",
            choices=scripts.SLURM_LAUNCHERS,
            default="srun",
            help="start the ranks with srun --mpi=pmix (default) or the MPI's mpiexec",
        )
    parser.add_argument(
        "--hpcio",
        default="hpcio",
        metavar="PROGRAM",
        help="how the nodes start hpcio, e.g. '/opt/venv/bin/python -m hpcio' (hpcio)",
    )
    if kind == "k8s":
        parser.add_argument(
            "--api", choices=k8s.APIS, default="mpijob", help="a Kubeflow MPIJob or a JobSet"
        )
        parser.add_argument("--image", default="IMAGE", help="the container image with hpcio")
        parser.add_argument(
            "--claim",
            default="hpcio-results",
            help="the PersistentVolumeClaim (ReadWriteMany) the results go to (hpcio-results)",
        )
        parser.add_argument(
            "--mount", default="/results", help="where the results volume is mounted (/results)"
        )
    parser.add_argument("-o", "--output", help="write the job here instead of to stdout")
    parser.add_argument("job_command", nargs=argparse.REMAINDER, help=argparse.SUPPRESS)


def main(args: argparse.Namespace, argv: Sequence[str]) -> int:
    words = list(args.job_command)
    if words[:1] == ["--"]:
        words = words[1:]
    if not words:
        raise SpecError(f"give the hpcio command the job runs after --, e.g. {_EXAMPLE}")
    job = Job(
        name=args.job_name,
        nodes=args.nodes,
        tasks_per_node=args.tasks_per_node,
        time=args.time,
        steps=(),
        results="",
        hpcio=tuple(shlex.split(args.hpcio)) or ("hpcio",),
        partition=getattr(args, "partition", None),
        account=getattr(args, "account", None),
    ).check()
    steps, results = job_steps(words, job)
    job = dataclasses.replace(job, steps=steps, results=results).check()
    if args.kind == "k8s" and not results.startswith(args.mount.rstrip("/") + "/"):
        raise SpecError(
            f"k8s: -o {results} is not on the results volume; give the command "
            f"-o {args.mount.rstrip('/')}/{results.rsplit('/', 1)[-1]}"
        )
    if args.kind == "slurm":
        text = scripts.slurm(job, args.launcher)
    elif args.kind == "pbs":
        text = scripts.pbs(job)
    else:
        text = k8s.manifest(job, api=args.api, image=args.image, claim=args.claim, mount=args.mount)
    with _destination(args.output) as out:
        out.write(text)
    return 0


def job_steps(words: list[str], job: Job) -> tuple[tuple[Step, ...], str]:
    """The launches that run `hpcio words` in `job`, and its results file, once the command has
    passed hpcio's parser and the checks its own command makes before it runs.

    Raises:
        SpecError: what hpcio would say of the command (prefixed "the job's command: "), or a
            command a batch job cannot run as it is.
    """
    from hpcio.commands import parser as cli
    from hpcio.runner.machine import command_line

    try:
        parsed = cli.parse_command(words)
        return _steps(parsed, words, job)
    except SpecError as e:
        shown = shlex.join(command_line(words))  # --store-option values hidden
        raise SpecError(f"the job's command `hpcio {shown}`: {e}") from None


def _steps(parsed: argparse.Namespace, words: list[str], job: Job) -> tuple[tuple[Step, ...], str]:
    if (
        parsed.command not in ("run", "sweep", "suite")
        or getattr(parsed, "suite_command", "run") != "run"
    ):
        raise SpecError("a job template runs `run`, `sweep` or `suite run`")
    if getattr(parsed, "store_option", None):
        raise SpecError(
            "--store-option values would be written into the job file: give the job the "
            "store's settings in its environment (AWS_*, AZURE_STORAGE_*, GOOGLE_*)"
        )
    if not parsed.output or parsed.output == "-":
        raise SpecError("needs -o FILE (on a file system the nodes share): rank 0 appends there")
    if parsed.command == "suite":
        return _suite_steps(parsed, words), parsed.output
    from hpcio.commands import run

    ranks = parsed.ranks or job.slots
    if parsed.ranks is not None and parsed.ranks < 1:
        raise SpecError(f"-n must be at least 1, got {parsed.ranks}")
    run._specs(parsed, ranks)  # what `hpcio run` checks before it starts
    per_node = job.tasks_per_node if ranks == job.slots else None
    return (Step(ranks, per_node, tuple(words)),), parsed.output


def _suite_steps(parsed: argparse.Namespace, words: list[str]) -> tuple[Step, ...]:
    """One launch per (ranks, ranks per node) of the suite's points, as `hpcio suite run` makes
    on one machine: each runs its group's points alone (--group, commands/suite.py), placed by
    the job's launcher, so a suite's ranks per node are the job's, not only recorded."""
    from hpcio import shipped
    from hpcio.spec.suite import load_suite

    if parsed.group is not None:
        raise SpecError("--group is the template's to give, one per launch")
    path = shipped.find(parsed.suite, shipped.SUITES, "suite")
    suite = load_suite(path, scale=parsed.scale, targets=parsed.target)
    return tuple(
        Step(ranks, per_node, (*words, "--group", f"{ranks}:{per_node or 0}"))
        for ranks, per_node in suite.groups()
    )


@contextlib.contextmanager
def _destination(path: str | None) -> Iterator[TextIO]:
    if path is None or path == "-":
        yield sys.stdout
        return
    try:
        with open(path, "w", encoding="utf-8") as out:
            yield out
    except OSError as e:
        raise SpecError(f"-o {path}: cannot write ({e.strerror})") from None
