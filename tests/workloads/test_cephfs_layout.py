"""The CephFS layout a run's stripe options make of a file's current one, and where stripe
options go to MPI-IO as hints that nothing applies, the warning that says so."""

import pytest
from hpcio.workloads import striping
from specs import run_spec

MiB = 1 << 20
DIRECTORY_DEFAULT = {"stripe_unit": 4 * MiB, "stripe_count": 1, "object_size": 4 * MiB}


@pytest.mark.parametrize(
    ("count", "unit", "expected"),
    [
        (4, 1 * MiB, {"stripe_unit": 1 * MiB, "stripe_count": 4, "object_size": 4 * MiB}),
        (2, None, {"stripe_unit": 4 * MiB, "stripe_count": 2, "object_size": 4 * MiB}),
        # An object must hold whole stripe units: 4 MiB objects grow to 6 MiB for 3 MiB units.
        (None, 3 * MiB, {"stripe_unit": 3 * MiB, "stripe_count": 1, "object_size": 6 * MiB}),
        (1, 8 * MiB, {"stripe_unit": 8 * MiB, "stripe_count": 1, "object_size": 8 * MiB}),
    ],
)
def test_the_layout_keeps_what_the_options_leave(tmp_path, count, unit, expected):
    run = run_spec("sfmw", f"file://{tmp_path}", size_per_rank_bytes=MiB, api="mpiio",
                   stripe_count=count, stripe_size_bytes=unit)  # fmt: skip
    assert striping.cephfs_layout(run, DIRECTORY_DEFAULT) == expected


def test_a_local_directory_is_not_cephfs(tmp_path):
    assert not striping.on_cephfs(str(tmp_path))
    assert not striping.on_cephfs(str(tmp_path / "not" / "made" / "yet"))


def test_hints_nothing_applies_are_said(tmp_path):
    run = run_spec("sfmw", f"file://{tmp_path}", size_per_rank_bytes=MiB, api="mpiio",
                   stripe_count=2)  # fmt: skip
    workload = run.workload
    if striping.method(run, workload) != striping.HINTS:
        pytest.skip("a Lustre client: lfs sets the layout")
    (said,) = striping.warnings(run, workload)
    assert "had no effect on the layout" in said
    no_stripes = run_spec("sfmw", f"file://{tmp_path}", size_per_rank_bytes=MiB, api="mpiio")
    assert striping.warnings(no_stripes, workload) == ()
