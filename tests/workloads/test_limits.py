import dataclasses

import pytest
from hpcio.errors import SpecError
from hpcio.spec.model import RunSpec
from hpcio.spec.target import TargetSpec
from hpcio.workloads.limits import check_limits

MiB, GiB, TiB = 1 << 20, 1 << 30, 1 << 40
S3 = {"min_part_bytes": 5 * MiB, "max_part_bytes": 5 * GiB, "max_parts": 10_000,
      "max_object_bytes": 5 * TiB}  # fmt: skip
AZURE = {"min_part_bytes": 0, "max_part_bytes": 4000 * MiB, "max_parts": 50_000,
         "max_object_bytes": 50_000 * 4000 * MiB}  # fmt: skip


def spec(pattern="sfmw", url="s3://bucket/run", ranks=4, size=64 * MiB, part=8 * MiB):
    return RunSpec.build(pattern, target=TargetSpec.from_url(url), ranks=ranks,
                         size_per_rank_bytes=size, transfer_bytes=part)  # fmt: skip


def check(run, limits):
    """The check runner/run.py makes before any byte moves."""
    check_limits(run.target.kind, run.workload.objects_written(run), limits)


def test_parts_that_fit_pass():
    check(spec(), S3)
    check(spec("mfmw", size=5 * GiB, part=64 * MiB), S3)


def test_small_parts_are_refused_with_a_size_that_works():
    with pytest.raises(SpecError) as caught:
        check(spec(part=1 * MiB), S3)
    assert str(caught.value) == (
        "s3: multipart parts must be at least 5 MiB (except the last); --part-size is 1 MiB: "
        "use --part-size 8MiB or more"
    )


def test_one_put_needs_no_minimum_part():
    check(spec("mfmw", size=1 * MiB, part=1 * MiB), S3)


@pytest.mark.parametrize("pattern", ["sfmw", "sfsw"])
def test_an_upload_of_one_part_needs_no_minimum_part(pattern):
    # That one part is the last, which may be smaller than the minimum (S3 and GCS alike).
    check(spec(pattern, url="gs://bucket/run", ranks=1, size=1 * MiB, part=1 * MiB), S3)
    with pytest.raises(SpecError, match="at least 5 MiB"):
        check(spec(pattern, url="gs://bucket/run", ranks=2, size=1 * MiB, part=1 * MiB), S3)


def test_too_many_parts_names_a_part_size_that_fits():
    with pytest.raises(SpecError) as caught:
        check(spec(ranks=20, size=4 * GiB, part=5 * MiB), S3)
    message = str(caught.value)
    assert message.startswith("s3: at most 10,000 parts per object; the shared object (80 GiB)")
    assert message.endswith("is 16,384 parts: use --part-size 16MiB or more")
    check(spec(ranks=20, size=4 * GiB, part=16 * MiB), S3)


def test_azure_has_no_minimum_block_but_a_maximum():
    check(spec(url="az://container/run", part=64 * 1024), AZURE)
    with pytest.raises(SpecError, match=r"parts are at most 3\.9 GiB"):
        check(spec(url="az://container/r", size=8 * GiB, part=8 * GiB), AZURE)


def test_object_size_limit():
    with pytest.raises(SpecError, match="objects are at most 5 TiB"):
        check(spec(ranks=8, size=1 * TiB, part=1 * GiB), S3)


def test_single_put_limit_on_large_private_objects():
    with pytest.raises(SpecError, match="a single PUT is at most 5 GiB"):
        check(spec("mfmw", size=8 * GiB, part=8 * GiB), S3)


def test_memory_target_is_one_process():
    with pytest.raises(SpecError, match="memory:// lives inside one process: use -n 1"):
        spec(url="memory://x", ranks=2).validate()


def test_direct_is_refused_on_object_stores():
    run = spec("mfmw", url="s3://bucket/p", ranks=1, size=8 * MiB, part=8 * MiB)
    run = dataclasses.replace(run, direct=True)
    with pytest.raises(SpecError, match="no page cache to bypass"):
        run.validate()


def test_credentials_in_url_are_refused():
    with pytest.raises(SpecError, match="holds credentials"):
        TargetSpec.from_url("s3://AKIA:secret@bucket/prefix")
