"""--dry-run: what a run would do, from the workload's own figures, with nothing written."""

import pytest

MiB = 1 << 20


def test_a_run_s_plan_is_printed_and_nothing_is_written(hpcio, target_dir, file_url):
    done = hpcio("run", "--pattern", "sfmw", "-n", 4, "--size-per-rank", "8MiB", "--transfer",
                 "1MiB", "--target", file_url(target_dir), "--dry-run")  # fmt: skip
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0] == "hpcio run --dry-run: 1 run(s); nothing is written"
    assert lines[1].startswith(f"sfmw on {file_url(target_dir)}: 4 rank(s) on 1 node(s)")
    assert "  1 file(s) (hpcio-shared.dat), 32 MiB kept" in lines
    assert "  write phase: 32 MiB per iteration, 32 transfers" in lines
    assert "  read phase: 32 MiB per iteration, 32 transfers" in lines
    assert any(
        line.startswith("  memory: 4 MiB per node (4 rank(s) x 1 in flight") for line in lines
    )
    assert any(line.startswith("  space: needs 32 MiB more") for line in lines)
    assert list(target_dir.iterdir()) == []


@pytest.mark.parametrize(("pattern", "transfers"), [("sfsw", 8), ("mfmr", 8), ("sfmr", 32)])
def test_transfers_per_phase_follow_the_pattern(hpcio, target_dir, file_url, pattern, transfers):
    done = hpcio("run", "--pattern", pattern, "-n", 4, "--size-per-rank", "2MiB", "--transfer",
                 "1MiB", "--target", file_url(target_dir), "--dry-run")  # fmt: skip
    assert done.returncode == 0, done.stderr
    read = next(line for line in done.stdout.splitlines() if line.startswith("  read phase"))
    assert read.endswith(f", {transfers} transfers")


def test_a_sweep_dry_run_needs_no_output_file(hpcio, target_dir, file_url):
    done = hpcio("sweep", "--pattern", "mfmw,sfmw", "--sizes", "1MiB..4MiB", "--target",
                 file_url(target_dir), "--dry-run")  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines()[0] == "hpcio sweep --dry-run: 6 run(s); nothing is written"
    assert done.stdout.count("\nmfmw on ") == 3


def test_an_object_store_dry_run_makes_no_request(hpcio):
    # No server listens anywhere: a request would fail the command.
    done = hpcio("run", "--pattern", "mfmw", "--size-per-rank", "32MiB", "--transfer", "16MiB",
                 "--target", "s3://bucket/x", "--dry-run",
                 env={"AWS_ENDPOINT": "http://127.0.0.1:9"})  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert "  write phase: 32 MiB per iteration, 2 transfers (a request each;" in done.stdout


def test_a_bad_option_is_still_refused(hpcio, target_dir, file_url, error_line):
    done = hpcio("run", "--pattern", "sfmw", "--size-per-rank", "3MiB", "--transfer", "2MiB",
                 "--target", file_url(target_dir), "--dry-run")  # fmt: skip
    assert done.returncode == 2
    assert "is not a multiple of the transfer" in error_line(done)


def test_a_suite_dry_run_lists_the_points_left(hpcio, target_dir, file_url, tmp_path):
    out = tmp_path / "r.jsonl"
    done = hpcio("suite", "run", "output", "--scale", "small", "--target", file_url(target_dir),
                 "-o", out, "--dry-run")  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines()[0] == "hpcio suite --dry-run: 8 run(s); nothing is written"
    assert done.stdout.count("(2 per node)") == 8
    assert not out.exists() and list(target_dir.iterdir()) == []
