"""Options declared once (spec/options.py): each kind reads command-line text and suite values
alike, argparse and suites take every declared option, and a value is named by its flag."""

import argparse

import pytest
from hpcio import options
from hpcio.errors import SpecError
from hpcio.spec.model import COMMON_OPTIONS
from hpcio.spec.suite import RUN_OPTIONS, load_suite
from hpcio.workloads import registry
from hpcio.workloads.patterns.params import CollectParams, FilePerRankParams, SharedReadParams

KiB, MiB = 1 << 10, 1 << 20


def declared(params=FilePerRankParams):
    """field -> Option, the common settings and `params`'s."""
    return {o.field: o for o in (*COMMON_OPTIONS, *options.declared(params))}


def refusal(option, value):
    with pytest.raises(SpecError) as caught:
        option.read(value)
    return str(caught.value)


@pytest.mark.parametrize(
    ("value", "expected"), [("4MiB", 4 * MiB), ("256KiB", 256 * KiB), (4096, 4096), ("1B", 1)]
)
def test_size(value, expected):
    assert declared()["transfer_bytes"].read(value) == expected


@pytest.mark.parametrize(
    ("value", "message"),
    [
        ("4X", "--transfer: '4X' is not a size; use a number with B, KiB, MiB, GiB or TiB"),
        ("0B", "--transfer must be at least 1 byte, got '0B'"),
        (True, '--transfer must be a size such as "4MiB", got True'),
        (1.5, '--transfer must be a size such as "4MiB", got 1.5'),
    ],
)
def test_size_refusals_name_the_flag(value, message):
    assert refusal(declared()["transfer_bytes"], value) == message


def test_whole_and_positive_numbers():
    seed, in_flight = declared()["seed"], declared()["in_flight"]
    assert (seed.read("7"), seed.read(" 0 "), seed.read(12)) == (7, 0, 12)
    assert refusal(seed, "seven") == "--seed must be a whole number, got 'seven'"
    assert refusal(seed, True) == "--seed must be a whole number, got True"
    assert in_flight.read("16") == 16
    assert refusal(in_flight, 0) == "--in-flight must be at least 1, got 0"
    assert refusal(in_flight, "-2") == "--in-flight must be at least 1, got -2"


def test_flags_take_true_or_false_only():
    fsync = declared()["fsync"]
    assert (fsync.read(True), fsync.read(False)) == (True, False)
    assert refusal(fsync, "yes") == "--fsync must be true or false, got 'yes'"
    assert refusal(fsync, 1) == "--fsync must be true or false, got 1"


@pytest.mark.parametrize(
    ("value", "seconds"),
    [("5m", 300.0), ("30s", 30.0), ("1h", 3600.0), ("1.5", 1.5), (90, 90.0), (0.25, 0.25)],
)
def test_duration(value, seconds):
    assert declared()["duration_s"].read(value) == seconds


@pytest.mark.parametrize(
    ("value", "message"),
    [
        ("soon", "--duration: 'soon' is not a duration; use seconds or a unit: 30s, 5m, 1h"),
        ("0s", "--duration must be more than 0 seconds, got '0s'"),
        (-1, "--duration must be more than 0 seconds, got -1"),
        (True, '--duration must be a duration such as "30s", "5m" or 90, got True'),
    ],
)
def test_duration_refusals(value, message):
    assert refusal(declared()["duration_s"], value) == message


def test_phases_from_text_or_a_list():
    phases = declared()["phases"]
    assert phases.read("write,read") == ("write", "read")
    assert phases.read(" read ") == ("read",)
    assert phases.read(["write", "read"]) == ("write", "read")
    assert refusal(phases, 3).startswith('--phases must be "write", "read" or a list of them')


def test_choice():
    scope = declared(SharedReadParams)["read_scope"]
    assert scope.read("own") == "own"
    assert scope.kind.choices == ("all", "own")
    assert refusal(scope, "some") == "--read-scope must be one of all, own, got 'some'"


def test_suite_keys_default_to_the_flag_in_words():
    by_field = declared(CollectParams)
    assert by_field["in_flight"].key == "in_flight"
    assert by_field["gather_chunk_bytes"].key == "gather_chunk"
    assert by_field["space_check"].key == "space_check"  # --no-space-check
    assert by_field["size_per_rank_bytes"].key == "size_per_rank"
    assert declared()["random_offsets"].key == "random"
    assert by_field["transfer_bytes"].names == ("--transfer", "--part-size")


def parse(argv, declared_options):
    parser = argparse.ArgumentParser(exit_on_error=False)
    options.add_arguments(parser, declared_options)
    return options.values(parser.parse_args(argv), declared_options)


def test_command_line_values_are_converted_and_defaults_left_out():
    every = list(declared().values())
    assert parse([], every) == {}
    typed = parse(["--duration", "5m", "--part-size", "4MiB", "--random", "--no-space-check",
                   "--files-per-rank", "8", "--phases", "read"], every)  # fmt: skip
    assert typed == {
        "duration_s": 300.0,
        "transfer_bytes": 4 * MiB,
        "random_offsets": True,
        "space_check": False,
        "files_per_rank": 8,
        "phases": ("read",),
    }
    with pytest.raises(SpecError, match=r"^--duration: 'a while' is not a duration"):
        parse(["--duration", "a while"], every)


def test_a_suite_takes_every_run_option():
    """Every setting `hpcio run` takes for a pattern has a suite key (the axes aside)."""
    pattern_options = registry.options(registry.of_family("pattern"))
    keyed = {o.key for o in (*COMMON_OPTIONS, *pattern_options) if o.key}
    axes = {"ranks", "ranks_per_node", "iterations", "size_per_rank"}
    assert set(RUN_OPTIONS) == keyed - axes
    assert {"files_per_rank", "random", "duration", "drop_caches", "space_check"} <= set(
        RUN_OPTIONS
    )


EVERY_OPTION = """\
[[target]]
url = "file:///scratch/every"

[grid]
patterns = ["sfsw", "sfmr", "mfmw"]
sizes = "4MiB"
ranks = 2
seed = 7
verify = true
keep = true
direct = true
fsync = true
drop_caches = true
space_check = false
transfer = "512KiB"
in_flight = 2
reorder = true
segments = 2
gather_chunk = "1MiB"
files_per_rank = 2
random = true
duration = "5m"
read_scope = "own"
phases = ["read"]
"""


def test_a_suite_gives_each_workload_the_options_it_declares(tmp_path):
    path = tmp_path / "every.toml"
    path.write_text(EVERY_OPTION)
    sfsw, sfmr, mfmw = load_suite(path).points
    for point in (sfsw, sfmr, mfmw):
        assert (point.seed, point.verify, point.keep, point.direct, point.fsync) == (
            7, True, True, True, True,
        )  # fmt: skip
        assert (point.drop_caches, point.space_check, point.phases) == (True, False, ("read",))
        assert (point.params.transfer_bytes, point.params.in_flight) == (512 * KiB, 2)
        assert point.params.reorder
    assert (sfsw.params.segments, sfsw.params.gather_chunk_bytes) == (2, MiB)
    assert (sfmr.params.segments, sfmr.params.read_scope) == (2, "own")
    p = mfmw.params
    assert (p.files_per_rank, p.random_offsets, p.duration_s) == (2, True, 300.0)
    assert not hasattr(p, "segments") and not hasattr(sfsw.params, "duration_s")
