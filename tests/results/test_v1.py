"""Schema version 1 documents, as hpcio wrote them before the workload registry (tests/results/v1/:
real output of the tree at 424e0f7 on file:///scratch/hpcio-v1), are still read: upgraded to
version 2 (results/v1.py), reported, and their points count as done when a sweep resumes."""

import dataclasses
import json
from pathlib import Path

import pytest
from hpcio.results import io as results_io
from hpcio.results.check import check_record
from hpcio.results.v1 import upgrade
from hpcio.spec.model import RunSpec
from hpcio.spec.sweep import grid, pending
from hpcio.spec.target import TargetSpec
from hpcio.workloads import registry
from hpcio.workloads.profiles import iozone

STORED = Path(__file__).resolve().parent / "v1"
URL = "file:///scratch/hpcio-v1"
KiB = 1 << 10
#: The options version 1 recorded for every run beside the pattern's.
COMMON = {"target", "ranks", "iterations", "seed", "phases", "verify", "keep", "direct", "fsync"}


def records(name):
    return [json.loads(line) for line in (STORED / f"{name}.jsonl").read_text().splitlines()]


def declared(workload):
    return {f.name for f in dataclasses.fields(registry.get(workload).params)}


def test_the_stored_documents_are_version_1():
    for name in ("patterns", "profile", "iozone", "sweep"):
        for record in records(name):
            assert record["schema_version"] == 1 and "pattern" in record["run"]


@pytest.mark.parametrize("index", range(8))
def test_a_pattern_s_run_becomes_its_workload_and_params(index):
    record = records("patterns")[index]
    old = record["run"]
    new = upgrade(record)
    run = new["run"]
    assert new["schema_version"] == 2 and record["schema_version"] == 1  # a copy
    assert run["workload"] == old["pattern"]
    # Exactly the params the pattern declares now, with the values version 1 recorded.
    assert set(run["params"]) == declared(old["pattern"])
    for name, value in run["params"].items():
        assert value == old.get(name, value)
    assert "pattern" not in run and "size_per_rank_bytes" not in run
    assert set(run) >= COMMON and all(run[k] == old[k] for k in COMMON)
    assert (run["drop_caches"], run["ranks_per_node"]) == (False, None)
    spec = RunSpec.from_dict(run).validate()
    assert spec.workload.name == old["pattern"]
    assert spec.params.size_per_rank_bytes == old["size_per_rank_bytes"]
    check_record(new)


def test_options_version_1_left_out_at_their_default_are_filled_in():
    plain, timed = (r["run"] for r in records("patterns") if r["run"]["pattern"] == "mfmw")
    assert "files_per_rank" not in plain
    params = upgrade({"run": plain})["run"]["params"]
    assert (params["files_per_rank"], params["random_offsets"], params["duration_s"]) == (
        1, False, None,
    )  # fmt: skip
    params = upgrade({"run": timed})["run"]["params"]
    assert (params["files_per_rank"], params["random_offsets"], params["duration_s"]) == (
        2, True, 0.2,
    )  # fmt: skip
    sfsw = next(r["run"] for r in records("patterns") if r["run"].get("fsync"))
    assert upgrade({"run": sfsw})["run"]["params"]["gather_chunk_bytes"] == 128 * KiB


def test_a_profile_s_run_becomes_the_profile():
    max_latency, small_wss = (upgrade(r)["run"] for r in records("profile"))
    assert (max_latency["workload"], small_wss["workload"]) == ("max-latency", "small-wss")
    assert set(max_latency["params"]) == declared("max-latency")
    assert max_latency["params"]["random_offsets"] is True
    assert (small_wss["params"]["in_flight"], small_wss["direct"]) == (32, True)
    for run in (max_latency, small_wss):
        assert "profile" not in run and "pattern" not in run
        assert RunSpec.from_dict(run).validate().workload.name == run["workload"]


def test_an_iozone_run_becomes_iozone_with_its_test():
    runs = [upgrade(r)["run"] for r in records("iozone")]
    assert {r["workload"] for r in runs} == {"iozone"}
    assert [r["params"]["test"] for r in runs] == list(iozone.TESTS)
    assert [r["params"]["random_offsets"] for r in runs] == [False] * 4 + [True] * 2
    assert set(runs[0]["params"]) == declared("iozone")
    assert RunSpec.from_dict(runs[-1]).params.test == "random write"


def test_a_version_2_run_is_left_as_it_is():
    run = upgrade(records("patterns")[0])["run"]
    assert upgrade({"run": run})["run"] == run


@pytest.mark.parametrize("name", ["patterns", "profile", "iozone", "sweep"])
def test_version_1_files_are_read_as_version_2_documents(name):
    docs = results_io.read(STORED / f"{name}.jsonl")
    assert [d.schema_version for d in docs] == [2] * len(docs)
    assert [d.workload for d in docs] == [upgrade(r)["run"]["workload"] for r in records(name)]


@pytest.mark.parametrize("name", ["patterns", "profile", "iozone"])
def test_report_reads_version_1_files(hpcio, name):
    done = hpcio("report", STORED / f"{name}.jsonl")
    assert (done.returncode, done.stderr) == (0, "")


def sweep_specs(transfer=64 * KiB):
    specs = []
    for pattern in ("sfmw", "mfmw"):
        base = RunSpec.build(pattern, target=TargetSpec.from_url(URL), ranks=2,
                             size_per_rank_bytes=128 * KiB, transfer_bytes=transfer)  # fmt: skip
        specs += grid(base, [128 * KiB, 256 * KiB])
    return specs


def test_a_resumed_sweep_counts_a_version_1_point_as_done():
    done = results_io.done_runs(STORED / "sweep.jsonl")
    assert [r["workload"] for r in done] == ["sfmw", "sfmw", "mfmw", "mfmw"]
    assert pending(sweep_specs(), done) == []
    # A point that differs (another transfer) is still to run.
    assert len(pending(sweep_specs(transfer=128 * KiB), done)) == 4
    assert len(pending(sweep_specs(), done[:3])) == 1


@pytest.mark.mpi  # -n 2 starts mpiexec, even with nothing left to run
def test_hpcio_sweep_resumes_from_a_version_1_file(hpcio, target_dir, file_url, tmp_path):
    out = tmp_path / "out.jsonl"
    out.write_text((STORED / "sweep.jsonl").read_text().replace(URL, file_url(target_dir)))
    done = hpcio("sweep", "--pattern", "sfmw,mfmw", "--sizes", "128KiB..256KiB", "--transfer",
                 "64KiB", "-n", "2", "--target", file_url(target_dir), "-o", out)  # fmt: skip
    assert (done.returncode, done.stderr) == (0, "")
    assert done.stdout.startswith(f"hpcio sweep: 4 points, 4 already in {out}, 0 to run")
    assert len(out.read_text().splitlines()) == 4
