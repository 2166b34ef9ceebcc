"""What issue 25 made right outside the hostile table: Slurm's D-HH:MM:SS time limits, PBS's
walltime in hours, checkpoint's part limit said in its own flag, --plots on a path that cannot
be a directory."""

from __future__ import annotations

import os

import darshan
import pytest
from hpcio.errors import SpecError
from hpcio.jobs.model import Job, hours_minutes_seconds, seconds

JOB = ("--nodes", "1", "--tasks-per-node", "2")
COMMAND = ("--", "run", "--pattern", "sfmw", "--size-per-rank", "1MiB", "--target",
           "file:///scratch/x", "-n", "2", "-o", "/results/r.jsonl")  # fmt: skip
DXT = os.path.join(os.path.dirname(darshan.__file__), "tests", "input", "sample-dxt-simple.darshan")


@pytest.mark.parametrize(
    ("time", "total"), [("00:00:01", 1), ("01:30:00", 5400), ("2-00:00:00", 172800),
                        ("1-01:00:30", 90030), ("100:00:00", 360000)],
)  # fmt: skip
def test_time_limits(time, total):
    assert seconds(time) == total
    job = Job(name="hpcio", nodes=1, tasks_per_node=1, time=time, steps=(), results="")
    assert job.check() is job


def test_no_time_is_refused():
    job = Job(name="hpcio", nodes=1, tasks_per_node=1, time="0-00:00:00", steps=(), results="")
    with pytest.raises(SpecError, match="gives the job no time"):
        job.check()


def test_days_in_each_kind_of_job(hpcio):
    done = hpcio("template", "slurm", *JOB, "--time", "2-00:00:00", *COMMAND)
    assert done.returncode == 0, done.stderr
    assert "#SBATCH --time=2-00:00:00" in done.stdout
    done = hpcio("template", "pbs", *JOB, "--time", "2-00:00:00", *COMMAND)
    assert "#PBS -l walltime=48:00:00" in done.stdout
    assert hours_minutes_seconds("1-00:00:01") == "24:00:01"
    done = hpcio("template", "k8s", *JOB, "--time", "1-00:00:01", *COMMAND)
    assert "activeDeadlineSeconds: 86401" in done.stdout


def test_a_partition_with_a_shell_command_is_refused(hpcio, error_line):
    done = hpcio("template", "slurm", *JOB, "--partition", "p; rm -rf ~", *COMMAND)
    assert done.returncode == 2
    assert error_line(done).startswith("hpcio: error: --partition/--queue 'p; rm -rf ~': use ")
    assert done.stdout == ""


def test_checkpoint_parts_are_said_as_transfer(hpcio_in_process, error_line):
    done = hpcio_in_process(
        "checkpoint", "llama3-8b", "--target", "s3://bucket/p", "-n", "8", "--transfer", "1MiB",
        "--scale", "100", "--store-option", "endpoint=http://127.0.0.1:9", "--store-option",
        "aws_access_key_id=a", "--store-option", "aws_secret_access_key=b", "--dry-run",
        stop_at_launch=True,
    )  # fmt: skip
    assert done is not None and done.returncode == 2
    assert error_line(done) == (
        "hpcio: error: s3: multipart parts must be at least 5 MiB (except the last); --transfer "
        "is 1 MiB: use --transfer 8MiB or more"
    )


def test_darshan_plots_where_no_directory_can_be(hpcio, error_line):
    done = hpcio("darshan", "summary", DXT, "--plots", "/proc/hpcio-no-such")
    assert done.returncode == 2
    assert error_line(done) == (
        "hpcio: error: --plots /proc/hpcio-no-such: cannot make the directory: No such file or "
        "directory"
    )
    assert done.stdout == ""
