"""What the launching hpcio hands its ranks, and where a resumed sweep or suite starts; no MPI
(tests/mpi/test_interrupts.py and test_suites.py launch real jobs)."""

import json
import os

import pytest
from hpcio.commands.run import store_options
from hpcio.runner import launch
from hpcio.spec.model import RunSpec
from hpcio.spec.sweep import resume
from hpcio.spec.target import TargetSpec


def test_store_options_leave_the_ranks_command_line():
    argv = ["run", "--store-option", "secret_access_key=s3cr3t", "-n", "2",
            "--store-option=region=eu", "--target", "s3://b/p"]  # fmt: skip
    kept, pairs = launch.argv_without_store_options(argv)
    assert kept == ["run", "-n", "2", "--target", "s3://b/p"]
    assert pairs == ["secret_access_key=s3cr3t", "region=eu"]


def test_ranks_take_the_pairs_from_their_environment_and_their_own_win(monkeypatch):
    monkeypatch.setenv(launch.STORE_OPTIONS_VARIABLE, json.dumps(["region=eu", "token=a=b"]))
    assert launch.inherited_store_options() == {"region": "eu", "token": "a=b"}
    assert store_options(["region=us"]) == {"region": "us", "token": "a=b"}


def test_no_pairs_outside_a_launch(monkeypatch):
    monkeypatch.delenv(launch.STORE_OPTIONS_VARIABLE, raising=False)
    assert launch.inherited_store_options() == {}


@pytest.fixture
def finished(tmp_path, hpcio):
    """A results file with one complete mfmw document of 256 KiB per rank."""
    target = tmp_path / "target"
    target.mkdir()
    output = tmp_path / "results.jsonl"
    more = ("--size-per-rank", "256KiB", "--transfer", "256KiB", "-q", "-o", output)
    done = hpcio("run", "--pattern", "mfmw", "--target", f"file://{target}", *more)
    assert done.returncode == 0, done.stderr
    return output


def test_resume_skips_what_is_done_and_takes_back_what_an_older_hpcio_kept_aside(finished):
    record = json.loads(finished.read_text())
    target = TargetSpec.from_url(record["run"]["target"]["url"])
    done = RunSpec.build("mfmw", target=target, size_per_rank_bytes=256 << 10,
                         transfer_bytes=256 << 10)  # fmt: skip
    todo = RunSpec.build("mfmw", target=target, size_per_rank_bytes=512 << 10,
                         transfer_bytes=256 << 10)  # fmt: skip
    assert resume([done, todo], str(finished)) == [todo]

    # hpcio 0.1 kept a stopped run's finished iterations in FILE.partial.
    finished.with_name(finished.name + ".partial").write_text(
        json.dumps(dict(record, status="interrupted"))
    )
    assert resume([done, todo], str(finished)) == [todo]
    statuses = [json.loads(line)["status"] for line in finished.read_text().splitlines()]
    assert statuses == ["complete", "interrupted"]
    assert not finished.with_name(finished.name + ".partial").exists()


SUITE = """\
[[target]]
url = "file:///nowhere"

[grid]
patterns = "mfmw"
sizes = ["64KiB"]
ranks = 2
transfer = "64KiB"
"""


@pytest.mark.parametrize("command", ["run", "suite"])
def test_a_launcher_killed_by_a_signal_is_said_alike_by_run_and_suite(
    hpcio, error_line, target_dir, tmp_path, command
):
    """mpiexec itself dies from SIGKILL (exit code -9 to its parent), here at once."""
    launcher = tmp_path / "dies"
    launcher.write_text("#!/bin/sh\nkill -9 $$\n")
    launcher.chmod(0o755)
    suite = tmp_path / "s.toml"
    suite.write_text(SUITE)
    url, output = f"file://{target_dir}", tmp_path / "r.jsonl"
    args = {
        "run": (
            "run",
            "--pattern",
            "mfmw",
            "-n",
            "2",
            "--size-per-rank",
            "64KiB",
            "--transfer",
            "64KiB",
        ),
        "suite": ("suite", "run", suite),
    }[command]
    done = hpcio(*args, "--target", url, "-o", output, env={"HPCIO_MPIEXEC": str(launcher)})
    assert done.returncode != 0
    said = done.stderr.splitlines()
    assert said[0] == "hpcio: error: the MPI job failed: a rank was killed (signal 9)", said
    assert said[1:] == [f"hpcio: no iteration had finished; nothing added to {output}"]
    assert list(target_dir.iterdir()) == []


def test_hpcio_mpiexec_is_split_as_a_shell_splits_it(monkeypatch):
    from hpcio.runner import mpiexec

    monkeypatch.setenv("HPCIO_MPIEXEC", "mpiexec --mca plm_rsh_agent 'ssh -F /tmp/my cfg'")
    monkeypatch.setattr(mpiexec, "_is_open_mpi", lambda _: False)
    monkeypatch.setattr(mpiexec.shutil, "which", lambda name: f"/usr/bin/{name}")
    command = mpiexec.launch_command(2, ["run"])
    assert command[:4] == ["mpiexec", "--mca", "plm_rsh_agent", "ssh -F /tmp/my cfg"]


def test_an_open_mpi_launcher_hands_the_ranks_on_other_nodes_hpcios_variables(monkeypatch):
    """Open MPI gives ranks on other nodes only the variables named by -x: without the lock's
    token a rank 0 there finds the target held by its own launcher; without the store's
    credentials the store refuses them."""
    from hpcio.runner import mpiexec

    for name in [n for n in os.environ if n.startswith(("HPCIO_", "AWS_", "AZURE_", "GOOGLE_"))]:
        monkeypatch.delenv(name)
    monkeypatch.setenv("HPCIO_MPIEXEC", "mpiexec --hostfile hosts")
    monkeypatch.setenv("HPCIO_LOCK_TOKEN", "t")
    monkeypatch.setenv("HPCIO_JOB", "j")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "s3cr3t")
    monkeypatch.setenv("AZURE_STORAGE_ACCOUNT_KEY", "k3y")
    monkeypatch.setattr(mpiexec, "_is_open_mpi", lambda _: True)
    monkeypatch.setattr(mpiexec.shutil, "which", lambda name: f"/usr/bin/{name}")
    command = mpiexec.launch_command(2, ["run"])
    handed = [command[i + 1] for i, word in enumerate(command) if word == "-x"]
    assert handed == ["AWS_SECRET_ACCESS_KEY", "AZURE_STORAGE_ACCOUNT_KEY", "HPCIO_JOB",
                      "HPCIO_LAUNCHED", "HPCIO_LOCK_TOKEN"]  # fmt: skip
    assert not {"t", "j", "s3cr3t", "k3y"} & set(command)  # names only, never values


def test_unpaired_quotes_in_hpcio_mpiexec_are_one_clear_error(monkeypatch):
    from hpcio.errors import LaunchError
    from hpcio.runner import mpiexec

    monkeypatch.setenv("HPCIO_MPIEXEC", "mpiexec --mca plm_rsh_agent 'ssh -F cfg")
    with pytest.raises(LaunchError, match="HPCIO_MPIEXEC cannot be split into words"):
        mpiexec.launch_command(2, ["run"])


@pytest.mark.parametrize("ranks", [(), ("-n", "2")])
def test_one_of_several_srun_tasks_without_mpi_refuses_to_run_alone(
    hpcio_process, error_line, tmp_path, ranks
):
    # `srun --mpi=none hpcio run ...` in a 2-task step: without the refusal each task ran as a
    # world of one (or, with -n 2, started an mpiexec of its own) and appended its own document.
    target = tmp_path / "target"
    target.mkdir()
    output = tmp_path / "results.jsonl"
    done = hpcio_process(
        "run", "--pattern", "mfmw", "--size-per-rank", "1MiB", "-q", "--target",
        f"file://{target}", "-o", output, *ranks,
        env={"SLURM_STEP_NUM_TASKS": "2", "SLURM_PROCID": "0"},
    )  # fmt: skip
    assert done.returncode == 2
    assert "srun started 2 tasks but no MPI job reached them" in error_line(done)
    assert not output.exists() or output.read_text() == ""
    assert list(target.iterdir()) == []
