"""What a sweep prints: [i/N] with an ETA per point, and the cache notes and warnings once."""

import re


def test_a_sweep_counts_its_points_and_says_the_notes_once(hpcio, target_dir, file_url, tmp_path):
    out = tmp_path / "r.jsonl"
    done = hpcio("sweep", "--pattern", "mfmw", "--sizes", "1MiB..4MiB", "--target",
                 file_url(target_dir), "-o", out)  # fmt: skip
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    counted = [line for line in lines if line.startswith("[")]
    assert [re.match(r"\[(\d)/3\] mfmw 1 rank (\d) MiB/rank", c).groups() for c in counted] == [
        ("1", "1"), ("2", "2"), ("3", "4")
    ]  # fmt: skip
    assert all(re.search(r"; \d left, eta \d:\d\d:\d\d$", c) for c in counted)
    # Each note once, though every point's figures differ: each document keeps its own.
    assert sum(line.startswith("  cache: ") for line in lines) == 1
    assert sum(line.startswith("  warning: read figures may be RAM") for line in lines) == 1
    assert out.read_text().count('"reads_may_hit_page_cache":true') == 3


def test_quiet_sweep_tables_say_their_point(hpcio, target_dir, file_url, tmp_path):
    done = hpcio("sweep", "--pattern", "sfmw", "--sizes", "1MiB..2MiB", "--target",
                 file_url(target_dir), "-o", tmp_path / "r.jsonl", "-q")  # fmt: skip
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    tables = [i for i, line in enumerate(lines) if line.startswith("  phase  bandwidth (MiB/s)")]
    assert len(tables) == 2
    assert all(lines[i - 1].startswith(f"[{n + 1}/2] sfmw 1 rank") for n, i in enumerate(tables))
