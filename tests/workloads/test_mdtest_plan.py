"""mdtest's namespace and rate arithmetic, checked against numbers worked by hand from
mdtest.c (create_remove_items, mdtest_stat, summarize_results_rank0)."""

import math
from pathlib import Path

import pytest
from hpcio.errors import SpecError
from hpcio.workloads.mdtest import rates
from hpcio.workloads.mdtest.tree import Tree, tree_dirs

RECORDED = (
    Path(__file__).resolve().parents[1] / "data" / "mdtest" / "two-ranks-two-iterations.jsonl"
)


@pytest.mark.parametrize(("depth", "branch", "dirs"), [(0, 1, 1), (3, 1, 4), (2, 2, 7), (2, 3, 13)])
def test_a_tree_holds_its_levels(depth, branch, dirs):
    assert tree_dirs(depth, branch) == dirs


def test_items_are_rounded_down_to_a_multiple_of_the_dirs_as_mdtest_does():
    tree = Tree.of(1000, 0, depth=2, branch=2, dir_per_rank=False)
    assert (tree.items_per_dir, tree.items) == (142, 994)  # mdtest: "2 tasks, 1988 files"
    fixed = Tree.of(1000, 5, depth=2, branch=2, dir_per_rank=False)
    assert (fixed.items_per_dir, fixed.items) == (5, 35)  # -I wins over -n


def test_fewer_items_than_dirs_is_refused_with_the_least_that_works():
    with pytest.raises(SpecError, match="give at least --items 13"):
        Tree.of(12, 0, depth=2, branch=3, dir_per_rank=False)


def test_directory_paths_follow_mdtests_numbering():
    tree = Tree.of(70, 0, depth=2, branch=2, dir_per_rank=False)
    assert tree.tree_paths(0) == [
        "mdtest_tree.0",
        "mdtest_tree.0/mdtest_tree.1",
        "mdtest_tree.0/mdtest_tree.2",
        "mdtest_tree.0/mdtest_tree.1/mdtest_tree.3",
        "mdtest_tree.0/mdtest_tree.1/mdtest_tree.4",
        "mdtest_tree.0/mdtest_tree.2/mdtest_tree.5",
        "mdtest_tree.0/mdtest_tree.2/mdtest_tree.6",
    ]
    files = tree.item_paths(3, "file")
    assert len(files) == 70 and tree.items_per_dir == 10
    assert files[0] == "mdtest_tree.0/file.mdtest.3.0"
    assert files[59] == "mdtest_tree.0/mdtest_tree.2/mdtest_tree.5/file.mdtest.3.59"
    assert tree.makes_tree(0) and not tree.makes_tree(3)


def test_a_tree_per_rank_is_named_after_the_rank():
    tree = Tree.of(4, 0, depth=1, branch=3, dir_per_rank=True)
    assert tree.item_paths(2, "dir") == [
        "mdtest_tree.2.0/dir.mdtest.2.0",
        "mdtest_tree.2.0/mdtest_tree.2.1/dir.mdtest.2.1",
        "mdtest_tree.2.0/mdtest_tree.2.2/dir.mdtest.2.2",
        "mdtest_tree.2.0/mdtest_tree.2.3/dir.mdtest.2.3",
    ]
    assert tree.makes_tree(2)


def test_an_iterations_rate_is_the_slowest_ranks_times_the_ranks():
    # Rank 1 made 1000 items in 0.5 s (2000/s), rank 0 in 0.25 s: mdtest counts 2 x 2000.
    assert rates.iteration_rate("file_create", [1000, 1000], [0.25, 0.5]) == 4000
    # After a stonewall every rank made the same count; unequal counts still take the slowest.
    assert rates.iteration_rate("file_stat", [300, 100], [1.0, 1.0]) == 200
    assert rates.iteration_rate("file_read", [0, 0], [0.1, 0.1]) == 0


def test_the_trees_rate_is_rank_zeros_alone():
    # mdtest: num_dirs_in_tree / rank 0's time, whatever the ranks (even with -u).
    assert rates.iteration_rate("tree_create", [7, 7], [0.5, 0.7]) == 14


def test_the_summary_is_mdtests_max_min_mean_and_sample_stddev():
    s = rates.summarize([100.0, 200.0, 300.0])
    assert (s.max, s.min, s.mean) == (300.0, 100.0, 200.0)
    assert math.isclose(s.stddev, 100.0)
    assert rates.summarize([5.0]).stddev == 0.0


def spec(url="file:///tmp/x", ranks=2, **params):
    from hpcio.spec.model import RunSpec
    from hpcio.spec.target import TargetSpec

    return RunSpec.build("mdtest", target=TargetSpec.from_url(url), ranks=ranks, **params)


def test_the_phase_metrics_are_mdtests_rates_from_every_ranks_items_and_times():
    from hpcio.workloads import registry

    per_rank = [
        {"file_create_items": 100, "file_create_s": 0.5, "tree_create_items": 1,
         "tree_create_s": 0.01, "failed_calls": 0},
        {"file_create_items": 100, "file_create_s": 1.0, "tree_create_items": 0,
         "tree_create_s": 0.02, "failed_calls": 2},
    ]  # fmt: skip
    m = registry.get("mdtest").reduce_metrics(per_rank)
    assert m["file_create_ops_per_s"] == 200  # 2 ranks x the slowest's 100 / 1.0 s
    assert (m["file_create_items"], m["file_create_s"]) == (200, 1.0)
    assert m["tree_create_ops_per_s"] == 100  # rank 0's one directory in 0.01 s
    assert m["failed_calls"] == 2
    assert "dir_create_ops_per_s" not in m  # a phase not made has no rate


def test_notes_print_mdtests_summary_over_the_iterations_as_a_table():
    from hpcio.workloads import registry

    notes = registry.get("mdtest").notes(
        "write",
        [
            {"file_stat_ops_per_s": 1000.0, "tree_create_ops_per_s": 10.0},
            {"file_stat_ops_per_s": 3000.0, "tree_create_ops_per_s": 30.0},
        ],
    )
    head, *rows = notes
    assert head.split() == ["mdtest", "(ops/s)", "mean", "of", "2", "max", "min", "stddev"]
    # In the order an iteration makes the phases; mean, max, min and sample stddev.
    assert [row.split() for row in rows] == [
        ["Tree", "creation", "20", "30", "10", "14"],
        ["File", "stat", "2,000", "3,000", "1,000", "1,414"],
    ]
    assert all(len(row) == len(head) for row in rows)


def test_notes_add_the_p99_of_a_call_and_the_failed_calls():
    from hpcio.workloads import registry

    notes = registry.get("mdtest").notes(
        "write", [{"dir_stat_ops_per_s": 500.0, "dir_stat_p99_s": 2.5e-5, "failed_calls": 3}]
    )
    assert notes[0].endswith("p99 op (us)")
    assert notes[1].split()[-1] == "25.0"
    assert notes[2] == "mdtest: 3 call(s) failed (the phase's errors name the first)"


def test_an_iterations_line_says_each_phases_rate_grouped_by_kind_of_item():
    from hpcio.results.io import read as read_documents
    from hpcio.workloads import registry

    (doc,) = read_documents(RECORDED)
    first = doc.phases[0]
    words = registry.get("mdtest").progress_words(first)
    m = first.metrics
    rate = {
        key: f"{m[key + '_ops_per_s']:,.0f}" for key, _ in rates.PHASES if key + "_ops_per_s" in m
    }
    assert words == (
        f"ops/s: tree create {rate['tree_create']}; dir create {rate['dir_create']} "
        f"stat {rate['dir_stat']} remove {rate['dir_remove']}; file create "
        f"{rate['file_create']} stat {rate['file_stat']} read {rate['file_read']} remove "
        f"{rate['file_remove']}; tree remove {rate['tree_remove']}  "
        f"({first.phase_time_s:.2f} s)"
    )
    assert "MiB" not in words


@pytest.mark.parametrize(
    ("url", "params", "message"),
    [
        ("file:///tmp/x", {"read_bytes": 10, "write_bytes": 5}, "--read-bytes 10 B is more than"),
        ("file:///tmp/x", {"stonewall_s": 1.0, "branch": 2}, "--stonewall needs --branch 1"),
        ("file:///tmp/x", {"items": 3, "depth": 1, "branch": 3}, "give at least --items 4"),
        ("s3://bucket/p", {"write_bytes": 1}, "give --items-kind files"),
        ("s3://bucket/p", {"items_kind": "files"}, "give --write-bytes 1 or more"),
    ],
)
def test_what_mdtest_cannot_do_is_refused_in_one_line(url, params, message):
    with pytest.raises(SpecError, match=message):
        spec(url, **params).validate()


def test_every_name_it_makes_is_its_own():
    from hpcio.workloads import registry

    workload = registry.get("mdtest")
    assert workload.owns_key("hpcio-mdtest")
    assert workload.owns_key("hpcio-mdtest/mdtest_tree.0/file.mdtest.1.7")
    assert workload.owns_key("hpcio-mdtest+mdtest_tree.0.0+file.mdtest.1.7")
    assert not workload.owns_key("hpcio-mdtest-x")


def test_clean_removes_the_tree_a_killed_run_left_and_nothing_else(tmp_path):
    from hpcio.runner.cleanup import clean_target
    from hpcio.spec.target import TargetSpec

    tree = tmp_path / "hpcio-mdtest" / "mdtest_tree.0" / "mdtest_tree.1"
    (tree / "dir.mdtest.0.3").mkdir(parents=True)  # empty: no key names it
    (tree / "file.mdtest.0.4").write_bytes(b"")
    (tmp_path / "theirs").mkdir()
    clean_target(TargetSpec.from_url(f"file://{tmp_path}"))
    assert [p.name for p in tmp_path.iterdir()] == ["theirs"]
