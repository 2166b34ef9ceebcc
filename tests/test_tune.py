"""`hpcio tune` (commands/tune.py): the knee search finds a setting near the grid's best from a
fraction of its points, and the command prints the table, the knee and the run line."""

import re

import pytest
from hpcio.commands.tune import GAIN, PATIENCE, KneeSearch

MiB = 1 << 20
DEPTHS = (1, 2, 4, 8, 16, 32, 64)
TRANSFERS = tuple(MiB << n for n in range(7))  # 1 MiB .. 64 MiB


def far_store(rtt_s: float, per_request: float, link: float):
    """Bandwidth of a store far away: each request pays a round trip and flows at its own cap,
    and all of them share the link (what null://?delay&rate&link emulates)."""

    def bandwidth(point):
        depth, transfer = point
        return min(link, depth * transfer / (rtt_s + transfer / per_request))

    return bandwidth


def walk(bandwidth, fits=lambda point: True):
    search = KneeSearch(DEPTHS, TRANSFERS, start_transfer=8 * MiB, fits=fits)
    while (point := search.next_point()) is not None:
        assert point not in search.measured  # never measures a point twice
        search.measured[point] = bandwidth(point)
    return search


@pytest.mark.parametrize("store", [
    far_store(0.040, 60 * MiB, 125e6),    # cross region: 20 ms each way, 1 Gbit/s link
    far_store(0.002, 400 * MiB, 1.25e9),  # same region
    far_store(0.040, 60 * MiB, 30 * MiB),  # a thin link: depth 1 nearly fills it
])  # fmt: skip
def test_the_search_finds_nine_tenths_of_the_grid_best_from_a_fraction_of_it(store):
    grid = [(d, t) for d in DEPTHS for t in TRANSFERS]
    best = max(store(p) for p in grid)
    search = walk(store)
    found = search.best()
    assert found is not None and store(found) >= 0.9 * best
    assert len(search.measured) <= len(grid) / 3
    assert search.knees  # each walk says where and why it stopped


def test_a_walk_stops_after_two_doublings_that_gain_less_than_the_rule():
    # Bandwidth doubles with depth up to 8, then gains 5%: the walk measures 16 and 32, stops.
    search = walk(lambda p: min(p[0], 8) * (1 + 0.05 * (p[0] > 8)) * p[1] / MiB * 1e6)
    depths_at_start = sorted(d for d, t in search.measured if t == 8 * MiB)
    assert depths_at_start == [1, 2, 4, 8, 16, 32]
    assert (GAIN, PATIENCE) == (0.10, 2)
    assert search.knees[0].startswith("in-flight: depth 16 and depth 32 gave")
    assert search.knees[0].endswith("knee at depth 8")


def test_one_point_measured_low_does_not_end_a_walk():
    def noisy(point):
        depth, transfer = point
        return depth * transfer * (0.5 if depth == 4 else 1.0)  # depth 4 hit a hiccup

    search = walk(noisy)
    assert (64, 8 * MiB) in search.measured  # the walk went on past the low point


def test_a_range_that_ends_on_a_flat_doubling_says_so():
    search = KneeSearch((1, 2), (MiB,), start_transfer=MiB, fits=lambda point: True)
    search.measured = {(1, MiB): 100.0, (2, MiB): 105.0}
    assert search.next_point() is None
    assert search.knees[0] == (
        "in-flight: the range ends: depth 2 gave 0.0 MiB/s, less than 1.10x the 0.0 MiB/s of "
        "depth 1: knee at depth 1"
    )


def test_points_over_the_memory_limit_are_never_measured():
    search = walk(far_store(0.040, 60 * MiB, 125e6), fits=lambda p: p[0] * p[1] <= 64 * MiB)
    assert search.measured and all(d * t <= 64 * MiB for d, t in search.measured)


def test_tune_prints_the_table_the_knee_and_the_run_line(hpcio, tmp_path):
    target = "null://?delay=5ms&rate=200MiB&link=400MiB"
    common = ("tune", "--target", target, "--in-flight-range", "1..8", "--transfer-range",
              "1MiB..4MiB", "--size-per-rank", "8MiB")  # fmt: skip
    done = hpcio(*common, "--plots", tmp_path, "-o", tmp_path / "search.jsonl")
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    head = next(line for line in lines if line.startswith("hpcio tune: mfmw write on"))
    measured, total = map(int, re.search(r"(\d+) of (\d+) grid points", head).groups())
    assert total == 12 and 1 <= measured < total
    assert any(line.startswith("  knee: in-flight: ") for line in lines)
    setting = next(line for line in lines if line.startswith("  setting: depth "))
    depth, size = re.search(r"depth (\d+), transfer (\S+):", setting).groups()
    use = next(line for line in lines if line.startswith("  use: "))
    run_size = f"{max(8, 2 * int(depth) * int(size.removesuffix('MiB')))}MiB"  # 2 per lane
    assert use == (f"  use: hpcio run --pattern mfmw --target '{target}' "
                   f"--size-per-rank {run_size} --transfer {size} --in-flight {depth}")  # fmt: skip
    assert (tmp_path / "tune.png").stat().st_size > 0
    assert len((tmp_path / "search.jsonl").read_text().splitlines()) == measured

    # The whole grid, without drawing it again (the search's figure is checked above).
    done = hpcio(*common, "--full", "-o", tmp_path / "full.jsonl")
    assert done.returncode == 0, done.stderr
    assert "12 of 12 grid points measured" in done.stdout
    ratio = float(re.search(r"points: (\d\.\d\d) of the best", done.stdout).group(1))
    assert 0 < ratio <= 1


def test_bad_tune_input_is_one_line(hpcio):
    done = hpcio("tune", "--target", "null://", "--max-memory", "1KiB")
    assert done.returncode == 2
    assert done.stderr.strip().startswith("hpcio: error: --max-memory 1KiB is below every point")
    assert len(done.stderr.strip().splitlines()) == 1
    done = hpcio("tune", "--target", "null://", "--in-flight-range", "1..6")
    assert done.returncode == 2 and "never reaches 6" in done.stderr


def test_the_search_starts_where_the_memory_limit_allows():
    from hpcio.commands.tune import TuneSettings, search

    assert search(TuneSettings()).next_point() == (1, 16 * MiB)  # the middle of 8..64 MiB
    small = search(TuneSettings(max_memory_bytes=16 * MiB))
    assert small.next_point() == (1, 8 * MiB)
