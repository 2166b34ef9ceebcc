"""The hostile-input suite (issue 25): every invocation of tests/hostile_cases.py is refused
with exit 2 and one error line, without a traceback, and leaves nothing behind: no -o file, no
file in the target, no lock, no change to the files it was given, no process."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from hostile_cases import CASES

#: Commands that only read or write their own output: in pytest's process (conftest).
_CHECKED_HERE = {"run", "sweep", "suite", "profile", "report", "compare", "cost", "template",
                 "trace", "darshan", "completion", "man"}  # fmt: skip
#: Commands refused before they launch anything: in pytest's process, stopped at a launch.
_STOPPED_AT_LAUNCH = {"train", "checkpoint", "replay", "tune"}
#: Commands refused in pytest's process until they would probe the machine (conftest's
#: CHECKED_UNTIL_PROBE_COMMANDS); the cases refused after that, as a real process.
_CHECKED_UNTIL_PROBE = {"env"}
#: Commands that start no MPI, set no signal handler and leave no atexit hook (clean deletes
#: hpcio's own names under its target, here an empty directory): wholly in pytest's process.
_WHOLLY_HERE = {"clean"}


_DATA = Path(__file__).parent / "data"


def _children() -> set[str]:
    found: set[str] = set()
    for task in Path("/proc/self/task").iterdir():
        with open(task / "children") as listed:
            found.update(listed.read().split())
    return found


def _params():
    for command, cases in CASES.items():
        for number, case in enumerate(cases):
            yield pytest.param(case, id=f"{command}-{number}")


@pytest.fixture
def places(tmp_path: Path) -> dict[str, str]:
    (tmp_path / "target").mkdir()
    (tmp_path / "empty-dir").mkdir()
    (tmp_path / "plain.txt").write_text("not what hpcio reads\n")
    (tmp_path / "empty.jsonl").write_bytes(b"")
    (tmp_path / "text.jsonl").write_text("{this is not json\n")
    (tmp_path / "results.jsonl").write_bytes((_DATA / "v1" / "file-1rank.jsonl").read_bytes())
    return {
        "T": str(tmp_path / "target"),
        "O": str(tmp_path / "out.jsonl"),
        "F": str(tmp_path / "plain.txt"),
        "E": str(tmp_path / "empty.jsonl"),
        "J": str(tmp_path / "text.jsonl"),
        "D": str(tmp_path / "empty-dir"),
        "R": str(tmp_path / "results.jsonl"),
    }


def _snapshot(root: Path) -> dict[str, bytes | None]:
    return {
        str(path.relative_to(root)): path.read_bytes() if path.is_file() else None
        for path in sorted(root.rglob("*"))
    }


#: Cases that also run as a real `python -m hpcio` process, a few of the commands refused in
#: pytest's process above: the exit code, the lines and nothing left, as a user gets them
#: (tests/test_cli_errors.py compares the two ways on another sample).
PROCESS_SAMPLE = {"run": (0, 80), "report": (0,), "template": (0,), "darshan": (0,),
                  "completion": (0,), "train": (5,), "clean": (0,)}  # fmt: skip


def _sample():
    for command, numbers in PROCESS_SAMPLE.items():
        for number in numbers:
            yield pytest.param(CASES[command][number], id=f"{command}-{number}")


@pytest.mark.parametrize("case", list(_params()))
def test_hostile_invocation_is_refused_cleanly(
    case, places, tmp_path, hpcio, hpcio_in_process, hpcio_process
):
    _refused_cleanly(case, places, tmp_path, hpcio, hpcio_in_process, hpcio_process)


@pytest.mark.parametrize("case", list(_sample()))
def test_a_sample_is_refused_cleanly_by_a_real_process(case, places, tmp_path, hpcio_process):
    _refused_cleanly(case, places, tmp_path, hpcio_process, hpcio_process, hpcio_process)


def _refused_cleanly(case, places, tmp_path, hpcio, hpcio_in_process, hpcio_process):
    args = [word.format(**places) for word in case]
    before, children = _snapshot(tmp_path), _children()
    command = args[0]
    if hpcio is hpcio_process:
        done = hpcio_process(*args)
    elif command in _CHECKED_HERE | _CHECKED_UNTIL_PROBE:
        done = hpcio(*args)
    elif command in _WHOLLY_HERE:
        done = hpcio_in_process(*args)
    elif command in _STOPPED_AT_LAUNCH:
        done = hpcio_in_process(*args, stop_at_launch=True)
        assert done is not None, f"hpcio {' '.join(args)} passed its checks: it would run"
    else:
        done = hpcio_process(*args)
    assert done.returncode == 2, (done.returncode, done.stderr)
    assert "Traceback" not in done.stderr, done.stderr
    lines = [line for line in done.stderr.splitlines() if line.strip()]
    errors = [line for line in lines if "error:" in line]
    assert len(errors) == 1 and lines[-1] == errors[0], done.stderr
    assert errors[0].startswith("hpcio"), done.stderr
    assert all(line.startswith(("usage:", " ")) for line in lines[:-1]), done.stderr
    assert _snapshot(tmp_path) == before, "the refused command left or changed files"
    assert not os.path.exists(places["O"])
    assert _children() <= children, "the refused command left a process"


def test_the_catalogue_covers_every_command_with_300_cases():
    from hostile_cases import count
    from hpcio import cli

    counted = count()
    assert sum(counted.values()) >= 300
    assert set(counted) == set(cli.COMMANDS)


def _error(done) -> str:
    assert done.returncode == 2, done.stderr
    (line,) = [line for line in done.stderr.splitlines() if line.strip()]
    return line


def test_a_negative_size_is_named_not_taken_for_an_option(hpcio, target_dir):
    done = hpcio("run", "--pattern", "mfmw", "--target", f"file://{target_dir}",
                 "--size-per-rank", "-1MiB")  # fmt: skip
    assert _error(done) == (
        "hpcio: error: --size-per-rank: '-1MiB' is not a size; use a number with B, KiB, MiB, "
        "GiB or TiB"
    )


def test_a_dry_run_says_the_runs_own_no(hpcio, target_dir, tmp_path):
    run = ("run", "--pattern", "mfmw", "--target", f"file://{target_dir}", "--size-per-rank",
           "999TiB", "-o", tmp_path / "r.jsonl")  # fmt: skip
    refused, dry = hpcio(*run), hpcio(*run, "--dry-run")
    # The same line but for the free space, which other work on the disk may change between.
    assert _error(dry).split(", more than the ")[0] == _error(refused).split(", more than the ")[0]
    assert "more than the" in _error(dry) and "free there" in _error(dry)
    assert not (tmp_path / "r.jsonl").exists()


def test_training_without_its_data_set_gives_the_datagen_line(hpcio, target_dir):
    url = f"file://{target_dir}"
    (target_dir / "hpcio-unet3d-small-s1-n168").mkdir()  # another seed's, say
    for dry in ((), ("--dry-run",)):
        done = hpcio("train", "unet3d", "--target", url, "--scale", "small", "--seed", "2",
                     *dry)  # fmt: skip
        assert _error(done) == (
            f"hpcio: error: {url} holds hpcio-unet3d-small-s1-n168, not the data set unet3d "
            "reads with these options (hpcio-unet3d-small-s2-n168); make it with: hpcio train "
            f"datagen --target {url} --scale small --samples 168 --seed 2"
        )


def test_au_of_runs_without_training_is_refused(hpcio):
    results = _DATA / "v1" / "file-1rank.jsonl"
    done = hpcio("compare", results, results, "--metric", "au")
    assert _error(done) == (
        f"hpcio: error: --metric au: {results} holds no training runs (accelerator utilization "
        "is a training run's figure); compare bandwidth instead"
    )
