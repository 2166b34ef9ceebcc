import dataclasses
import json

import pytest
from hpcio.errors import SpecError
from hpcio.spec.model import RunSpec
from hpcio.spec.target import TargetSpec
from hpcio.workloads import registry
from hpcio.workloads.patterns.common import block_bytes, file_bytes

KiB, MiB = 1 << 10, 1 << 20


POSIX = TargetSpec.from_url("file:///tmp/x")


def spec(pattern="sfmw", target=POSIX, **changes):
    """An unvalidated run; `changes` are common settings and params by field name."""
    settings = dict(ranks=4, size_per_rank_bytes=MiB, transfer_bytes=256 * KiB)
    return RunSpec.build(pattern, target=target, **{**settings, **changes})


def refused(pattern="sfmw", **changes):
    with pytest.raises(SpecError) as caught:
        spec(pattern, **changes).validate()
    message = str(caught.value)
    assert "\n" not in message
    return message


def test_valid_spec_validates_to_itself():
    run = spec(segments=2, transfer_bytes=128 * KiB)
    assert run.validate() is run
    assert block_bytes(run) == 512 * KiB
    assert file_bytes(run) == 4 * MiB


def test_size_not_multiple_of_transfer():
    message = refused(transfer_bytes=384 * KiB)
    assert message == "size per rank (1 MiB) is not a multiple of the transfer (384 KiB)"


def test_block_not_multiple_of_transfer_names_segments():
    message = refused(segments=4, transfer_bytes=512 * KiB)
    assert message == (
        "size per rank / segments (256 KiB) is not a multiple of the transfer (512 KiB)"
    )


def test_segments_must_divide_size():
    assert refused(segments=3) == "--size-per-rank 1 MiB does not split into 3 equal segments"


def test_direct_needs_aligned_transfer():
    message = refused(direct=True, size_per_rank_bytes=3000, transfer_bytes=1000)
    assert message == "--direct needs a transfer that is a multiple of 4 KiB, got 1000 B"
    assert spec(direct=True).validate().direct


def test_unknown_workload_lists_the_known_ones():
    with pytest.raises(SpecError) as caught:
        spec("nn")
    assert str(caught.value).startswith(
        "unknown workload 'nn'; choose one of sfsw, sfmw, mfmw, sfmr, mfmr, streaming"
    )


def test_params_of_another_workload_are_refused():
    run = dataclasses.replace(spec("sfmr"), workload=registry.get("mfmw"))
    with pytest.raises(SpecError, match="mfmw takes FilePerRankParams parameters"):
        run.validate()


@pytest.mark.parametrize("pattern", ["sfmr", "mfmr"])
def test_reading_patterns_refuse_write_phase(pattern):
    message = refused(pattern, phases=("write",))
    assert message.startswith(f"{pattern} only reads")
    assert "--phases read" in message
    assert spec(pattern, phases=("read",)).validate().phases == ("read",)


@pytest.mark.parametrize("phases", [(), ("wrte",), ("write", "verify")])
def test_unknown_phases(phases):
    assert refused(phases=phases).startswith("--phases takes write, read or write,read")


@pytest.mark.parametrize(
    ("pattern", "field", "least"),
    [
        ("sfmw", "ranks", "-n must be at least 1"),
        ("sfmw", "size_per_rank_bytes", "--size-per-rank must be at least 1 byte"),
        ("sfmw", "transfer_bytes", "--transfer must be at least 1 byte"),
        ("sfmw", "segments", "--segments must be at least 1"),
        ("sfmw", "iterations", "-i must be at least 1"),
        ("sfsw", "gather_chunk_bytes", "--gather-chunk must be at least 1 byte"),
        ("sfmw", "in_flight", "--in-flight must be at least 1"),
        ("mfmw", "files_per_rank", "--files-per-rank must be at least 1"),
    ],
)
def test_counts_must_be_positive(pattern, field, least):
    """Also for a spec made in code or read back from a document, not typed."""
    assert refused(pattern, **{field: 0}) == f"{least}, got 0"


def test_read_scope_must_be_known():
    message = refused("sfmr", read_scope="some")
    assert message.startswith("--read-scope") and "all, own" in message and "'some'" in message


def test_spec_errors_are_value_errors():
    with pytest.raises(ValueError):
        spec(segments=3).validate()


def test_to_dict_from_dict_round_trip():
    run = spec(
        "sfmr",
        segments=2,
        iterations=3,
        fsync=True,
        verify=True,
        reorder=True,
        seed=9,
        phases=("read",),
        read_scope="own",
    )
    record = run.to_dict()
    assert record["target"] == {"url": "file:///tmp/x", "kind": "posix", "options": []}
    assert record["workload"] == "sfmr"
    assert record["params"] == {
        "size_per_rank_bytes": MiB,
        "transfer_bytes": 256 * KiB,
        "in_flight": 1,
        "reorder": True,
        "api": "posix",
        "collective": False,
        "hints": (),
        "chunk_bytes": None,
        "segments": 2,
        "read_scope": "own",
    }
    assert "size_per_rank_bytes" not in record  # params are the workload's, not the run's
    assert RunSpec.from_dict(record) == run
    assert RunSpec.from_dict(json.loads(json.dumps(record))) == run


def test_round_trip_of_default_phases():
    run = spec()
    assert run.to_dict()["phases"] is None
    assert RunSpec.from_dict(json.loads(json.dumps(run.to_dict()))) == run


def test_to_dict_never_records_option_values():
    run = spec(target=TargetSpec.from_url("file:///tmp/x", secret_key="hunter2"))
    text = json.dumps(run.to_dict())
    assert "hunter2" not in text
    assert run.to_dict()["target"]["options"] == ["secret_key"]
    assert "hunter2" not in repr(run)


@pytest.mark.parametrize(
    ("url", "expected"),
    [
        ("file:///tmp/x", "file:///tmp/x"),
        ("file:///tmp/x/", "file:///tmp/x"),
        ("file:///", "file:///"),
    ],
)
def test_target_from_url(url, expected):
    target = TargetSpec.from_url(url)
    assert (target.url, target.kind) == (expected, "posix")
    assert target.path == expected.removeprefix("file://")


@pytest.mark.parametrize("url", ["file://tmp/x", "file:tmp/x", "file://"])
def test_target_rejects_relative_paths(url):
    with pytest.raises(SpecError) as caught:
        TargetSpec.from_url(url)
    assert str(caught.value) == f"target '{url}': use an absolute path, e.g. file:///scratch/hpcio"


@pytest.mark.parametrize("url", ["ftp://host/x", "nfs://server/export"])
def test_target_rejects_unknown_schemes(url):
    with pytest.raises(SpecError) as caught:
        TargetSpec.from_url(url)
    assert str(caught.value) == (
        f"target '{url}': unknown scheme; supported: file://, s3://, az://, gs://, memory://, "
        "null://"
    )


@pytest.mark.parametrize(
    ("path", "url"),
    [
        ("/scratch/me", "file:///scratch/me"),
        ("/scratch/me/", "file:///scratch/me"),
        ("/", "file:///"),
    ],
)
def test_a_plain_absolute_path_is_a_file_target(path, url):
    target = TargetSpec.from_url(path)
    assert (target.url, target.kind, target.path) == (url, "posix", url.removeprefix("file://"))
    assert target == TargetSpec.from_url(url)


@pytest.mark.parametrize("url", ["tmp/x", "./x", "scratch"])
def test_a_relative_plain_path_is_refused_with_the_way_out(url):
    with pytest.raises(SpecError) as caught:
        TargetSpec.from_url(url)
    assert str(caught.value).startswith(
        f"target '{url}': give an absolute path (/scratch/hpcio) or a URL; supported: file://"
    )


def test_a_run_crosses_ranks_holding_the_registrys_workload():
    import pickle

    run = spec("mfmw")
    again = pickle.loads(pickle.dumps(run))
    assert again.workload is registry.get("mfmw")
    assert again == run
    assert again.to_dict()["workload"] == "mfmw"
