"""The one description of a batch job every template is rendered from: its allocation (nodes,
tasks per node, time), its site placeholders, and the hpcio launches (steps) it makes."""

from __future__ import annotations

import math
import re
from dataclasses import dataclass

from hpcio.errors import SpecError

#: Slurm's and PBS's common form of a time limit.
_TIME = re.compile(r"^(\d+):([0-5]\d):([0-5]\d)$")


@dataclass(frozen=True, slots=True)
class Step:
    """One MPI launch inside the job: `ranks` ranks, `ranks_per_node` to a node (None: as the
    launcher fills the nodes), running hpcio with `argv`."""

    ranks: int
    ranks_per_node: int | None
    argv: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class Job:
    """A batch job: `nodes` x `tasks_per_node` slots for `time` (HH:MM:SS), its launches
    (`steps`, in order) and where rank 0 appends the result documents (`results`)."""

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
            SpecError: no nodes or tasks, a time limit not in HH:MM:SS, a bad job name, or a
                step that needs more ranks (or more per node) than the job has.
        """
        if self.nodes < 1:
            raise SpecError(f"--nodes must be at least 1, got {self.nodes}")
        if self.tasks_per_node < 1:
            raise SpecError(f"--tasks-per-node must be at least 1, got {self.tasks_per_node}")
        if not _TIME.match(self.time):
            raise SpecError(f"--time takes HH:MM:SS (e.g. 00:30:00), got '{self.time}'")
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
