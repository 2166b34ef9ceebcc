"""resnet50 without MPI: DLIO's parameters, files of 1,251 TFRecord records, the records of a
batch as DLIO's TFRecord reader streams them (files interleaved read_threads at a time, each
front to back), a training phase on a directory reading what the stream covers, bad input."""

import numpy as np
import pytest
from hpcio import _engine
from hpcio.runner.body import run_python_body
from hpcio.runner.stage import Stage
from hpcio.runner.world import SerialComm
from hpcio.spec.model import RunSpec
from hpcio.spec.target import TargetSpec
from hpcio.workloads.contract import Phase, PythonBody, RankInfo
from hpcio.workloads.plans import Op
from hpcio.workloads.training import dataset, loader, records, resnet50, tfrecord, unet3d


def test_parameters_are_dlio_s_resnet50_configs():
    p = resnet50.Resnet50Params()
    assert (p.samples, p.batch, p.read_threads, p.epochs) == (1024, 400, 8, 5)
    assert resnet50.SAMPLES.samples_per_file == 1251
    assert unet3d.compute_seconds(p) == 0.435
    assert unet3d.compute_seconds(resnet50.Resnet50Params(accelerator="h100")) == 0.224
    assert p.MODEL.pass_au_percent == 90.0
    assert unet3d.handed_over_bytes(p) == int(150_528**0.5) ** 2


def test_a_file_is_its_records_of_one_drawn_size():
    data = dataset.DataSet("small", 2, 5, kind=resnet50.SAMPLES)
    assert data.sample_count == 2 * 1251
    # No stdev in DLIO's configs: every record a square of int(sqrt(mean)) bytes a side.
    side = int((114_660 / 16) ** 0.5)
    assert list(data.array_bytes()) == [side * side] * 2
    out = np.empty(int(data.file_bytes().max()), np.uint8)
    whole = dataset.npz_sample(data, 1, side * side, out)
    assert len(whole) == data.file_bytes()[1] == 1251 * (side * side + 16)
    found = tfrecord.records(whole.tobytes())
    assert len(found) == 1251 and {len(r) for r in found} == {side * side}
    assert found[0] != found[1]  # each record its own share of the payload


def test_a_batch_is_consecutive_records_of_the_interleaved_files():
    mine = records.rank_files(10, 1, 2)
    assert mine == [1, 3, 5, 7, 9]
    # Two files at a time, a record from each in turn: 6 records are 3 of files 1 and 3.
    assert records.stream_reads(mine, 4, 2, 0, 6) == [
        records.RecordRead(1, 0, 3), records.RecordRead(3, 0, 3),
    ]  # fmt: skip
    # Records 6..11: the first group's last 2 records, then the next group's first 4.
    assert records.stream_reads(mine, 4, 2, 6, 6) == [
        records.RecordRead(1, 3, 1), records.RecordRead(3, 3, 1),
        records.RecordRead(5, 0, 2), records.RecordRead(7, 0, 2),
    ]  # fmt: skip
    # The last group holds one file; past it the stream starts over.
    assert records.stream_reads(mine, 4, 2, 16, 6) == [
        records.RecordRead(9, 0, 4), records.RecordRead(1, 0, 1), records.RecordRead(3, 0, 1),
    ]  # fmt: skip


def test_a_read_covers_its_records_bytes_in_buffer_calls():
    plan = records.ranges_plan(["a", "b"], [records.RecordRead(1, 2, 3)],
                               np.array([10, 100]), 64)  # fmt: skip
    ops = plan.per_transfer()
    reads = [(plan.keys[k], int(o), int(n))
             for op, k, o, n in zip(ops.ops, ops.key_index, ops.offsets, ops.lengths,
                                    strict=True)
             if op == Op.READ]  # fmt: skip
    assert sorted(reads) == [("b", 200, 64), ("b", 264, 64), ("b", 328, 64), ("b", 392, 64),
                             ("b", 456, 44)]  # fmt: skip


def test_resnet50_trains_on_its_tfrecord_files(tmp_path):
    where = TargetSpec.from_url(f"file://{tmp_path}")
    run = RunSpec.build("resnet50", target=where, scale="small", samples=4, batch=500,
                        read_threads=2, epochs=2, compute_time_s=0.001).validate()  # fmt: skip
    target = _engine.Target(run.target.url)
    who = RankInfo(0, 1)
    run_python_body(Stage(SerialComm(), target, run, who), Phase.WRITE, PythonBody(loader.generate))
    data = unet3d.data_set(run)
    assert isinstance(data, dataset.DataSet) and data.kind is resnet50.SAMPLES
    figures = run_python_body(
        Stage(SerialComm(), target, run, who), Phase.READ, PythonBody(loader.train)
    )
    assert figures.errors == 0
    steps = 4 * 1251 // 500
    assert figures.bytes == 2 * steps * 500 * int(data.record_bytes()[0])
    reduced = resnet50.Resnet50().reduce_metrics([figures.metrics])
    assert reduced["steps_per_epoch"] == steps
    assert reduced["au_passed"] == (reduced["au_percent"] >= 90.0)


def test_dry_run_says_resnet50_s_shape(hpcio, target_dir, file_url):
    from test_unet3d import a_data_set_there

    a_data_set_there(target_dir, "full", 8, resnet50.SAMPLES)
    done = hpcio("train", "resnet50", "--target", file_url(target_dir), "--samples", 8,
                 "--dry-run")  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert "a100, 8 file(s) of 1251 sample(s) (full scale), batch 400, 25 step(s)" in done.stdout
    assert "DLIO's TFRecord reader: 8 file(s) streamed at once, 2 batch(es) ahead" in done.stdout


def test_bert_is_dlio_s_bert_config():
    from hpcio.workloads.training import bert

    p = bert.BertParams()
    assert (p.samples, p.batch, p.read_threads, p.epochs, p.training_steps) == (
        500, 48, 1, 1, 1000,
    )  # fmt: skip
    assert bert.SAMPLES.samples_per_file == 313_532 and bert.SAMPLES.mean_bytes == 2_500
    assert unet3d.compute_seconds(p) == 0.968
    data = dataset.DataSet("full", 2, 1, kind=bert.SAMPLES)
    assert list(data.file_bytes()) == [313_532 * (2_500 + 16)] * 2


def test_fewer_files_than_ranks_is_one_line(hpcio, target_dir, file_url, error_line):
    done = hpcio("train", "resnet50", "--target", file_url(target_dir), "-n", 2, "--samples",
                 1, "--batch", 10, "--dry-run")  # fmt: skip
    assert done.returncode == 2
    assert error_line(done) == (
        "hpcio: error: --samples 1: resnet50's files are streamed one rank each; give at least "
        "one file a rank (2)"
    )


@pytest.mark.parametrize(("datagen", "batch"), [("resnet50-datagen", 400), ("bert-datagen", 48)])
def test_datagen_of_fewer_files_than_ranks_names_its_own_training(
    hpcio, target_dir, file_url, error_line, datagen, batch
):
    done = hpcio("train", datagen, "--target", file_url(target_dir), "-n", 2, "--samples", 1,
                 "--dry-run")  # fmt: skip
    assert done.returncode == 2
    name = datagen.removesuffix("-datagen")
    assert error_line(done) == (
        f"hpcio: error: --samples 1: {name} on 2 rank(s) needs 2 or more even at --batch 1 (two "
        f"steps per rank: AU leaves the first out), and 2 at its default --batch {batch}"
    )


# DLIO's own workload files (configs/workload/), as DLIO 2.0.0 ships them.
RESNET50_H100 = """\
model:
  name: resnet50
  type: cnn
framework: tensorflow
workflow:
 generate_data: False
 train: True
dataset:
 num_files_train: 1024
 num_samples_per_file: 1251
 record_length_bytes: 114660.07
 record_length_bytes_resize: 150528
 data_folder: data/resnet50
 format: tfrecord
train:
 computation_time: 0.224
 epochs: 5
reader:
 data_loader: tensorflow
 read_threads: 8
 computation_threads: 8
 batch_size: 400
metric:
 au: 0.90
"""
BERT_V100 = """\
model:
  name: bert
  model_size_bytes: 4034713312
framework: tensorflow
workflow:
  generate_data: False
  train: True
  debug: False
  checkpoint: True
dataset:
  data_folder: data/bert
  format: tfrecord
  num_files_train: 500
  num_samples_per_file: 313532
  record_length_bytes: 2500
  file_prefix: part
train:
  seed_change_epoch: False
  computation_time: 0.968
  total_training_steps: 1000
reader:
  data_loader: tensorflow
  read_threads: 1
  computation_threads: 1
  transfer_size: 262144
  batch_size: 48
  file_shuffle: seed
  sample_shuffle: seed
checkpoint:
  checkpoint_folder: checkpoints/bert
  steps_between_checkpoints: 250
"""


def test_dlio_s_resnet50_and_bert_files_set_the_run(tmp_path):
    from hpcio.workloads.training import bert, dlio_config

    config = tmp_path / "resnet50_h100.yaml"
    config.write_text(RESNET50_H100.replace("num_files_train: 1024", "num_files_train: 16"))
    found = dlio_config.settings(str(config), resnet50.MODEL)
    assert found["accelerator"] == "h100" and found["scale"] == "full"
    assert (found["samples"], found["batch"], found["read_threads"]) == (16, 400, 8)
    assert found["resize_bytes"] == 150_528 and found["epochs"] == 5
    config = tmp_path / "bert_v100.yaml"
    config.write_text(BERT_V100)
    found = dlio_config.settings(str(config), bert.MODEL)
    assert found["accelerator"] == "v100" and found["training_steps"] == 1000
    assert found["transfer_bytes"] == 262_144 and found["samples"] == 500
    assert dlio_config.left_out(str(config)) == [
        "workflow.checkpoint", "checkpoint.checkpoint_folder",
        "checkpoint.steps_between_checkpoints",
    ]  # fmt: skip


def test_a_dlio_file_of_resnet50_drives_a_dry_run(hpcio, tmp_path):
    config = tmp_path / "resnet50_h100.yaml"
    config.write_text(RESNET50_H100.replace("num_files_train: 1024", "num_files_train: 16"))
    done = hpcio("train", "resnet50", "--target", "memory://", "--dlio-config", config,
                 "--epochs", 2, "--dry-run")  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert "h100, 16 file(s) of 1251 sample(s) (full scale), batch 400, 50 step(s) x 2" in (
        done.stdout
    )


def test_another_training_s_dlio_file_is_refused_by_name(hpcio, tmp_path, error_line):
    # unet3d's samples are npz under PyTorch: resnet50's file names what differs.
    config = tmp_path / "resnet50_h100.yaml"
    config.write_text(RESNET50_H100)
    done = hpcio("train", "unet3d", "--target", "memory://", "--dlio-config", config,
                 "--dry-run")  # fmt: skip
    assert done.returncode == 2
    line = error_line(done)
    assert line.startswith(f"hpcio: error: --dlio-config {config}: hpcio cannot emulate ")
    for named in ("dataset.format: 'tfrecord' (only 'npz'", "num_samples_per_file: 1251",
                  "reader.data_loader: 'tensorflow' (only 'pytorch'",
                  "dataset.record_length 114660.07"):  # fmt: skip
        assert named in line
    # bert's pass mark is DLIO's default; another is refused under bert's own name.
    config.write_text(BERT_V100 + "metric:\n  au: 0.70\n")
    done = hpcio("train", "bert", "--target", "memory://", "--dlio-config", config,
                 "--dry-run")  # fmt: skip
    assert done.returncode == 2
    assert "metric.au: 0.7 (only 0.9 is emulated)" in error_line(done)
    assert "Traceback" not in done.stderr


@pytest.mark.parametrize(
    ("name", "settings"),
    [
        ("resnet50", {}),
        ("resnet50", {"scale": "small", "transfer_bytes": 4 << 20, "prefetch": 4}),
        ("resnet50", {"read_threads": 16, "batch": 64}),
        ("bert", {}),
        ("bert", {"transfer_bytes": 8 << 20, "prefetch": 8}),
    ],
)  # fmt: skip
def test_memory_counts_the_buffers_the_loader_asks_for(name, settings):
    # What a rank holds is each prefetched fetch's lanes (no more than its plan's largest
    # batch of calls, runner/body.py) x its buffer, the one image handed over a batch and
    # its batch, and the epoch's reads: the estimate is at least that, and no more than
    # twice the buffers a step's fetch takes at most.
    from hpcio.workloads import registry

    workload = registry.get(name)
    run = RunSpec.build(name, target=TargetSpec.from_url("null://"), training_steps=40,
                        **settings).validate()  # fmt: skip
    p = run.params
    data = unet3d.data_set(run)
    buffer = p.transfer_bytes or records.TFRECORD_BUFFER_BYTES
    mine = records.rank_files(data.samples, 0, 1)
    sizes, keys = data.record_bytes(), data.keys()
    lanes = [
        min(p.read_threads, records.ranges_plan(
            keys, records.stream_reads(mine, data.kind.samples_per_file, p.read_threads,
                                       step * p.batch, p.batch), sizes, buffer,
        ).largest_batch)
        for step in range(p.training_steps)
    ]  # fmt: skip
    fetched = p.prefetch * max(lanes) * max(buffer, int(sizes.max()))
    handed = 2 * unet3d.handed_over_bytes(p)
    need = workload.memory(run, 1)
    assert fetched + handed <= need.bytes <= 2 * (fetched + handed) + 40 * 4096
    assert f"{p.prefetch} batch(es) ahead x {max(lanes)} read(s)" in need.breakdown


def test_the_au_table_counts_samples_not_files(hpcio, tmp_path):
    from hpcio.report.training import NOT_DLIO, au_rows, sizing_lines
    from hpcio.results import io as results_io
    from hpcio.workloads.training import bert

    out = tmp_path / "bert.jsonl"
    done = hpcio("train", "bert", "--target", "null://", "--scale", "small", "--samples", 3,
                 "--training-steps", 3, "--compute-time", "0.001", "-q", "-o", out)  # fmt: skip
    assert done.returncode == 0, done.stderr
    docs = results_io.read(out)
    ((_, samples, *_),) = au_rows(docs)
    assert samples == f"{3 * bert.SAMPLES.samples_per_file:,} in 3 files (small)"
    # The table says what it was compared with: DLIO's definitions, not DLIO run beside it.
    assert sizing_lines(docs)[-1] == NOT_DLIO


def test_bert_s_own_accelerator_is_taken_on_the_command_line(hpcio, error_line):
    done = hpcio("train", "bert", "--target", "null://", "--accelerator", "v100", "--dry-run")
    assert done.returncode == 0, done.stderr
    assert "v100, 500 file(s) of 313532 sample(s)" in done.stdout
    done = hpcio("train", "resnet50", "--target", "null://", "--accelerator", "v100",
                 "--dry-run")  # fmt: skip
    assert done.returncode == 2
    assert error_line(done) == (
        "hpcio: error: --accelerator v100: resnet50 has compute times for a100, h100 only"
    )
