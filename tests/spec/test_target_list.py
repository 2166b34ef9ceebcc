"""Several targets in one run (issue 28): parsing, the rank -> target mapping, the record."""

import pytest
from hpcio.errors import SpecError
from hpcio.spec.model import RunSpec
from hpcio.spec.target import parse_targets, target_of

TWO = "s3://hpcio-one/run,s3://hpcio-two/run?endpoint=http://127.0.0.1:9001"


def mfmw(targets: str, ranks: int = 4) -> RunSpec:
    found = parse_targets(targets, aws_secret_access_key="not-a-real-secret")
    return RunSpec.build(
        "mfmw", target=found[0], extra_targets=found[1:], ranks=ranks,
        size_per_rank_bytes=1 << 20,
    ).validate()  # fmt: skip


def test_a_comma_separated_list_gives_each_target_with_its_own_endpoint():
    one, two = parse_targets(TWO)
    assert (one.url, one.endpoint) == ("s3://hpcio-one/run", None)
    assert (two.url, two.endpoint) == ("s3://hpcio-two/run", "http://127.0.0.1:9001")
    assert two.options["aws_endpoint"] == "http://127.0.0.1:9001"
    assert "aws_endpoint" not in one.options


def test_one_target_parses_as_before():
    (only,) = parse_targets("s3://hpcio-one/run")
    assert only.url == "s3://hpcio-one/run" and only.endpoint is None


@pytest.mark.parametrize("rank,count,index", [(0, 2, 0), (1, 2, 1), (2, 2, 0), (5, 3, 2)])
def test_rank_r_uses_target_r_mod_k(rank, count, index):
    assert target_of(rank, count) == index


def test_each_rank_runs_on_its_own_target_alone():
    run = mfmw(TWO)
    assert [run.for_rank(r).target.url for r in range(4)] == [
        "s3://hpcio-one/run", "s3://hpcio-two/run", "s3://hpcio-one/run", "s3://hpcio-two/run",
    ]  # fmt: skip
    assert all(not run.for_rank(r).extra_targets for r in range(4))
    assert [each.target.url for each in run.each_target()] == [
        "s3://hpcio-one/run", "s3://hpcio-two/run",
    ]  # fmt: skip


def test_the_document_records_every_target_and_the_mapping_but_no_secret():
    record = mfmw(TWO).to_dict()
    assert record["target_mapping"] == "round-robin"
    assert [t["url"] for t in record["targets"]] == ["s3://hpcio-one/run", "s3://hpcio-two/run"]
    assert record["targets"][1]["endpoint"] == "http://127.0.0.1:9001"
    assert "not-a-real-secret" not in repr(record)
    again = RunSpec.from_dict(record)
    assert [t.shown for t in again.targets] == TWO.split(",")


def test_a_run_with_one_target_records_no_targets_list():
    record = mfmw("s3://hpcio-one/run", ranks=2).to_dict()
    assert "targets" not in record and "target_mapping" not in record


@pytest.mark.parametrize(
    "targets,ranks,words",
    [
        ("s3://hpcio-one/a,az://hpcio-two/a", 2, "of one kind"),
        ("file:///tmp/a,file:///tmp/b", 2, "object stores"),
        ("memory://,memory://b", 2, "object stores"),
        ("s3://hpcio-one/a,s3://hpcio-one/a", 2, "given twice"),
        ("s3://hpcio-one/a,,s3://hpcio-two/a", 2, "empty item"),
        ("s3://hpcio-one/a,s3://hpcio-two/a", 1, "at least 2 ranks"),
        ("s3://hpcio-one/a?aws_access_key_id=x", 1, "only its endpoint"),
        ("s3://hpcio-one/a?endpoint=ftp://h", 1, "not an http"),
    ],
)
def test_refusals_are_one_line(targets, ranks, words):
    with pytest.raises(SpecError, match=words):
        mfmw(targets, ranks)


@pytest.mark.parametrize("pattern", ["sfmw", "sfsw", "sfmr"])
def test_a_shared_object_over_several_targets_is_refused(pattern):
    found = parse_targets("null://,null://?delay=1ms")
    run = RunSpec.build(
        pattern, target=found[0], extra_targets=found[1:], ranks=2,
        size_per_rank_bytes=8 << 20, transfer_bytes=8 << 20,
    )  # fmt: skip
    with pytest.raises(SpecError, match="one shared object"):
        run.validate()


@pytest.mark.parametrize("command", [
    ("train", "unet3d"), ("checkpoint", "llama3-8b"), ("profile", "streaming"),
    ("replay", "x.darshan"),
])  # fmt: skip
def test_a_command_that_takes_one_target_refuses_several_in_one_line(hpcio, command):
    done = hpcio(*command, "--target", "null://?delay=1ms,null://?delay=2ms")
    assert done.returncode == 2
    (line,) = done.stderr.strip().splitlines()
    assert line.startswith("hpcio: error: target 'null://?delay=1ms,null://?delay=2ms': several")
    assert "give this command one" in line


def test_tune_with_more_targets_than_ranks_is_refused(hpcio):
    done = hpcio("tune", "--target", "null://?delay=1ms,null://?delay=2ms")
    assert done.returncode == 2
    assert done.stderr.strip() == ("hpcio: error: --target: 2 targets need at least 2 ranks "
                                   "(rank r uses target r mod 2); use -n 2 or more")  # fmt: skip


def test_env_describes_each_of_several_targets(hpcio):
    done = hpcio("env", "--target", "null://?delay=1ms,null://?delay=2ms")
    assert done.returncode == 0, done.stderr
    assert "target      null://?delay=1ms (null)" in done.stdout
    assert "target      null://?delay=2ms (null)" in done.stdout
