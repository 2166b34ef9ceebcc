"""`hpcio template slurm` jobs submitted with sbatch to a real one-node Slurm cluster (Debian's
slurm-wlm and munge, tests/cluster/slurm.py): hpcio inside the allocation finds its ranks and
node from the job's launcher and runs there, as the template's command asked."""

from __future__ import annotations

import json
import os
import shlex
import socket
import sys

import pytest
import slurm

#: The job's nodes start hpcio from this checkout, as the ranks of the tests do.
HPCIO = f"{sys.executable} -m hpcio"


@pytest.fixture(scope="module")
def slurm_cluster(tmp_path_factory):
    """A running one-node cluster for this module; stopped by PID at its end."""
    reason = slurm.missing()
    if reason:
        pytest.skip(reason)
    if (os.cpu_count() or 1) < 2:
        pytest.skip("a 2-rank job needs 2 CPUs on the Slurm node")
    with slurm.running(tmp_path_factory.mktemp("slurm")) as cluster:
        yield cluster


def _job_env() -> dict[str, str]:
    # sbatch passes its environment to the job: PYTHONPATH (this checkout), and Open MPI's
    # consent to run as root for the mpiexec launcher; no variable of an enclosing MPI job.
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OMPI_", "PMI", "HPCIO_"))}
    return {**env, "OMPI_ALLOW_RUN_AS_ROOT": "1", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM": "1"}


def _submit(cluster, hpcio, tmp_path, *template_args, command):
    script = tmp_path / "job.sh"
    rendered = hpcio("template", "slurm", *template_args, "--hpcio", HPCIO, "-o", script,
                     "--", *command)  # fmt: skip
    assert rendered.returncode == 0, rendered.stderr
    job = cluster.wait(cluster.submit(script, cwd=tmp_path, env=_job_env()))
    output = "".join(p.read_text() for p in tmp_path.glob("hpcio-*.out"))
    assert (job.state, job.exit_code) == ("COMPLETED", "0:0"), output
    return output


@pytest.mark.parametrize("launcher", ["srun", "mpiexec"])
def test_a_run_job_records_the_ranks_and_node_of_its_allocation(
    slurm_cluster, hpcio, tmp_path, target_dir, file_url, read_documents, launcher
):
    target = file_url(target_dir)
    command = ["run", "--pattern", "sfmw", "--size-per-rank", "1MiB", "--transfer", "256KiB",
               "-i", "2", "--target", target, "-o", "results.jsonl", "-q"]  # fmt: skip
    _submit(slurm_cluster, hpcio, tmp_path, "--nodes", "1", "--tasks-per-node", "2",
            "--time", "00:05:00", "--launcher", launcher, command=command)  # fmt: skip

    # One document: the job's launcher started the ranks, and hpcio ran on them once.
    [document] = read_documents(tmp_path / "results.jsonl")
    assert document["status"] == "complete"
    assert (document["ranks"], document["nodes"], document["ranks_per_node"]) == (2, 1, 2)
    assert document["hosts"] == [socket.gethostname()]
    run = document["run"]
    assert run["workload"] == "sfmw"
    params = run["params"]
    assert (params["size_per_rank_bytes"], params["transfer_bytes"]) == (1 << 20, 256 << 10)
    assert run["iterations"] == 2 and run["ranks"] == 2
    assert document["command_line"] == ["hpcio", *command]


def test_a_suite_job_runs_each_group_of_points_in_its_own_launch(
    slurm_cluster, hpcio, tmp_path, target_dir, file_url, read_documents
):
    suite = tmp_path / "two-sizes.toml"
    suite.write_text(
        '[suite]\nname = "two-sizes"\n\n'
        f'[[target]]\nurl = "{file_url(target_dir)}"\n\n'
        '[grid]\npatterns = "mfmw"\nsizes = "1MiB"\nranks = [1, 2]\niterations = 1\n'
    )
    command = ["suite", "run", str(suite), "-o", "suite.jsonl"]
    output = _submit(slurm_cluster, hpcio, tmp_path, "--nodes", "1", "--tasks-per-node", "2",
                     command=command)  # fmt: skip

    documents = read_documents(tmp_path / "suite.jsonl")
    assert sorted(d["ranks"] for d in documents) == [1, 2], output
    assert all(d["status"] == "complete" and d["nodes"] == 1 for d in documents)


def test_the_rendered_launch_is_the_command_given(hpcio, tmp_path, target_dir, file_url):
    # No cluster needed: what the script would start, word for word.
    command = ["sweep", "--pattern", "sfmw,mfmw", "--sizes", "1MiB..4MiB", "--target",
               file_url(target_dir), "-o", "sweep results.jsonl"]  # fmt: skip
    rendered = hpcio("template", "slurm", "--nodes", "1", "--tasks-per-node", "2",
                     "--hpcio", HPCIO, "--", *command)  # fmt: skip
    assert rendered.returncode == 0, rendered.stderr
    launch = shlex.split(rendered.stdout.splitlines()[-1])
    assert launch[: launch.index("-m") + 2][-2:] == ["-m", "hpcio"]
    assert launch[launch.index("-m") + 2 :] == command
    assert json.dumps(launch).count("srun") == 1


def test_tasks_that_srun_starts_without_mpi_refuse_to_run_alone(
    slurm_cluster, tmp_path, target_dir, file_url
):
    # The template never renders this; a hand-written job might (srun --mpi=none is some
    # sites' default). Each task would otherwise run as a world of one.
    script = tmp_path / "no-mpi.sh"
    command = ["run", "--pattern", "mfmw", "--size-per-rank", "1MiB", "-q",
               "--target", file_url(target_dir), "-o", "results.jsonl"]  # fmt: skip
    script.write_text(
        "#!/bin/bash\n#SBATCH --nodes=1\n#SBATCH --ntasks-per-node=2\n"
        "#SBATCH --output=hpcio-%j.out\n"
        f"srun --mpi=none {HPCIO} {shlex.join(command)}\n"
    )
    job = slurm_cluster.wait(slurm_cluster.submit(script, cwd=tmp_path, env=_job_env()))
    output = "".join(p.read_text() for p in tmp_path.glob("hpcio-*.out"))
    assert job.state == "FAILED", output
    errors = [line for line in output.splitlines() if line.startswith("hpcio: error: ")]
    assert len(errors) == 2 and "srun started 2 tasks" in errors[0], output
    results = tmp_path / "results.jsonl"  # -o is probed (opened to append) before the launch
    assert not results.exists() or results.read_text() == ""
    assert list(target_dir.iterdir()) == []
