import pytest
from hpcio import _engine, kinds
from hpcio.errors import SpecError
from hpcio.spec.target import TargetSpec

#: A URL of each kind the engine can open without a request (no credentials are looked up).
URLS = {
    "posix": ("file:///tmp", {}),
    "memory": ("memory://", {}),
    "s3": ("s3://bucket", {"aws_skip_signature": "true", "aws_region": "us-east-1"}),
    "azure": ("az://container", {"azure_storage_use_emulator": "true"}),
    "gcs": ("gs://bucket", {"google_skip_signature": "true"}),
    "null": ("null://?delay=1us", {}),
}


def test_every_row_is_a_kind_the_engine_opens_under_its_name():
    assert set(kinds.KINDS) == set(URLS)
    for name, (url, options) in URLS.items():
        assert _engine.Target(url, options=options).kind == name
        assert TargetSpec.from_url(url).kind == name


@pytest.mark.parametrize("name", sorted(URLS))
def test_part_limits_are_the_engines(name):
    url, options = URLS[name]
    engine = _engine.Target(url, options=options).limits()
    row = kinds.of(name).limits
    assert (row.min_part_bytes, row.max_part_bytes, row.max_parts) == (
        engine["min_part_bytes"],
        engine["max_part_bytes"],
        engine["max_parts"],
    )
    assert bool(engine["multipart"]) == bool(kinds.of(name).uploads)


def test_only_object_stores_have_store_classes_containers_and_uploads():
    for row in kinds.KINDS.values():
        if not row.object_store:
            assert row.store_class is None and row.container is None and not row.uploads
        if row.in_process or not row.keeps:
            assert not row.priced and not row.credentials and row.no_credentials
        if not row.keeps:
            assert not row.lasting and row.measures


def test_pricing_classes_group_the_kinds_that_make_the_same_requests():
    assert kinds.pricing_class("s3") == kinds.pricing_class("gcs") == kinds.pricing_class("memory")
    assert kinds.pricing_class("azure") != kinds.pricing_class("s3")
    assert kinds.pricing_class("tape") == ""
    assert kinds.priced_kinds() == ("s3", "azure", "gcs")
    assert set(kinds.object_kinds()) == {"s3", "azure", "gcs", "memory", "null"}


def test_an_unknown_kind_is_one_clear_error():
    with pytest.raises(SpecError, match="unknown target kind 'tape'; known: posix, s3"):
        kinds.of("tape")
