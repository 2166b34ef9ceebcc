"""The in-flight depth a run gets when it does not set --in-flight: its target kind's (8 on
cloud stores, within a 128 MiB buffer budget), 1 on a file system and the in-process kinds."""

import pytest
from hpcio import kinds
from hpcio.spec.model import RunSpec
from hpcio.spec.target import TargetSpec

MiB = 1 << 20


def _run(url: str, **settings) -> RunSpec:
    return RunSpec.build(
        "sfmw", target=TargetSpec.from_url(url), size_per_rank_bytes=256 * MiB, **settings
    ).validate()


@pytest.mark.parametrize("url", ["s3://bucket/run", "az://container/run", "gs://bucket/run"])
def test_a_cloud_store_gets_several_requests_in_flight(url):
    run = _run(url, transfer_bytes=16 * MiB)
    assert run.params.in_flight == 8
    # The document records the depth that ran.
    assert run.to_dict()["params"]["in_flight"] == 8


@pytest.mark.parametrize("url", ["file:///tmp/run", "memory://", "null://"])
def test_a_file_system_and_the_in_process_kinds_keep_one(url):
    assert _run(url, transfer_bytes=16 * MiB).params.in_flight == 1


def test_large_transfers_lower_the_default_to_the_buffer_budget():
    for transfer in (32 * MiB, 64 * MiB, 256 * MiB):
        depth = _run("s3://bucket/run", transfer_bytes=transfer).params.in_flight
        assert depth == max(1, kinds.DEFAULT_BUFFER_BYTES // transfer)
        assert depth * transfer <= max(transfer, kinds.DEFAULT_BUFFER_BYTES)


def test_a_depth_given_is_kept():
    assert _run("s3://bucket/run", transfer_bytes=16 * MiB, in_flight=1).params.in_flight == 1
    assert _run("file:///tmp/run", in_flight=4).params.in_flight == 4


def test_a_document_read_back_keeps_its_depth():
    run = _run("s3://bucket/run", transfer_bytes=16 * MiB, in_flight=1)
    assert RunSpec.from_dict(run.to_dict()).params.in_flight == 1
