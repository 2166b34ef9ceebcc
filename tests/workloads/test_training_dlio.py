"""unet3d under DLIO's loader on one rank (memory://, no MPI): the figures it reports are
DLIO 2.0.0's formulas (statscounter.py) applied to the step timings the run itself recorded."""

import numpy as np
import pytest
from hpcio import _engine
from hpcio.runner.body import run_python_body
from hpcio.runner.world import SerialComm
from hpcio.spec.model import RunSpec
from hpcio.spec.target import TargetSpec
from hpcio.workloads.contract import Phase, PythonBody, RankInfo
from hpcio.workloads.training import loader, unet3d


def _trained(url="memory://", **params):
    where = TargetSpec.from_url(url)
    run = RunSpec.build("unet3d", target=where, scale="small", samples=21, epochs=2,
                        compute_time_s=0.005, **params).validate()  # fmt: skip
    target = _engine.Target(run.target.url)
    who = RankInfo(0, 1)
    run_python_body(SerialComm(), target, run, Phase.WRITE, who, PythonBody(loader.generate))
    figures = run_python_body(SerialComm(), target, run, Phase.READ, who,
                              PythonBody(loader.train))  # fmt: skip
    assert figures.errors == 0
    return run, figures


@pytest.mark.parametrize("shape", ["dlio", "hpcio"])
def test_au_and_rates_are_dlio_s_formulas_over_the_run_s_own_step_times(shape):
    run, figures = _trained(loader=shape)
    mine = figures.metrics
    reduced = unet3d.Unet3d().reduce_metrics([mine])
    au, rate, mib = [], [], []
    for times, epoch in zip(mine["step_times"], mine["epochs"], strict=True):
        load, compute, wall = times["load_s"], times["compute_s"], times["wall_s"]
        assert len(load) == len(compute) == 3
        # compute_metrics_train: sum(compute[1:]) / (end - start - proc[0]), proc[0] being
        # the first step's load and compute; throughput: len(compute) / (end - start) * batch.
        au.append(100 * sum(compute[1:]) / (wall - load[0] - compute[0]))
        rate.append(len(compute) / wall * 7)
        mib.append(epoch["read_bytes"] / wall / (1 << 20))
    assert reduced["au_percent"] == pytest.approx(np.mean(au))
    assert reduced["au_stdev_percent"] == pytest.approx(np.std(au))
    assert reduced["dlio_samples_per_s"] == pytest.approx(np.mean(rate))
    # end_run: "MB/second" = samples/s x record_length / 1024 / 1024.
    record = unet3d.record_bytes(run.params)
    assert reduced["dlio_io_mib_per_s"] == pytest.approx(np.mean(rate) * record / (1 << 20))
    assert reduced["dlio_io_mb_per_s"] == pytest.approx(np.mean(rate) * record / 1e6)
    assert reduced["throughput_mib_per_s"] == pytest.approx(np.mean(mib))
    assert reduced["loader"] == shape
    # Every byte counted in the throughput was read by this run's phase.
    read = sum(e["read_bytes"] for e in mine["epochs"])
    assert read == figures.bytes


def test_dlio_loader_reads_each_file_in_numpy_s_chunks(tmp_path):
    _, dlio = _trained(f"file://{tmp_path}")
    _, hpcio = _trained(f"file://{tmp_path}", loader="hpcio")
    assert dlio.bytes == hpcio.bytes
    # hpcio's shape: one whole-file read a sample; DLIO's np.load: 256 KiB calls.
    whole_file_reads = 2 * 3 * 7
    assert hpcio.ops == whole_file_reads
    assert dlio.ops >= -(-dlio.bytes // unet3d.NUMPY_CHUNK_BYTES)


def test_dlio_loader_gets_each_object_whole():
    # DLIO's object readers fetch an object whole before np.load sees it.
    _, figures = _trained()
    assert figures.ops == 2 * 3 * 7
