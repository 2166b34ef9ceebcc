"""`hpcio template`: the jobs it renders parse as what they are (bash -n for the scripts, YAML
for the manifests), ask for what was given, and start exactly the hpcio command given, which
hpcio's own parser takes back. No scheduler is needed (test_slurm_jobs.py submits to one)."""

from __future__ import annotations

import shlex
import subprocess

import pytest
import yaml
from hpcio import cli
from hpcio.jobs.k8s import to_yaml

TARGET = "file:///tmp"
RUN = ["run", "--pattern", "sfmw", "--size-per-rank", "4MiB", "--transfer", "1MiB",
       "--target", TARGET, "-o", "results dir/r.jsonl"]  # fmt: skip
K8S_RUN = [*RUN[:-1], "/results/r.jsonl"]
JOB = ["--nodes", "2", "--tasks-per-node", "4", "--time", "00:30:00"]


def _render(hpcio, kind, *job, command):
    done = hpcio("template", kind, *job, "--", *command)
    assert done.returncode == 0, done.stderr
    assert done.stderr == ""
    return done.stdout


def _bash_syntax_ok(script: str) -> None:
    checked = subprocess.run(["bash", "-n"], input=script, capture_output=True, text=True)
    assert checked.returncode == 0, checked.stderr


def _hpcio_words(launch: list[str]) -> list[str]:
    """The hpcio command line of a launch: the words after the program `hpcio`."""
    return launch[launch.index("hpcio") + 1 :]


def _round_trip(words: list[str], given: list[str]) -> None:
    assert words == given
    assert cli.parse_command(words) == cli.parse_command(given)


def test_slurm_script_asks_for_the_allocation_and_starts_the_command_with_srun(hpcio):
    script = _render(hpcio, "slurm", *JOB, "--partition", "short", command=RUN)
    _bash_syntax_ok(script)
    lines = script.splitlines()
    for directive in ("--nodes=2", "--ntasks-per-node=4", "--time=00:30:00",
                      "--partition=short", "--job-name=hpcio"):  # fmt: skip
        assert f"#SBATCH {directive}" in lines
    # No account given: a placeholder Slurm does not read as a directive.
    assert "##SBATCH --account=ACCOUNT" in lines
    assert not any(line.startswith("#SBATCH --account") for line in lines)
    [launch] = [shlex.split(line) for line in lines if line.startswith("srun ")]
    assert launch[:3] == ["srun", "--mpi=pmix", "--ntasks=8"]
    _round_trip(_hpcio_words(launch), RUN)


def test_slurm_script_with_mpiexec_starts_the_ranks_itself_not_hpcio(hpcio):
    script = _render(hpcio, "slurm", *JOB, "--launcher", "mpiexec", command=RUN)
    _bash_syntax_ok(script)
    [launch] = [shlex.split(line) for line in script.splitlines() if line.startswith("mpiexec")]
    assert launch[:3] == ["mpiexec", "-n", "8"]
    # The ranks are the job's: hpcio is not asked for -n and so never starts mpiexec again.
    _round_trip(_hpcio_words(launch), RUN)


def test_pbs_script_selects_the_nodes_and_runs_mpiexec_on_the_node_file(hpcio):
    script = _render(hpcio, "pbs", *JOB, "--queue", "workq", command=RUN)
    _bash_syntax_ok(script)
    lines = script.splitlines()
    for directive in ("-l select=2:ncpus=4:mpiprocs=4", "-l walltime=00:30:00", "-q workq"):
        assert f"#PBS {directive}" in lines
    assert "##PBS -A ACCOUNT" in lines
    assert 'cd "$PBS_O_WORKDIR"' in lines
    [line] = [line for line in lines if line.startswith("mpiexec")]
    assert line.startswith('mpiexec --hostfile "$PBS_NODEFILE" -n 8 ')
    _round_trip(_hpcio_words(shlex.split(line)), RUN)


def test_mpijob_has_a_launcher_and_a_worker_per_node_with_the_results_volume(hpcio):
    manifest = yaml.safe_load(
        _render(hpcio, "k8s", *JOB, "--image", "example.org/hpcio:1", command=K8S_RUN)
    )
    assert (manifest["apiVersion"], manifest["kind"]) == ("kubeflow.org/v2beta1", "MPIJob")
    spec = manifest["spec"]
    assert spec["slotsPerWorker"] == 4
    assert spec["runPolicy"]["activeDeadlineSeconds"] == 30 * 60
    replicas = spec["mpiReplicaSpecs"]
    assert (replicas["Launcher"]["replicas"], replicas["Worker"]["replicas"]) == (1, 2)
    for role in ("Launcher", "Worker"):
        pod = replicas[role]["template"]["spec"]
        [container] = pod["containers"]
        assert container["image"] == "example.org/hpcio:1"
        assert container["volumeMounts"] == [{"name": "results", "mountPath": "/results"}]
        assert pod["volumes"][0]["persistentVolumeClaim"] == {"claimName": "hpcio-results"}
    launch = replicas["Launcher"]["template"]["spec"]["containers"][0]["command"]
    assert launch[:3] == ["mpirun", "-n", "8"]
    _round_trip(_hpcio_words(launch), K8S_RUN)


def test_jobset_launcher_writes_a_host_file_of_the_worker_pods_and_runs_the_command(hpcio):
    manifest = yaml.safe_load(_render(hpcio, "k8s", *JOB, "--api", "jobset", command=K8S_RUN))
    assert (manifest["apiVersion"], manifest["kind"]) == ("jobset.x-k8s.io/v1alpha2", "JobSet")
    spec = manifest["spec"]
    assert spec["successPolicy"]["targetReplicatedJobs"] == ["launcher"]
    jobs = {job["name"]: job["template"]["spec"] for job in spec["replicatedJobs"]}
    assert jobs["workers"]["parallelism"] == jobs["workers"]["completions"] == 2
    [container] = jobs["launcher"]["template"]["spec"]["containers"]
    assert container["command"][:2] == ["bash", "-c"]
    script = container["command"][2]
    _bash_syntax_ok(script)
    assert "hpcio-workers-0-0.hpcio hpcio-workers-0-1.hpcio" in script
    [line] = [line for line in script.splitlines() if line.startswith("mpirun")]
    launch = shlex.split(line)
    assert launch[:5] == ["mpirun", "--hostfile", "/tmp/hostfile", "-n", "8"]
    _round_trip(_hpcio_words(launch), K8S_RUN)


def test_a_suite_job_has_one_placed_launch_per_layout(hpcio, tmp_path):
    suite = tmp_path / "s.toml"
    suite.write_text(
        f'[suite]\nname = "s"\n[[target]]\nurl = "{TARGET}"\n'
        '[grid]\npatterns = "mfmw"\nsizes = "1MiB"\nranks = [2, 4]\nranks_per_node = 2\n'
    )
    command = ["suite", "run", str(suite), "-o", "s.jsonl"]
    script = _render(hpcio, "slurm", *JOB, command=command)
    launches = [shlex.split(line) for line in script.splitlines() if line.startswith("srun")]
    assert [launch[:5] for launch in launches] == [
        ["srun", "--mpi=pmix", "--ntasks=2", "--nodes=1", "--ntasks-per-node=2"],
        ["srun", "--mpi=pmix", "--ntasks=4", "--nodes=2", "--ntasks-per-node=2"],
    ]
    # Each launch runs its own group of points (hpcio suite run's own --group).
    for launch, group in zip(launches, ("2:2", "4:2"), strict=True):
        _round_trip(_hpcio_words(launch), [*command, "--group", group])


def test_a_suite_layout_the_job_cannot_place_is_refused(hpcio, error_line):
    # The shipped nodes suite places 20 ranks 1, 2 and 4 to a node: 20 nodes for the first.
    done = hpcio("template", "slurm", "--nodes", "5", "--tasks-per-node", "4", "--",
                 "suite", "run", "nodes", "--target", TARGET, "-o", "n.jsonl")  # fmt: skip
    assert done.returncode == 2
    assert "20 ranks 1 per node, on 20 nodes, but the job has 5" in error_line(done)


def test_the_hpcio_program_words_are_the_ones_given(hpcio, tmp_path):
    output = tmp_path / "job.sh"
    done = hpcio("template", "slurm", *JOB, "--hpcio", "/opt/venv/bin/python -m hpcio",
                 "-o", output, "--", *RUN)  # fmt: skip
    assert (done.returncode, done.stdout) == (0, "")
    [line] = [line for line in output.read_text().splitlines() if line.startswith("srun")]
    launch = shlex.split(line)
    start = launch.index("/opt/venv/bin/python")
    assert launch[start : start + 3] == ["/opt/venv/bin/python", "-m", "hpcio"]
    assert launch[start + 3 :] == RUN


@pytest.mark.parametrize(
    "text",
    ["yes", "no", "1e3", "0x10", "~", "null", "#not a comment", "a: b", "- x", "é ü",
     "line\nbreak", 'quote"s', "{x}", "", "*alias", "&anchor", "%tag", "@", "`"],
)  # fmt: skip
def test_yaml_strings_read_back_as_the_same_strings(text):
    value = {"key": text, "list": [text, {"nested": text}], "n": 3, "flag": True, "empty": []}
    assert yaml.safe_load(to_yaml(value)) == value
