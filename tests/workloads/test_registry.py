"""The workload registry: every workload by name, a close name suggested for a typo, and each
workload's params a frozen dataclass that round-trips through a document's record."""

import dataclasses

import pytest
from hpcio.errors import SpecError
from hpcio.spec.model import RunSpec
from hpcio.workloads import registry
from hpcio.workloads.profiles import storage
from replay_logs import app_trace
from specs import run_spec

PATTERNS = ["sfsw", "sfmw", "mfmw", "sfmr", "mfmr"]
MiB = 1 << 20


def refusal(name, family=None):
    with pytest.raises(SpecError) as caught:
        registry.get(name, family)
    return str(caught.value)


def test_every_workload_by_name_and_family():
    assert registry.names("pattern") == PATTERNS
    assert registry.names("profile") == list(storage.PROFILES)
    assert registry.names("iozone") == ["iozone"]
    assert registry.names()[:11] == [*PATTERNS, *storage.PROFILES, "iozone"]
    assert set(registry.names()) == set(registry.ENTRIES)
    for name in registry.names():
        assert registry.get(name).name == name
    assert registry.family_of("streaming") == "profile"
    assert registry.family_of("a-newer-hpcio-s") == ""
    assert registry.label("a-newer-hpcio-s", {}) == "a-newer-hpcio-s"
    assert registry.label("iozone", {"test": "random read"}) == "iozone random read"


@pytest.mark.parametrize("name", registry.names())
def test_each_entry_says_what_its_workload_says(name):
    # The option path reads the entry without importing the workload: they must agree.
    entry, workload = registry.ENTRIES[name], registry.get(name)
    assert (entry.family, entry.params, entry.runs_alone, entry.in_suites) == (
        workload.family,
        workload.params,
        workload.runs_alone,
        workload.in_suites,
    )
    assert registry.get(name) is workload


def test_a_flag_means_one_field_across_every_workload():
    registry.check_flags()


@pytest.mark.parametrize(
    ("name", "family", "message"),
    [
        ("mfwm", None, "unknown workload 'mfwm'; did you mean 'mfmw'?"),
        ("streming", None, "unknown workload 'streming'; did you mean 'streaming'?"),
        ("sfmr ", "pattern", "unknown pattern 'sfmr '; did you mean 'sfmr'?"),
        ("max_latency", "profile", "unknown profile 'max_latency'; did you mean 'max-latency'?"),
        ("xyz", "pattern", "unknown pattern 'xyz'; choose one of sfsw, sfmw, mfmw, sfmr, mfmr"),
        # A workload of another family is not taken for one of this family.
        ("streaming", "pattern", "unknown pattern 'streaming'; choose one of sfsw, sfmw"),
    ],
)
def test_an_unknown_name_gets_the_closest_one_or_the_list(name, family, message):
    assert refusal(name, family).startswith(message)


def test_own_keys_are_what_clean_may_remove():
    for key in ("hpcio-rank000001.dat", "hpcio-rank000001-file000031.dat", "hpcio-shared.dat",
                "hpcio-single.dat"):  # fmt: skip
        assert registry.is_own_key(key), key
    for key in ("hpcio-rank1.dat", "results.jsonl", "hpcio-shared.dat.bak", "data.dat"):
        assert not registry.is_own_key(key), key


@pytest.mark.parametrize("name", registry.names())
def test_each_workload_s_params_round_trip_through_a_document(name, tmp_path):
    workload = registry.get(name)
    model = getattr(workload, "model", None)  # a checkpoint runs at its model's ranks
    ranks = model.ranks if model is not None else 2
    log = str(app_trace(tmp_path))  # what a replay replays
    run = run_spec(name, ranks=ranks, size_per_rank_bytes=2 * MiB, transfer_bytes=MiB, log=log)
    assert isinstance(run.params, workload.params)
    assert dataclasses.is_dataclass(run.params)
    first = dataclasses.fields(run.params)[0].name
    with pytest.raises(dataclasses.FrozenInstanceError):
        setattr(run.params, first, 1)
    record = run.to_dict()
    assert record["workload"] == name
    assert set(record["params"]) == {f.name for f in dataclasses.fields(workload.params)}
    assert RunSpec.from_dict(record) == run
    assert workload.keys(run)  # every workload names what it creates, for removal
