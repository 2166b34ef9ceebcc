"""A Job as a Kubernetes manifest: a Kubeflow MPIJob (kubeflow.org/v2beta1: a launcher pod
runs mpirun over worker pods that run sshd) or a JobSet (jobset.x-k8s.io/v1alpha2: the same
launcher and workers as two replicated jobs). Both mount one results volume (a
PersistentVolumeClaim, ReadWriteMany) where rank 0, on a worker, appends the documents."""

from __future__ import annotations

import json
import re
import shlex
from typing import Any

from hpcio.jobs.model import Job, Step, seconds

#: The manifests `hpcio template k8s --api` renders.
APIS = ("mpijob", "jobset")
#: What a worker runs: the image's sshd, which the launcher's mpirun reaches (as in the
#: mpi-operator's images).
_WORKER_COMMAND = ["/usr/sbin/sshd", "-De"]


def manifest(job: Job, *, api: str, image: str, claim: str, mount: str) -> str:
    """`job` as YAML for `api` (mpijob or jobset), its containers from `image`, the results
    volume the claim `claim` mounted at `mount` on every pod."""
    volume = {"name": "results", "persistentVolumeClaim": {"claimName": claim}}
    mounts = [{"name": "results", "mountPath": mount}]
    render = _mpijob if api == "mpijob" else _jobset
    return to_yaml(render(job, image, volume, mounts))


def _mpijob(job: Job, image: str, volume: dict, mounts: list) -> dict:
    def pod(name: str, command: list[str], cpus: int | None = None) -> dict:
        container = _container(name, image, command, mounts, cpus)
        return {"spec": {"containers": [container], "volumes": [volume]}}

    launches = [_mpirun(job, step) for step in job.steps]
    launcher = launches[0] if len(launches) == 1 else ["bash", "-c", _script(launches)]
    return {
        "apiVersion": "kubeflow.org/v2beta1",
        "kind": "MPIJob",
        "metadata": {"name": job.name},
        "spec": {
            "slotsPerWorker": job.tasks_per_node,
            "runPolicy": {
                "cleanPodPolicy": "Running",
                "activeDeadlineSeconds": seconds(job.time),
            },
            "mpiImplementation": "OpenMPI",
            "mpiReplicaSpecs": {
                "Launcher": {"replicas": 1, "template": pod("launcher", launcher)},
                "Worker": {
                    "replicas": job.nodes,
                    "template": pod("worker", _WORKER_COMMAND, job.tasks_per_node),
                },
            },
        },
    }


def _jobset(job: Job, image: str, volume: dict, mounts: list) -> dict:
    # JobSet names pods <jobset>-<replicated job>-<job index>-<pod index> under a headless
    # service named after the jobset: the launcher writes its host file from those names.
    hosts = " ".join(f"{job.name}-workers-0-{i}.{job.name}" for i in range(job.nodes))
    hostfile = (
        f'for host in {hosts}; do echo "$host slots={job.tasks_per_node}"; done > /tmp/hostfile'
    )
    launches = [_mpirun(job, step, hostfile="/tmp/hostfile") for step in job.steps]

    def replicated(name: str, pods: int, command: list[str], cpus: int | None = None) -> dict:
        container = _container(name, image, command, mounts, cpus)
        spec: dict[str, Any] = {"parallelism": pods, "completions": pods, "backoffLimit": 0}
        if name == "launcher":
            spec["activeDeadlineSeconds"] = seconds(job.time)
        spec["template"] = {"spec": {"restartPolicy": "Never", "containers": [container],
                                     "volumes": [volume]}}  # fmt: skip
        return {"name": name, "replicas": 1, "template": {"spec": spec}}

    return {
        "apiVersion": "jobset.x-k8s.io/v1alpha2",
        "kind": "JobSet",
        "metadata": {"name": job.name},
        "spec": {
            "network": {"enableDNSHostnames": True},
            # The workers' sshd never ends: the job is done when the launcher is.
            "successPolicy": {"operator": "All", "targetReplicatedJobs": ["launcher"]},
            "replicatedJobs": [
                replicated("workers", job.nodes, _WORKER_COMMAND, job.tasks_per_node),
                replicated("launcher", 1, ["bash", "-c", _script(launches, first=hostfile)]),
            ],
        },
    }


def _container(name: str, image: str, command: list[str], mounts: list, cpus: int | None) -> dict:
    container: dict[str, Any] = {"name": name, "image": image, "command": command}
    if cpus:
        container["resources"] = {"limits": {"cpu": cpus}}
    container["volumeMounts"] = mounts
    return container


def _mpirun(job: Job, step: Step, hostfile: str | None = None) -> list[str]:
    words = ["mpirun"] + (["--hostfile", hostfile] if hostfile else []) + ["-n", str(step.ranks)]
    if step.ranks_per_node:
        words += ["--map-by", f"ppr:{step.ranks_per_node}:node"]
    return [*words, *job.hpcio, *step.argv]


def _script(launches: list[list[str]], first: str = "") -> str:
    return "set -euo pipefail\n" + (first + "\n" if first else "") + _lines(launches)


def _lines(launches: list[list[str]]) -> str:
    return "".join(shlex.join(words) + "\n" for words in launches)


_PLAIN_KEY = re.compile(r"^[A-Za-z][A-Za-z0-9_.-]*$")


def to_yaml(value: object) -> str:
    """Block-style YAML of dicts, lists, strings, ints and bools; every string is written as a
    JSON string, which YAML reads as the same double-quoted scalar (YAML is a superset of
    JSON), so no value can be taken for a number, a boolean or a comment."""
    return "\n".join(_yaml_lines(value, 0)) + "\n"


def _yaml_lines(value: object, indent: int) -> list[str]:
    pad = " " * indent
    if isinstance(value, dict):
        lines = []
        for key, item in value.items():
            name = key if _PLAIN_KEY.match(key) else json.dumps(key)
            if isinstance(item, dict | list) and item:
                lines.append(f"{pad}{name}:")
                lines += _yaml_lines(item, indent + 2)
            else:
                lines.append(f"{pad}{name}: {_scalar(item)}")
        return lines
    if isinstance(value, list):
        lines = []
        for item in value:
            if isinstance(item, dict | list) and item:
                nested = _yaml_lines(item, indent + 2)
                lines.append(f"{pad}- {nested[0].lstrip()}")
                lines += nested[1:]
            else:
                lines.append(f"{pad}- {_scalar(item)}")
        return lines
    return [pad + _scalar(value)]


def _scalar(value: object) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, dict | list):
        return "{}" if isinstance(value, dict) else "[]"
    return json.dumps(str(value))
