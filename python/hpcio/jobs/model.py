"""The one description of a batch job every template is rendered from: its allocation (nodes,
tasks per node, time), its site placeholders, and the hpcio launches (steps) it makes."""

from __future__ import annotations

import math
import re
from dataclasses import dataclass

from hpcio.errors import SpecError

#: A time limit: HH:MM:SS (Slurm's, PBS's), or Slurm's D-HH:MM:SS.
_TIME = re.compile(r"^(?:(\d+)-)?(\d+):([0-5]\d):([0-5]\d)$")
#: A partition, queue or account name as schedulers take them: it is written into a
#: directive line, so nothing a shell or the scheduler's parser would read otherwise.
_SITE_NAME = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_.@-]{0,63}")


def seconds(time: str) -> int:
    """Seconds of a time limit already checked by Job.check (HH:MM:SS or D-HH:MM:SS)."""
    found = _TIME.match(time)
    if found is None:
        raise SpecError(f"--time takes HH:MM:SS or D-HH:MM:SS (e.g. 00:30:00), got '{time}'")
    days, hours, minutes, secs = (int(part or 0) for part in found.groups())
    return ((days * 24 + hours) * 60 + minutes) * 60 + secs


def hours_minutes_seconds(time: str) -> str:
    """A time limit as HH:MM:SS (hours past 24 when it has days), the form PBS takes."""
    total = seconds(time)
    return f"{total // 3600:02d}:{total // 60 % 60:02d}:{total % 60:02d}"


@dataclass(frozen=True, slots=True)
class Step:
    """One MPI launch inside the job: `ranks` ranks, `ranks_per_node` to a node (None: as the
    launcher fills the nodes), running hpcio with `argv`."""

    ranks: int
    ranks_per_node: int | None
    argv: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class Job:
    """A batch job: `nodes` x `tasks_per_node` slots for `time` (HH:MM:SS or D-HH:MM:SS), its
    launches (`steps`, in order) and where rank 0 appends the result documents (`results`)."""

    name: str
    nodes: int
    tasks_per_node: int
    time: str
    steps: tuple[Step, ...]
    results: str
    #: The program words that start hpcio on the nodes ("hpcio", or "python -m hpcio").
    hpcio: tuple[str, ...] = ("hpcio",)
    #: Site settings; None renders a placeholder to fill in.
    partition: str | None = None
    account: str | None = None

    @property
    def slots(self) -> int:
        return self.nodes * self.tasks_per_node

    def check(self) -> Job:
        """This job, if it can be submitted as described.

        Raises:
            SpecError: no nodes or tasks, a time limit not in HH:MM:SS (or D-HH:MM:SS) or of
                no time, a bad job name, partition or account, or a step that needs more ranks
                (or more per node) than the job has.
        """
        if self.nodes < 1:
            raise SpecError(f"--nodes must be at least 1, got {self.nodes}")
        if self.tasks_per_node < 1:
            raise SpecError(f"--tasks-per-node must be at least 1, got {self.tasks_per_node}")
        if seconds(self.time) == 0:
            raise SpecError(f"--time {self.time} gives the job no time: e.g. --time 00:30:00")
        for flag, name in (("--partition/--queue", self.partition), ("--account", self.account)):
            if name is not None and not _SITE_NAME.fullmatch(name):
                raise SpecError(
                    f"{flag} '{name}': use letters, digits and '_', '.', '-', '@' (at most 64 "
                    "characters), as the scheduler names it"
                )
        if not re.fullmatch(r"[a-z0-9]([a-z0-9-]{0,50}[a-z0-9])?", self.name):
            raise SpecError(
                f"--job-name '{self.name}': use lower-case letters, digits and '-' (a Kubernetes "
                "name), at most 52 characters"
            )
        for step in self.steps:
            if step.ranks > self.slots:
                raise SpecError(
                    f"the command needs {step.ranks} ranks but the job has {self.nodes} node(s) "
                    f"x {self.tasks_per_node} tasks = {self.slots}"
                )
            if step.ranks_per_node and step.ranks_per_node > self.tasks_per_node:
                raise SpecError(
                    f"the command places {step.ranks_per_node} ranks per node but the job has "
                    f"{self.tasks_per_node} tasks per node"
                )
            if step.ranks_per_node and math.ceil(step.ranks / step.ranks_per_node) > self.nodes:
                raise SpecError(
                    f"the command places {step.ranks} ranks {step.ranks_per_node} per node, on "
                    f"{math.ceil(step.ranks / step.ranks_per_node)} nodes, but the job has "
                    f"{self.nodes}"
                )
        return self
