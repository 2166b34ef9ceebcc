"""What the launching hpcio does after a failed or stopped job, and `hpcio clean`'s work: on a
real file target, with a real result document, no MPI."""

import json
import time

import pytest
from hpcio.runner import cleanup
from hpcio.spec.model import RunSpec
from hpcio.spec.target import TargetSpec
from hpcio.workloads import registry

MiB = 1 << 20


def spec(target_dir, **changes) -> RunSpec:
    settings = {"ranks": 2, "size_per_rank_bytes": MiB, "transfer_bytes": 256 << 10, **changes}
    return RunSpec.build("mfmw", target=TargetSpec.from_url(f"file://{target_dir}"), **settings)


def leave_files(target_dir, run: RunSpec) -> set[str]:
    keys = cleanup.written_keys([run])
    for key in keys:
        (target_dir / key).write_bytes(b"x")
    return set(keys)


def test_written_keys_are_the_files_of_every_rank_once_in_the_workloads_order(target_dir):
    one, two = spec(target_dir), spec(target_dir, files_per_rank=2)
    keys = cleanup.written_keys([one, two, one])
    # Ranks share the removal out by position: the order must not depend on the process.
    assert keys == registry.get("mfmw").keys(one) + registry.get("mfmw").keys(two)
    assert len(set(keys)) == len(keys) == 2 + 2 * 2
    assert all(key.startswith(cleanup.OWN_PREFIX) for key in keys)


def test_a_run_that_only_reads_wrote_nothing(target_dir):
    assert cleanup.written_keys([spec(target_dir, phases=("read",))]) == []


@pytest.mark.parametrize("code, signal_number", [(137, 9), (-15, 15)])
def test_a_killed_rank_is_named_and_its_files_removed(target_dir, capsys, code, signal_number):
    run = spec(target_dir)
    leave_files(target_dir, run)
    (target_dir / "users-own.dat").write_bytes(b"keep me")

    cleanup.after_failed_job(code, [run], "job", None)

    said = capsys.readouterr().err.splitlines()
    assert said == [f"hpcio: error: the MPI job failed: a rank was killed (signal {signal_number})"]
    assert [p.name for p in target_dir.iterdir()] == ["users-own.dat"]


def test_an_interrupted_job_is_not_called_killed_and_keep_keeps(target_dir, capsys):
    run = spec(target_dir, keep=True)
    keys = leave_files(target_dir, run)

    cleanup.after_failed_job(130, [run], "job", None)

    assert capsys.readouterr().err == ""
    assert {p.name for p in target_dir.iterdir()} == keys


def test_the_iterations_kept_are_read_back_from_the_results_file(
    target_dir, tmp_path, hpcio, capsys
):
    output = tmp_path / "results.jsonl"
    url = f"file://{target_dir}"
    more = ("--size-per-rank", "256KiB", "--transfer", "256KiB", "-i", "2", "-q", "-o", output)
    done = hpcio("run", "--pattern", "mfmw", "--target", url, *more)
    assert done.returncode == 0, done.stderr
    since = output.stat().st_size
    record = json.loads(output.read_text())
    with output.open("a") as results:  # as rank 0 leaves a run stopped after two iterations
        results.write(json.dumps(dict(record, status="interrupted")) + "\n")

    cleanup.clean_up_after([spec(target_dir)], "job", str(output), since)
    end = output.stat().st_size
    cleanup.clean_up_after([spec(target_dir)], "job", str(output), end, stopped=True)

    said = capsys.readouterr().err.splitlines()
    assert said == [
        f"hpcio: kept the 2 finished iteration(s) in {output} (status interrupted)",
        f"hpcio: no iteration had finished; nothing added to {output}",
    ]


def test_clean_target_removes_only_hpcios_own_files(target_dir):
    run = spec(target_dir)
    keys = leave_files(target_dir, run)
    (target_dir / "hpcio-notes.txt").write_text("a user's file with hpcio's prefix")
    target = TargetSpec.from_url(f"file://{target_dir}")

    seen = cleanup.clean_target(target, dry_run=True)
    assert (set(seen.keys), seen.removed) == (keys, 0)
    assert len(list(target_dir.iterdir())) == len(keys) + 1

    done = cleanup.clean_target(target)
    assert (set(done.keys), done.removed, done.uploads, done.journaled) == (keys, 2, [], [])
    assert [p.name for p in target_dir.iterdir()] == ["hpcio-notes.txt"]


def test_the_clean_up_retries_a_failing_call_a_bounded_number_of_times(monkeypatch):
    monkeypatch.setattr(cleanup, "CLEANUP_BACKOFF_S", 0.0)
    calls = []

    def flaky() -> str:
        calls.append(1)
        if len(calls) < 3:
            raise ConnectionResetError(104, "reset")
        return "done"

    assert cleanup.retrying(flaky) == "done"
    assert len(calls) == 3

    def broken() -> None:
        calls.append(1)
        raise TimeoutError("stalled")

    calls.clear()
    with pytest.raises(TimeoutError):
        cleanup.retrying(broken)
    assert len(calls) == cleanup.CLEANUP_ATTEMPTS


def test_a_try_that_failed_slowly_is_not_tried_again(monkeypatch):
    # A stalled store: the engine's own retries spent the user's timeout; trying again would
    # spend it CLEANUP_ATTEMPTS times over.
    monkeypatch.setattr(cleanup, "CLEANUP_BACKOFF_S", 0.0)
    monkeypatch.setattr(cleanup, "CLEANUP_SLOW_TRY_S", 0.05)
    calls = []

    def stalled() -> None:
        calls.append(1)
        time.sleep(0.06)
        raise TimeoutError("stalled")

    with pytest.raises(TimeoutError):
        cleanup.retrying(stalled)
    assert len(calls) == 1


def test_stores_that_keep_nothing_have_no_uploads_or_probes_to_clean(target_dir):
    # file:// has no multipart uploads and its probe removes its file with one unlink.
    run = spec(target_dir)
    (target_dir / f"{cleanup.PROBE_START}1").write_bytes(b"hpcio")
    assert cleanup.abort_run_uploads(run, cleanup.written_keys([run])) == 0
    assert cleanup.remove_probes(run) == 0
    assert (target_dir / f"{cleanup.PROBE_START}1").exists()
