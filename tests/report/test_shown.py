"""What reports know of each workload without importing it (workloads/shown.py) is what the
registered workload itself says."""

import pytest
from hpcio.workloads import registry, shown
from hpcio.workloads.profiles import iozone

#: Settings that change some workload's label, and none at all.
SETTINGS = (
    {},
    {"api": "hdf5", "accelerator": "h100", "test": "random read", "lister": "prefix"},
    {"phases": ["write"], "library": "zarr", "compression": "blosc", "collective": True},
    {"phases": ["read"], "library": "segy", "log": "/traces/app.darshan", "api": "posix"},
)


@pytest.mark.parametrize("workload", registry.names())
def test_every_registered_workload_is_shown_as_it_says(workload):
    registered = registry.get(workload)
    assert shown.family_of(workload) == registered.family
    assert shown.sized_globally(workload) == registered.sized_globally
    assert shown.moves_data_set(workload) == registered.moves_data_set
    assert shown.shows_bandwidth(workload) == registered.shows_bandwidth
    for settings in SETTINGS:
        assert shown.label(workload, settings) == registered.label(settings)


def test_no_workload_is_shown_that_is_not_registered():
    assert set(shown.WORKLOADS) == set(registry.names())


def test_a_newer_hpcios_workload_is_shown_by_its_name():
    assert shown.label("made-later", {"api": "hdf5"}) == "made-later"
    assert shown.family_of("made-later") == ""
    assert shown.moves_data_set("made-later")
    assert shown.shows_bandwidth("made-later")


def test_iozone_columns_are_its_tests():
    assert shown.IOZONE_TESTS == iozone.TESTS
