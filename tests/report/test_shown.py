"""What reports know of each workload (workloads/shown.py) is what the registered workload
declares, read in a process where the native engine cannot be imported."""

import json
import subprocess
import sys

from hpcio.workloads import registry, shown
from hpcio.workloads.profiles import iozone

#: Settings that change some workload's label, and none at all.
SETTINGS = (
    {},
    {"api": "hdf5", "accelerator": "h100", "test": "random read", "lister": "prefix"},
    {"phases": ["write"], "library": "zarr", "compression": "blosc", "collective": True},
    {"phases": ["read"], "library": "segy", "log": "/traces/app.darshan", "api": "posix"},
)

#: Prints every registered workload's shown facts, the engine blocked.
_READ_WITHOUT_ENGINE = """
import json, sys
sys.modules["hpcio._engine"] = None
from hpcio.workloads import registry, shown
settings = json.loads(sys.argv[1])
print(json.dumps({
    name: [shown.family_of(name), shown.sized_globally(name), shown.moves_data_set(name),
           shown.shows_bandwidth(name), [shown.label(name, s) for s in settings]]
    for name in registry.names()
}))
"""


def test_every_registered_workloads_facts_are_read_without_the_engine():
    done = subprocess.run(
        [sys.executable, "-c", _READ_WITHOUT_ENGINE, json.dumps(SETTINGS)],
        capture_output=True, text=True, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr.splitlines()[-1:]
    read = json.loads(done.stdout)
    assert list(read) == registry.names()
    for name, (family, sized, moves, bandwidth, labels) in read.items():
        declared = registry.get(name)
        assert family == declared.family
        assert sized == declared.sized_globally
        assert moves == declared.moves_data_set
        assert bandwidth == declared.shows_bandwidth
        assert labels == [declared.label(settings) for settings in SETTINGS]


def test_a_newer_hpcios_workload_is_shown_by_its_name():
    assert shown.label("made-later", {"api": "hdf5"}) == "made-later"
    assert shown.family_of("made-later") == ""
    assert not shown.sized_globally("made-later")
    assert shown.moves_data_set("made-later")
    assert shown.shows_bandwidth("made-later")


def test_iozone_columns_are_its_tests():
    assert shown.IOZONE_TESTS == iozone.TESTS
