"""A Job as a batch script: Slurm's sbatch or PBS's qsub. The ranks are started by the job's
launcher (srun, or mpiexec on the job's nodes), so hpcio finds itself inside an MPI job and
runs there: it never starts an mpiexec of its own."""

from __future__ import annotations

import math
import shlex

from hpcio.jobs.model import Job, Step, hours_minutes_seconds

#: The launchers a Slurm job may start its ranks with.
SLURM_LAUNCHERS = ("srun", "mpiexec")


def slurm(job: Job, launcher: str = "srun") -> str:
    """An sbatch script for `job`; its ranks started by `launcher` (srun through PMIx, or the
    MPI's own mpiexec, which reads the allocation from Slurm)."""
    lines = [
        "#!/bin/bash",
        f"# {_about(job)}",
        f"#SBATCH --job-name={job.name}",
        f"#SBATCH --nodes={job.nodes}",
        f"#SBATCH --ntasks-per-node={job.tasks_per_node}",
        f"#SBATCH --time={job.time}",
        f"#SBATCH --output={job.name}-%j.out",
        *_site_directives(
            "#SBATCH",
            {"--partition=": ("PARTITION", job.partition), "--account=": ("ACCOUNT", job.account)},
        ),
        "set -euo pipefail",
        *_results_comment(job),
    ]
    for step in job.steps:
        lines.append(shlex.join([*_slurm_launcher(step, launcher), *job.hpcio, *step.argv]))
    return "\n".join(lines) + "\n"


def pbs(job: Job) -> str:
    """A qsub script for `job` (PBS Pro / OpenPBS select syntax); mpiexec starts the ranks on
    the hosts PBS wrote to $PBS_NODEFILE."""
    select = f"select={job.nodes}:ncpus={job.tasks_per_node}:mpiprocs={job.tasks_per_node}"
    lines = [
        "#!/bin/bash",
        f"# {_about(job)}",
        f"#PBS -N {job.name}",
        f"#PBS -l {select}",
        f"#PBS -l walltime={hours_minutes_seconds(job.time)}",
        "#PBS -j oe",
        *_site_directives(
            "#PBS", {"-q ": ("QUEUE", job.partition), "-A ": ("ACCOUNT", job.account)}
        ),
        "set -euo pipefail",
        'cd "$PBS_O_WORKDIR"',
        *_results_comment(job),
    ]
    for step in job.steps:
        launcher = ["mpiexec", "--hostfile", "$PBS_NODEFILE", *_mpiexec_layout(step)]
        # The node file is the shell's to expand: quoted, not shlex-quoted.
        words = shlex.join([*launcher, *job.hpcio, *step.argv])
        lines.append(words.replace("'$PBS_NODEFILE'", '"$PBS_NODEFILE"', 1))
    return "\n".join(lines) + "\n"


def _about(job: Job) -> str:
    return (
        f"hpcio job {job.name}: {job.nodes} node(s) x {job.tasks_per_node} tasks, "
        f"{len(job.steps)} launch(es); rendered by `hpcio template`"
    )


def _site_directives(prefix: str, settings: dict[str, tuple[str, str | None]]) -> list[str]:
    """Directives for the site settings given; the others as placeholders, commented out (a
    doubled '#' is not a directive) for the user to fill in where the site needs them."""
    given = [f"{prefix} {flag}{value}" for flag, (_, value) in settings.items() if value]
    missing = [f"#{prefix} {flag}{word}" for flag, (word, value) in settings.items() if not value]
    if missing:
        missing.insert(0, "# Fill in and uncomment where your site needs them:")
    return given + missing


def _results_comment(job: Job) -> list[str]:
    return [
        f"# Rank 0 appends the result documents to {job.results} (a relative path is from the",
        "# directory the job was submitted from). Copy it back and run `hpcio report` on it.",
    ]


def _slurm_launcher(step: Step, launcher: str) -> list[str]:
    if launcher == "mpiexec":
        return ["mpiexec", *_mpiexec_layout(step)]
    words = ["srun", "--mpi=pmix", f"--ntasks={step.ranks}"]
    if step.ranks_per_node:
        nodes = math.ceil(step.ranks / step.ranks_per_node)
        words += [f"--nodes={nodes}", f"--ntasks-per-node={step.ranks_per_node}"]
    return words


def _mpiexec_layout(step: Step) -> list[str]:
    words = ["-n", str(step.ranks)]
    if step.ranks_per_node:
        words += ["--map-by", f"ppr:{step.ranks_per_node}:node"]  # Open MPI's syntax
    return words
