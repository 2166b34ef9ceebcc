"""unet3d under DLIO's loader on one rank (memory://, no MPI): the figures it reports are
DLIO 2.0.0's formulas (statscounter.py) applied to the step timings the run itself recorded."""

import numpy as np
import pytest
from hpcio import _engine
from hpcio.errors import SpecError
from hpcio.runner.body import run_python_body
from hpcio.runner.stage import Stage
from hpcio.runner.world import SerialComm
from hpcio.spec.model import RunSpec
from hpcio.spec.target import TargetSpec
from hpcio.units import format_bytes
from hpcio.workloads.contract import Phase, PythonBody, RankInfo
from hpcio.workloads.training import loader, unet3d


def _trained(url="memory://", **params):
    where = TargetSpec.from_url(url)
    run = RunSpec.build("unet3d", target=where, scale="small", samples=21, epochs=2,
                        compute_time_s=0.005, **params).validate()  # fmt: skip
    target = _engine.Target(run.target.url)
    who = RankInfo(0, 1)
    run_python_body(Stage(SerialComm(), target, run, who), Phase.WRITE, PythonBody(loader.generate))
    figures = run_python_body(
        Stage(SerialComm(), target, run, who), Phase.READ, PythonBody(loader.train)
    )
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


def _dlio_data_set(root, files=16, side=48, subfolders=0):
    """What DLIO's npz generator writes: train/img_NN_of_N.npz (x: dim1 x dim2 x samples per
    file uint8, y: the labels), and valid/."""
    rng = np.random.default_rng(0)
    digits = len(str(files))
    for index in range(files):
        folder = root / "train"
        if subfolders:
            folder = folder / str(index % subfolders)
        folder.mkdir(parents=True, exist_ok=True)
        records = rng.integers(0, 255, (side + index, side, 1), dtype=np.uint8)
        np.savez(folder / f"img_{index:0{digits}d}_of_{files}.npz", x=records, y=[0])
    (root / "valid").mkdir()
    return sorted((root / "train").rglob("*.npz"), key=lambda p: p.name)


def test_a_dlio_data_set_is_listed_and_said(hpcio, target_dir, file_url):
    files = _dlio_data_set(target_dir)
    total = sum(p.stat().st_size for p in files)
    done = hpcio("train", "unet3d", "--target", file_url(target_dir), "--samples", 12,
                 "--batch", 2, "--dry-run")  # fmt: skip
    assert done.returncode == 0, done.stderr
    said = (
        f"DLIO's data set found in {target_dir}/train: 16 file(s), {format_bytes(total)}, the "
        f"first 12 read ({format_bytes(sum(p.stat().st_size for p in files[:12]))})"
    )
    assert said in done.stdout


def test_training_reads_the_dlio_files_it_found(hpcio, target_dir, file_url, tmp_path,
                                                read_documents):  # fmt: skip
    files = _dlio_data_set(target_dir, files=8, subfolders=2)
    out = tmp_path / "t.jsonl"
    done = hpcio("train", "unet3d", "--target", file_url(target_dir), "--batch", 2,
                 "--epochs", 2, "--compute-time", "0.001", "-q", "-o", out)  # fmt: skip
    assert done.returncode == 0, done.stderr
    (doc,) = read_documents(out)
    (phase,) = doc["phases"]
    # 8 files, 4 steps of 2 at one rank: every file read once an epoch, at its own size.
    assert phase["bytes_total"] == 2 * sum(p.stat().st_size for p in files)
    assert phase["requests"]["open"] == 2 * 8
    assert phase["errors"] == 0
    assert sorted(p.name for p in target_dir.rglob("*.npz")) == sorted(p.name for p in files)


def test_an_old_flat_hpcio_data_set_is_still_read(tmp_path):
    from hpcio.workloads.training import dataset

    old = dataset.DataSet("small", 4, 1, flat=True)
    for index in range(4):
        (tmp_path / old.key(index)).write_bytes(b"")
    run = RunSpec.build("unet3d", target=TargetSpec.from_url(f"file://{tmp_path}"),
                        scale="small", samples=4, batch=1).validate()  # fmt: skip
    assert unet3d.data_set(run) == old
    new = dataset.DataSet("small", 4, 1)
    (tmp_path / new.key(0)).parent.mkdir(parents=True)
    (tmp_path / new.key(0)).write_bytes(b"")
    assert unet3d.data_set(run) == new  # a data set of DLIO's layout wins


UNET3D_H100 = """
model: unet3d
framework: pytorch
workflow: {generate_data: False, train: True, checkpoint: True}
dataset:
  data_folder: data/unet3d/
  format: npz
  num_files_train: 28
  num_samples_per_file: 1
  record_length: 146600628
  record_length_stdev: 68341808
  record_length_resize: 2097152
reader: {data_loader: pytorch, batch_size: 7, read_threads: 4, prefetch_size: 8,
         file_shuffle: seed, sample_shuffle: seed}
train: {epochs: 3, computation_time: 0.323}
checkpoint: {checkpoint_folder: checkpoints/unet3d, checkpoint_after_epoch: 5}
metric: {au: 0.90}
"""


def test_a_dlio_workload_file_sets_the_run(hpcio, tmp_path, read_documents):
    config = tmp_path / "unet3d_h100.yaml"
    config.write_text(UNET3D_H100)
    out = tmp_path / "d.jsonl"
    # The flags given override the file's values.
    done = hpcio("train", "unet3d", "--target", "memory://", "--dlio-config", config,
                 "--epochs", 2, "--dry-run", "-o", out)  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert "h100, 28 sample(s) (full scale), batch 7, 4 step(s) x 2 epoch(s), 0.323 s" in (
        done.stdout
    )
    assert "DLIO's loader: 4 worker(s) x 2 batch(es), 2.0 MiB handed over" in done.stdout
    assert "left to hpcio checkpoint: workflow.checkpoint, checkpoint.checkpoint_folder" in (
        done.stderr
    )


@pytest.mark.parametrize(
    ("change", "named"),
    [
        (("format: npz", "format: tfrecord"), "dataset.format: 'tfrecord' (only 'npz'"),
        (("num_samples_per_file: 1", "num_samples_per_file: 1251"),
         "dataset.num_samples_per_file: 1251 (only 1"),
        (("record_length: 146600628", "record_length: 114660"), "dataset.record_length 114660"),
        (("data_loader: pytorch", "data_loader: tensorflow"), "reader.data_loader: 'tensorflow'"),
        (("metric: {au: 0.90}", "metric: {au: 0.70}"), "metric.au: 0.7"),
        (("metric: {au: 0.90}", "evaluation: {eval_time: 1}"),
         "evaluation.eval_time (hpcio does not evaluate)"),
        (("metric: {au: 0.90}", "bogus: 1"), "bogus (unknown to hpcio)"),
    ],
)  # fmt: skip
def test_what_hpcio_cannot_emulate_is_refused_by_name(hpcio, tmp_path, error_line, change,
                                                      named):  # fmt: skip
    config = tmp_path / "w.yaml"
    config.write_text(UNET3D_H100.replace(*change))
    done = hpcio("train", "unet3d", "--target", "memory://", "--dlio-config", config,
                 "--dry-run")  # fmt: skip
    assert done.returncode == 2
    line = error_line(done)
    assert line.startswith(f"hpcio: error: --dlio-config {config}: hpcio cannot emulate ")
    assert named in line
    assert "Traceback" not in done.stderr


def test_a_missing_or_broken_dlio_file_is_one_line(hpcio, tmp_path, error_line):
    done = hpcio("train", "unet3d", "--target", "memory://", "--dlio-config",
                 tmp_path / "none.yaml", "--dry-run")  # fmt: skip
    assert done.returncode == 2
    assert error_line(done).startswith(f"hpcio: error: --dlio-config {tmp_path}/none.yaml: ")
    broken = tmp_path / "b.yaml"
    broken.write_text("dataset: [unclosed\n")
    done = hpcio("train", "unet3d", "--target", "memory://", "--dlio-config", broken,
                 "--dry-run")  # fmt: skip
    assert done.returncode == 2
    assert "not YAML" in error_line(done)


def test_dlio_s_step_knobs(tmp_path):
    # total_training_steps caps an epoch; more than the data set gives is refused, as DLIO.
    run, figures = _trained(f"file://{tmp_path}", training_steps=2)
    assert figures.metrics["steps_per_epoch"] == 2
    assert [len(t["load_s"]) for t in figures.metrics["step_times"]] == [2, 2]
    with pytest.raises(SpecError, match="--training-steps 4: 21 sample"):
        RunSpec.build("unet3d", target=run.target, scale="small", samples=21,
                      training_steps=4).validate()  # fmt: skip
    # computation_time_stdev: each step's compute its own draw.
    _, spread = _trained(compute_stdev_s=0.004)
    computes = [c for t in spread.metrics["step_times"] for c in t["compute_s"]]
    assert len({round(c, 4) for c in computes}) > 1


def test_dlio_s_shuffle_modes():
    off = loader.dlio_batches(7, 0, 12, 1, 2, 3, 2, "off")
    assert off.ravel().tolist() == [6, 7, 8, 9, 10, 11]  # rank 1's contiguous half, in order
    seeded = [loader.dlio_batches(7, 0, 12, r, 2, 3, 2, "seed").ravel() for r in (0, 1)]
    assert sorted(np.concatenate(seeded).tolist()) == list(range(12))
    # Unseeded, each rank its own order (as DLIO's ranks): only the share's size is sure.
    assert loader.dlio_batches(7, 0, 12, 1, 2, 3, 2, "random").shape == (3, 2)


def test_dlio_s_step_knobs_are_read_under_their_names(tmp_path):
    from hpcio.workloads.training import dlio_config

    config = tmp_path / "w.yaml"
    config.write_text(UNET3D_H100.replace(
        "train: {epochs: 3, computation_time: 0.323}",
        "train: {epochs: 3, computation_time: 0.323, computation_time_stdev: 0.01, "
        "total_training_steps: 3}",
    ).replace("sample_shuffle: seed", "sample_shuffle: random"))  # fmt: skip
    found = dlio_config.settings(str(config), unet3d.UNET3D_MODEL)
    assert found["compute_stdev_s"] == 0.01 and found["training_steps"] == 3
    assert found["sample_shuffle"] == "random" and found["accelerator"] == "h100"
    assert found["samples"] == 28 and found["prefetch"] == 8 and found["scale"] == "full"
    config.write_text(UNET3D_H100.replace(
        "train: {epochs: 3, computation_time: 0.323}",
        "train: {epochs: 3, computation_time: 0.323, computation_time_stdev: 0, "
        "total_training_steps: -1}",
    ))  # fmt: skip
    found = dlio_config.settings(str(config), unet3d.UNET3D_MODEL)
    assert "compute_stdev_s" not in found and "training_steps" not in found
