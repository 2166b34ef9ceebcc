import itertools
import shutil
from pathlib import Path

import pytest
from hpcio.errors import SpecError
from hpcio.spec.model import RunSpec
from hpcio.spec.suite import describe, load_suite
from hpcio.spec.sweep import pending, point_key
from hpcio.tomlfile import key_lines
from hpcio.workloads.patterns.common import file_bytes

MiB = 1 << 20
SUITES = Path(__file__).resolve().parents[2] / "suites"


@pytest.fixture
def write_suite(tmp_path):
    def write(text: str, name: str = "s.toml") -> Path:
        path = tmp_path / name
        path.write_text(text)
        return path

    return write


BASIC = """\
[suite]
name = "basic"

[[target]]
url = "file:///scratch/a"
fsync = true

[[target]]
url = "file:///scratch/b"
transfer = "512KiB"

[grid]
patterns = ["sfmw", "mfmw"]
sizes = "1MiB..4MiB"
ranks = [4, 8]
ranks_per_node = [2, 4]
iterations = [1, 3]
transfer = "1MiB"

[scale.small]
ranks = 2
ranks_per_node = 1
sizes = ["1MiB", "64KiB"]
"""


def test_grid_crosses_every_axis_in_launch_order(write_suite):
    suite = load_suite(write_suite(BASIC))
    # 2 patterns x 3 sizes x 2 rank counts x 2 layouts x 2 targets x 2 iteration counts
    assert len(suite.points) == 2 * 3 * 2 * 2 * 2 * 2
    assert suite.name == "basic"
    assert suite.scales == ("small",)
    groups = suite.groups()
    assert list(groups) == [(4, 2), (4, 4), (8, 2), (8, 4)]
    assert all(len(points) == 24 for points in groups.values())
    first = suite.points[0]
    assert (first.workload.name, first.ranks, first.ranks_per_node, first.iterations) == (
        "sfmw",
        4,
        2,
        1,
    )
    assert first.target.url == "file:///scratch/a"
    assert [p.params.size_per_rank_bytes for p in suite.points[:3]] == [MiB, 2 * MiB, 4 * MiB]
    assert len({point_key(p.to_dict()) for p in suite.points}) == len(suite.points)


def test_a_point_that_cannot_run_because_of_its_target_names_the_target(write_suite):
    path = write_suite(BASIC.replace('transfer = "512KiB"', 'transfer = "384KiB"'))
    message = error_of(path)
    line = BASIC.splitlines().index('url = "file:///scratch/b"')  # its [[target]] header
    assert message.startswith(f"{path}:{line}: sfmw 4 ranks (2/node) 1 MiB/rank x1 on ")
    assert message.endswith("size per rank (1 MiB) is not a multiple of the transfer (384 KiB)")


def test_per_target_options_override_the_grid(write_suite):
    suite = load_suite(write_suite(BASIC))
    on_a = [p for p in suite.points if p.target.url.endswith("/a")]
    on_b = [p for p in suite.points if p.target.url.endswith("/b")]
    assert {p.fsync for p in on_a} == {True}
    assert {p.params.transfer_bytes for p in on_a} == {MiB}
    assert {p.fsync for p in on_b} == {False}
    assert {p.params.transfer_bytes for p in on_b} == {512 << 10}


def test_scale_overrides_axes_and_keeps_the_rest(write_suite):
    suite = load_suite(write_suite(BASIC), scale="small")
    assert suite.scale == "small"
    assert {(p.ranks, p.ranks_per_node) for p in suite.points} == {(2, 1)}
    assert {p.workload.name for p in suite.points} == {"sfmw", "mfmw"}
    assert {p.iterations for p in suite.points} == {1, 3}
    # A size below the transfer runs with transfer = size, as in `hpcio sweep`.
    small = [p for p in suite.points if p.params.size_per_rank_bytes == 64 << 10]
    assert small and {p.params.transfer_bytes for p in small} == {64 << 10}


def test_target_override_keeps_the_options_of_the_same_kind(write_suite):
    suite = load_suite(write_suite(BASIC), targets=["file:///tmp/elsewhere"])
    assert {p.target.url for p in suite.points} == {"file:///tmp/elsewhere"}
    # The first file:// target's options (fsync) come along; its URL does not.
    assert {p.fsync for p in suite.points} == {True}
    assert len(suite.points) == 2 * 3 * 2 * 2 * 2


def test_layout_makes_points_distinct_for_resume(write_suite):
    suite = load_suite(write_suite(BASIC))
    by_layout_2 = [p for p in suite.points if p.ranks_per_node == 2]
    done = [p.to_dict() for p in by_layout_2]
    left = pending(suite.points, done)
    assert len(left) == len(suite.points) - len(by_layout_2)
    assert {p.ranks_per_node for p in left} == {4}


def test_plain_run_records_have_no_layout_and_still_resume():
    run = RunSpec.build(
        "sfmw", target=load_target(), ranks=2, size_per_rank_bytes=MiB, transfer_bytes=MiB
    )
    record = run.to_dict()
    assert record["ranks_per_node"] is None
    assert pending([run], [record]) == []
    assert RunSpec.from_dict(record) == run


def load_target():
    from hpcio.spec.target import TargetSpec

    return TargetSpec.from_url("file:///scratch")


def error_of(path, **kwargs) -> str:
    with pytest.raises(SpecError) as caught:
        load_suite(path, **kwargs)
    return str(caught.value)


def test_unknown_key_names_file_line_and_closest_key(write_suite):
    path = write_suite(BASIC.replace('transfer = "1MiB"', 'transfersize = "1MiB"'))
    line = BASIC.splitlines().index('transfer = "1MiB"') + 1
    assert error_of(path) == f"{path}:{line}: unknown key 'transfersize'; did you mean 'transfer'?"


def test_unknown_key_in_a_target_and_in_a_scale(write_suite):
    path = write_suite(BASIC.replace("fsync = true", "fsycn = true"))
    assert error_of(path) == f"{path}:6: unknown key 'fsycn'; did you mean 'fsync'?"
    path = write_suite(BASIC + "itertions = 2\n")
    line = len(BASIC.splitlines()) + 1
    assert error_of(path) == f"{path}:{line}: unknown key 'itertions'; did you mean 'iterations'?"


def test_unknown_top_level_table(write_suite):
    path = write_suite("[grids]\npatterns = 'sfmw'\n")
    assert error_of(path) == f"{path}:1: unknown key 'grids'; did you mean 'grid'?"


def test_bad_values_point_at_their_line(write_suite):
    path = write_suite(BASIC.replace('["sfmw", "mfmw"]', '["sfmw",\n  "nfnw"]'))
    line = BASIC.splitlines().index('patterns = ["sfmw", "mfmw"]') + 2
    assert error_of(path) == (
        f"{path}:{line}: unknown pattern 'nfnw'; choose one of sfsw, sfmw, mfmw, sfmr, mfmr"
    )
    path = write_suite(BASIC.replace('sizes = "1MiB..4MiB"', 'sizes = "1QiB"'))
    line = BASIC.splitlines().index('sizes = "1MiB..4MiB"') + 1
    assert error_of(path) == (
        f"{path}:{line}: '1QiB' is not a size; use a number with B, KiB, MiB, GiB or TiB"
    )
    path = write_suite(BASIC.replace("fsync = true", 'fsync = "yes"'))
    assert error_of(path) == f"{path}:6: 'fsync' must be true or false, got 'yes'"
    path = write_suite(BASIC.replace("ranks = [4, 8]", "ranks = [4, 0]"))
    line = BASIC.splitlines().index("ranks = [4, 8]") + 1
    assert error_of(path) == f"{path}:{line}: 'ranks' must be at least 1, got 0"


def test_a_point_that_cannot_run_names_it(write_suite):
    path = write_suite(BASIC.replace("ranks_per_node = [2, 4]", "ranks_per_node = [2, 16]"))
    message = error_of(path)
    line = BASIC.splitlines().index("[grid]") + 1
    assert message.startswith(f"{path}:{line}: sfmw 4 ranks (16/node) 1 MiB/rank x1 on ")
    assert message.endswith("ranks per node must be from 1 to the 4 ranks, got 16")


def test_toml_syntax_error_names_the_line(write_suite):
    path = write_suite('[suite]\nname = "x"\n[grid]\npatterns = [sfmw]\n')
    assert error_of(path) == f"{path}:4: Invalid value"


def test_missing_pieces(write_suite, tmp_path):
    path = write_suite('[[target]]\nurl = "file:///x"\n')
    assert error_of(path) == f"{path}: needs a [grid] table"
    path = write_suite('[[target]]\nurl = "file:///x"\n[grid]\npatterns = "sfmw"\n')
    assert error_of(path) == f"{path}:3: [grid] needs 'sizes'"
    path = write_suite('[grid]\npatterns = "sfmw"\nsizes = "1MiB"\n')
    assert error_of(path) == f"{path}: names no [[target]]; add one or pass --target URL"
    assert load_suite(path, targets=["file:///x"]).points[0].target.url == "file:///x"
    assert error_of(path, targets=["file:///x"], scale="small") == (
        f"{path}: no scale 'small' (scales defined: none)"
    )
    missing = tmp_path / "nope.toml"
    assert error_of(missing) == f"{missing}: cannot read (No such file or directory)"
    path = write_suite('[[target]]\nurl = "ftp://x/y"\n[grid]\npatterns = "sfmw"\nsizes = "1MiB"\n')
    assert error_of(path).startswith(f"{path}:2: target 'ftp://x/y': unknown scheme; supported: ")


def test_key_lines_follow_tables_arrays_and_inline_tables():
    text = "\n".join(
        [
            "# comment [not = a table]",  # 1
            "[[case]]",  # 2
            'id = "a"  # trailing',  # 3
            "[case.extra]",  # 4
            "k = 1",  # 5
            "[[case]]",  # 6
            'price = { one = "x", two = "y" }',  # 7
            "tiers = [",  # 8
            "  { up_to = 1, p = 2 },",  # 9
            '  { p = "]" },',  # 10
            "]",  # 11
            "after = 1",  # 12
            '"quoted key" = 2',  # 13
        ]
    )
    lines = key_lines(text)
    assert lines[("case", 0)] == 2
    assert lines[("case", 0, "id")] == 3
    assert lines[("case", 0, "extra", "k")] == 5
    assert lines[("case", 1)] == 6
    assert lines[("case", 1, "price", "two")] == 7
    assert lines[("case", 1, "tiers", 0, "p")] == 9
    assert lines[("case", 1, "tiers", 1)] == 10
    assert lines[("case", 1, "after")] == 12
    assert lines[("case", 1, "quoted key")] == 13


def test_shipped_suites_have_the_studies_shape():
    output = load_suite(SUITES / "output.toml")
    assert {p.workload.name for p in output.points} == {"sfmw", "mfmw"}
    assert {(p.ranks, p.ranks_per_node, p.iterations) for p in output.points} == {(20, 4, 100)}
    sizes = sorted({p.params.size_per_rank_bytes for p in output.points})
    assert sizes == [MiB << k for k in range(11)]  # 1 MiB .. 1 GiB
    assert len(output.points) == 22

    inputs = load_suite(SUITES / "input.toml")
    assert {(p.workload.name, p.params.read_scope) for p in inputs.points} == {("sfmr", "all")}
    files = sorted(file_bytes(p) for p in inputs.points)
    assert files[0] == 20 * (64 << 10) and files[-1] == 20 * 64 * MiB and len(files) == 11

    nodes = load_suite(SUITES / "nodes.toml")
    assert {p.ranks for p in nodes.points} == {20}
    assert list(nodes.groups()) == [(20, 1), (20, 2), (20, 4)]
    assert {p.params.size_per_rank_bytes for p in nodes.points} == {64 * MiB}


@pytest.mark.parametrize("name", ["output", "input", "nodes"])
def test_small_scale_keeps_the_shape(name):
    full = load_suite(SUITES / f"{name}.toml")
    small = load_suite(SUITES / f"{name}.toml", scale="small")
    assert {p.workload.name for p in small.points} == {p.workload.name for p in full.points}
    assert len({p.ranks_per_node for p in small.points}) == len(
        {p.ranks_per_node for p in full.points}
    )
    small_sizes = sorted({p.params.size_per_rank_bytes for p in small.points})
    assert all(b == 2 * a for a, b in itertools.pairwise(small_sizes))
    assert max(p.ranks for p in small.points) <= 4
    assert max(p.iterations for p in small.points) <= 2
    work = [sum(file_bytes(p) * p.iterations for p in s.points) for s in (small, full)]
    assert work[0] < work[1] / 50


@pytest.mark.parametrize("name", ["output", "input", "nodes"])
def test_small_scale_runs_every_point_on_every_object_store(name):
    """At --scale small each rank's region is at least 8 MiB, so an N-1 object's parts are
    ones S3 and GCS accept: no point is left out on an object store, and every target has the
    same points (a row of the study's table has each target's pair)."""
    urls = ["file:///tmp/x", "s3://bucket-a/x", "az://container-a/x", "gs://bucket-b/x"]
    small = load_suite(SUITES / f"{name}.toml", scale="small", targets=urls)
    assert small.left_out == ()
    by_target = {u: sorted(describe(p, target=False) for p in small.points if p.target.url == u)
                 for u in urls}  # fmt: skip
    assert len({tuple(v) for v in by_target.values()}) == 1
    assert min(p.params.size_per_rank_bytes for p in small.points) >= 8 * MiB


WORKLOADS = """\
[[target]]
url = "file:///scratch/a"

[grid]
workloads = ["collect_and_write", "allwrite", "read_distribute", "allread"]
sizes = ["1MiB", "4MiB"]
ranks = 8
collective = true
gather_chunk = "1MiB"
"""


def test_a_workloads_axis_names_any_runnable_workload(write_suite):
    suite = load_suite(write_suite(WORKLOADS))
    assert [(p.workload.name, p.params.size_per_rank_bytes) for p in suite.points] == [
        (name, size)
        for name in ("collect_and_write", "allwrite", "read_distribute", "allread")
        for size in (MiB, 4 * MiB)
    ]
    # Each takes the grid's options its params declare and leaves the others.
    by_name = {p.workload.name: p.params for p in suite.points}
    assert by_name["allwrite"].collective and by_name["allread"].collective
    assert by_name["collect_and_write"].gather_chunk_bytes == MiB
    assert not hasattr(by_name["collect_and_write"], "collective")


def test_patterns_and_workloads_cross_and_a_workload_without_sizes_runs_once(write_suite):
    text = (
        WORKLOADS.replace(
            'workloads = ["collect_and_write", "allwrite", "read_distribute", "allread"]',
            'patterns = "sfmw"\nworkloads = ["allwrite", "python-files"]',
        )
        .replace("collective = true\n", "files = 2\n")
        .replace('gather_chunk = "1MiB"\n', "")
    )
    suite = load_suite(write_suite(text))
    assert [p.workload.name for p in suite.points] == ["sfmw", "sfmw", "allwrite", "allwrite",
                                                  "python-files"]  # fmt: skip
    assert suite.points[-1].params.files == 2


def test_listed_stripes_are_an_axis_and_stay_apart_for_resume(write_suite):
    text = WORKLOADS.replace('"read_distribute", "allread"', '"allread"').replace(
        'workloads = ["collect_and_write", ', "workloads = ["
    )
    text = text.replace(
        'gather_chunk = "1MiB"\n', 'stripe_count = [1, 2, 4]\nstripe_size = "1MiB"\n'
    )
    suite = load_suite(write_suite(text))
    assert [
        (p.workload.name, p.params.size_per_rank_bytes, p.stripe_count) for p in suite.points
    ] == [
        (name, size, count)
        for name in ("allwrite", "allread")
        for size in (MiB, 4 * MiB)
        for count in (1, 2, 4)
    ]
    assert {p.stripe_size_bytes for p in suite.points} == {MiB}
    assert len({point_key(p.to_dict()) for p in suite.points}) == len(suite.points)
    one_stripe = [p.to_dict() for p in suite.points if p.stripe_count == 1]
    left = pending(suite.points, one_stripe)
    assert {p.stripe_count for p in left} == {2, 4} and len(left) == 8


def test_a_scale_may_drop_the_stripes(write_suite):
    text = WORKLOADS + "stripe_count = [1, 2]\n\n[scale.small]\nstripe_count = 1\nranks = 2\n"
    text = text.replace('"collect_and_write", ', "").replace('"read_distribute", ', "")
    text = text.replace('gather_chunk = "1MiB"\n', "")
    assert {p.stripe_count for p in load_suite(write_suite(text)).points} == {1, 2}
    small = load_suite(write_suite(text), scale="small")
    assert {(p.stripe_count, p.ranks) for p in small.points} == {(1, 2)}


def test_bad_workloads_get_one_line_with_file_and_line(write_suite):
    line = WORKLOADS.splitlines().index("collective = true") + 1
    path = write_suite(WORKLOADS.replace('"allwrite"', '"allwrit"'))
    assert error_of(path) == f"{path}:5: unknown workload 'allwrit'; did you mean 'allwrite'?"
    path = write_suite(WORKLOADS.replace("collective = true", 'read_scope = "own"'))
    assert error_of(path) == (
        f"{path}:{line}: 'read_scope' is for sfmr; the grid's workloads are collect_and_write, "
        "allwrite, read_distribute, allread"
    )
    path = write_suite(WORKLOADS.replace("collective = true", 'block = "4KiB"'))
    assert error_of(path) == (
        f"{path}:{line}: 'block' is for python-files; the grid's workloads are "
        "collect_and_write, allwrite, read_distribute, allread"
    )
    path = write_suite(WORKLOADS.replace("workloads", "patterns"))
    assert error_of(path) == (
        f"{path}:5: unknown pattern 'collect_and_write'; choose one of sfsw, sfmw, mfmw, sfmr, mfmr"
    )
    path = write_suite(WORKLOADS.replace('"allwrite"', '"streaming"'))
    assert error_of(path) == f"{path}:5: streaming is run by `hpcio profile`, not by a suite"


def test_listed_stripes_are_checked_point_by_point(write_suite):
    text = WORKLOADS + "stripe_count = [1, 2]\n"
    path = write_suite(text)
    message = error_of(path)
    assert message.startswith(f"{path}:4: collect_and_write 8 ranks 1 MiB/rank 1 stripe x1 on ")
    assert "only lfs setstripe can stripe it" in message
    path = write_suite(
        text.replace('"collect_and_write", ', "")
        .replace('"read_distribute", ', "")
        .replace('url = "file:///scratch/a"', 'url = "file:///scratch/a"\nstripe_count = 8')
    )
    assert error_of(path) == (
        f"{path}:3: 'stripe_count' is a list in [grid]: set it there, not per [[target]]"
    )
    path = write_suite(WORKLOADS.replace('sizes = ["1MiB", "4MiB"]\n', ""))
    assert error_of(path) == f"{path}:4: [grid] needs 'sizes'"


def test_every_shipped_suite_loads_at_every_scale():
    """Every suite in suites/ at its full scale and each named one; a scale that stripes the
    spokesperson codes' files needs lfs, and without it is refused in one line."""
    shipped = sorted(SUITES.glob("*.toml"))
    assert "netcdf.toml" in {p.name for p in shipped}
    for path in shipped:
        full = load_suite(path)
        assert full.points, path
        for scale in full.scales:
            try:
                assert load_suite(path, scale=scale).points, (path, scale)
            except SpecError as e:
                assert shutil.which("lfs") is None, e
                assert "only lfs setstripe can stripe it and there is no lfs here" in str(e)


def test_the_netcdf_suite_has_the_exercises_shape():
    full = load_suite(SUITES / "netcdf.toml")
    codes = ["collect_and_write", "allwrite", "read_distribute", "allread"]
    assert list(dict.fromkeys(p.workload.name for p in full.points)) == codes
    assert {p.ranks for p in full.points} == {8}
    assert {p.params.size_per_rank_bytes for p in full.points} == {MiB << k for k in range(3, 11)}
    small = load_suite(SUITES / "netcdf.toml", scale="small")
    assert list(dict.fromkeys(p.workload.name for p in small.points)) == codes
    assert {(p.ranks, p.stripe_count) for p in small.points} == {(8, None)}
    stripes = load_suite(SUITES / "netcdf.toml", scale="small-stripes")
    assert {(p.workload.name, p.stripe_count) for p in stripes.points} == {
        (w, c) for w in ("allwrite", "allread") for c in (1, 2, 4)
    }
    assert len({p.params.size_per_rank_bytes for p in stripes.points}) == 1


CASES = """\
[[target]]
url = "file:///scratch/a"

[[target]]
url = "s3://bucket-a/x"
cases = ["blosc"]

[grid]
workloads = ["volume"]
volume = "64x64x32"
ranks = [2, 4]

[[case]]
name = "segy"
library = "segy"

[[case]]
name = "zarr"
library = "zarr"
compression = "none"

[[case]]
name = "blosc"
library = "zarr"
compression = "blosc"
"""


def settings_of(point):
    return (point.target.url, point.ranks, point.params.library, point.params.compression)


def test_cases_are_points_of_their_own_and_a_target_runs_only_its_cases(write_suite):
    suite = load_suite(write_suite(CASES))
    made = {"segy": ("segy", "none"), "zarr": ("zarr", "none"), "blosc": ("zarr", "blosc")}
    runs = {"file:///scratch/a": ("segy", "zarr", "blosc"), "s3://bucket-a/x": ("blosc",)}
    assert [settings_of(p) for p in suite.points] == [
        (url, ranks, *made[case]) for ranks in (2, 4) for url in runs for case in runs[url]
    ]
    assert len({point_key(p.to_dict()) for p in suite.points}) == len(suite.points)


def test_target_override_keeps_cases_and_an_object_store_takes_the_object_store_s(write_suite):
    suite = load_suite(write_suite(CASES), targets=["file:///tmp/x", "az://container/y"])
    runs = {(p.target.url, p.params.library, p.params.compression) for p in suite.points}
    assert runs == {
        ("file:///tmp/x", "segy", "none"),
        ("file:///tmp/x", "zarr", "none"),
        ("file:///tmp/x", "zarr", "blosc"),
        ("az://container/y", "zarr", "blosc"),
    }


def test_cases_cross_the_listed_stripes(write_suite):
    text = """\
[[target]]
url = "file:///scratch/a"

[grid]
patterns = ["sfmw", "mfmw"]
sizes = "1MiB"
stripe_count = [1, 2]

[[case]]
name = "mpiio"
api = "mpiio"

[[case]]
name = "hdf5 collective"
api = "hdf5"
collective = true
"""
    suite = load_suite(write_suite(text))
    assert [(p.workload.name, p.stripe_count, p.params.api, p.params.collective)
            for p in suite.points] == [
        (pattern, stripes, api, collective)
        for pattern in ("sfmw", "mfmw")
        for stripes in (1, 2)
        for api, collective in (("mpiio", False), ("hdf5", True))
    ]  # fmt: skip


@pytest.mark.parametrize(
    ("change", "where", "message"),
    [
        (('cases = ["blosc"]', 'cases = ["blsoc"]'), 'cases = ["blsoc"]',
         "no case 'blsoc' (segy, zarr, blosc)"),
        (('name = "zarr"', 'name = "segy"'), 'name = "segy"', "two cases are named 'segy'"),
        (('name = "segy"\nlibrary = "segy"', 'name = "segy"\nlibrary = "segy"\nvolume = "8x8x8"'),
         'volume = "8x8x8"', "'volume' is set in [grid] too: set it in one place"),
        (('name = "segy"\nlibrary = "segy"', 'name = "segy"\nfiles_per_rank = 2'),
         "files_per_rank = 2", "'files_per_rank' is for"),
        (('name = "segy"\nlibrary = "segy"', 'name = "segy"'), "[[case]]",
         "case 'segy' sets no run option"),
        (('name = "segy"\n', 'nmae = "segy"\n'), 'nmae = "segy"', "unknown key 'nmae'"),
    ],
)  # fmt: skip
def test_bad_cases_are_one_line_at_their_line(write_suite, change, where, message):
    text = CASES.replace(*change)
    assert text != CASES
    lines = text.splitlines()
    line = lines.index(where) + 1
    if where == 'name = "segy"':  # the repeated name: the second one is the mistake
        line = lines.index(where, line) + 1
    assert error_of(write_suite(text)).startswith(f"{write_suite(text)}:{line}: {message}")


def test_the_rtm_suite_is_the_study_s_five_rows():
    suite = load_suite(SUITES / "rtm.toml")
    assert [(p.target.kind, p.params.library, p.params.compression) for p in suite.points] == [
        ("posix", "segy", "none"),
        ("posix", "hdf5", "none"),
        ("posix", "zarr", "none"),
        ("posix", "zarr", "blosc"),
        ("azure", "zarr", "blosc"),
    ]
    assert {p.params.volume for p in suite.points} == {(1000, 1000, 500)}
    small = load_suite(SUITES / "rtm.toml", scale="small", targets=["file:///tmp/x"])
    assert len(small.points) == 4


TRAINING = """\
[[target]]
url = "file:///scratch/a"

[grid]
workloads = ["unet3d"]
scale = "small"
samples = 56
epochs = 1
ranks = [1, 2, 4]

[[case]]
name = "a100"
accelerator = "a100"

[[case]]
name = "h100"
accelerator = "h100"
"""


def test_training_points_sweep_accelerator_counts(write_suite):
    suite = load_suite(write_suite(TRAINING))
    assert [(p.workload.name, p.ranks, p.params.accelerator) for p in suite.points] == [
        ("unet3d", ranks, accelerator) for ranks in (1, 2, 4) for accelerator in ("a100", "h100")
    ]
    assert {(p.params.scale, p.params.samples, p.params.epochs) for p in suite.points} == {
        ("small", 56, 1)
    }


@pytest.mark.parametrize(
    ("workload", "message"),
    [
        ("unet3d-datagen", "unet3d-datagen is not a suite's point: run `hpcio train datagen`"),
        ("llama3-8b", "llama3-8b is run by `hpcio checkpoint`, not by a suite"),
    ],
)
def test_what_a_suite_cannot_run_is_one_line(write_suite, workload, message):
    path = write_suite(TRAINING.replace('workloads = ["unet3d"]', f'workloads = ["{workload}"]'))
    assert message in error_of(path)


OBJECT_STORES = """\
[[target]]
url = "file:///scratch/a"
fsync = true

[object_store]
transfer = "8MiB"

[grid]
patterns = ["sfmw", "mfmw"]
sizes = ["1MiB", "16MiB"]
ranks = 4
transfer = "1MiB"
"""


def test_object_store_targets_take_the_suites_object_store_options(write_suite):
    path = write_suite(OBJECT_STORES)
    suite = load_suite(path, targets=["file:///scratch/b", "s3://bucket-a/x", "az://box/x"])
    transfers = {(p.target.kind, p.workload.name, p.params.size_per_rank_bytes):
                 p.params.transfer_bytes for p in suite.points}  # fmt: skip
    assert transfers[("posix", "sfmw", 16 * MiB)] == MiB
    assert transfers[("s3", "mfmw", 16 * MiB)] == 8 * MiB
    assert transfers[("azure", "sfmw", 16 * MiB)] == 8 * MiB
    # Under 8 MiB per rank the transfer is the size per rank, as everywhere in a grid.
    assert transfers[("azure", "sfmw", MiB)] == MiB


def test_a_point_whose_parts_the_store_refuses_is_left_out_there_and_said(write_suite):
    path = write_suite(OBJECT_STORES)
    suite = load_suite(path, targets=["file:///scratch/b", "s3://bucket-a/x", "az://box/x"])
    on_s3 = {(p.workload.name, p.params.size_per_rank_bytes)
             for p in suite.points if p.target.kind == "s3"}  # fmt: skip
    # N-1 of 1 MiB per rank: four 1 MiB parts, under S3's 5 MiB minimum; Azure takes them.
    assert on_s3 == {("mfmw", MiB), ("mfmw", 16 * MiB), ("sfmw", 16 * MiB)}
    assert len([p for p in suite.points if p.target.kind == "azure"]) == 4
    assert len([p for p in suite.points if p.target.kind == "posix"]) == 4
    assert len(suite.left_out) == 1
    assert suite.left_out[0].startswith("sfmw 4 ranks 1 MiB/rank x1 on s3://bucket-a/x: s3: ")
    assert "at least 5 MiB" in suite.left_out[0]


def test_a_suite_without_object_store_options_leaves_out_what_s3_refuses(write_suite):
    path = write_suite(OBJECT_STORES.replace('[object_store]\ntransfer = "8MiB"\n', ""))
    suite = load_suite(path, targets=["s3://bucket-a/x"])
    # 1 MiB transfers make 16 parts of 1 MiB: refused at either size, N-1 or N-N.
    assert [(p.workload.name, p.params.size_per_rank_bytes) for p in suite.points] == [
        ("mfmw", MiB)
    ]
    assert len(suite.left_out) == 3


def test_object_store_keys_are_checked(write_suite):
    path = write_suite(OBJECT_STORES.replace('transfer = "8MiB"', 'transfersize = "8MiB"'))
    with pytest.raises(SpecError, match="transfersize"):
        load_suite(path, targets=["s3://bucket-a/x"])
