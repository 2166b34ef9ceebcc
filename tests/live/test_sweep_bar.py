"""`hpcio sweep` has suite run's progress: a bar on a terminal (--display bar forces it here),
one [i/N] line per point either way."""

import re


def sweep(hpcio, target_dir, file_url, tmp_path, *more):
    return hpcio("sweep", "--pattern", "mfmw", "--sizes", "1MiB..2MiB", "--target",
                 file_url(target_dir), "-o", tmp_path / "r.jsonl", *more)  # fmt: skip


def test_a_sweep_draws_a_bar_and_still_prints_each_point(hpcio, target_dir, file_url, tmp_path):
    done = sweep(hpcio, target_dir, file_url, tmp_path, "--display", "bar")
    assert done.returncode == 0, done.stderr
    assert "\x1b[2K" in done.stdout  # a live display: lines erased and drawn again
    assert re.search(r"\d/2 done, \d left", done.stdout)
    counted = re.findall(r"\[(\d)/2\] mfmw 1 rank", done.stdout)
    assert counted == ["1", "2"]


def test_without_a_terminal_a_sweep_prints_lines_only(hpcio, target_dir, file_url, tmp_path):
    done = sweep(hpcio, target_dir, file_url, tmp_path)
    assert done.returncode == 0, done.stderr
    assert "\x1b[" not in done.stdout + done.stderr
    assert re.findall(r"^\[(\d)/2\] mfmw 1 rank", done.stdout, re.M) == ["1", "2"]
