"""cosmoflow without MPI: DLIO's parameters, its TFRecord samples (one record a file, CRCs as
TensorFlow checks them), a training phase on a directory, its own pass mark, bad input."""

import google_crc32c
import numpy as np
import pytest
from hpcio import _engine
from hpcio.runner.body import run_python_body
from hpcio.runner.stage import Stage
from hpcio.runner.world import SerialComm
from hpcio.spec.model import RunSpec
from hpcio.spec.target import TargetSpec
from hpcio.workloads.contract import Phase, PythonBody, RankInfo
from hpcio.workloads.training import cosmoflow, dataset, loader, tfrecord, unet3d


def test_parameters_are_dlio_s_cosmoflow_configs():
    p = cosmoflow.CosmoflowParams()
    assert (p.samples, p.batch, p.read_threads, p.epochs) == (524_288, 1, 4, 5)
    assert unet3d.compute_seconds(p) == 0.00551
    assert unet3d.compute_seconds(cosmoflow.CosmoflowParams(accelerator="h100")) == 0.00350
    assert unet3d.compute_seconds(cosmoflow.CosmoflowParams(scale="small")) == 0.00551 / 16
    assert p.MODEL.pass_au_percent == 70.0
    # No record_length_resize in its configs: a sample is handed over at its record length.
    assert unet3d.handed_over_bytes(p) == int(2_828_486**0.5) ** 2


def test_sizes_are_dlio_s_draw_of_cosmoflow_s_record_length():
    sizes = dataset.DataSet("full", 4000, 1, kind=cosmoflow.SAMPLES).array_bytes()
    assert abs(sizes.mean() - 2_828_486) < 0.01 * 2_828_486
    assert 0.66 < sizes.std() / 71_311 < 0.76


def test_masked_crc_is_tensorflow_s():
    # CRC-32C of "123456789" is 0xE3069283 (RFC 3720's check value); TFRecord masks it.
    assert google_crc32c.value(b"123456789") == 0xE3069283
    crc = 0xE3069283
    assert tfrecord.masked_crc(b"123456789") == (((crc >> 15) | (crc << 17)) + 0xA282EAD8) % (
        1 << 32
    )


def test_a_sample_is_one_record_of_its_drawn_size():
    data = dataset.DataSet("small", 3, 5, kind=cosmoflow.SAMPLES)
    sizes = data.array_bytes()
    out = np.empty(int(data.file_bytes().max()), np.uint8)
    sample = dataset.npz_sample(data, 1, int(sizes[1]), out)
    assert len(sample) == data.file_bytes()[1] == sizes[1] + 16
    (record,) = tfrecord.records(sample.tobytes())
    assert len(record) == sizes[1]
    broken = bytearray(sample.tobytes())
    broken[20] ^= 1
    with pytest.raises(ValueError, match="data CRC mismatch"):
        tfrecord.records(bytes(broken))
    assert data.key(1) == "hpcio-cosmoflow-small-s5-n3/train/img_0000001_of_0000003.tfrecord"
    assert dataset.owns_key(data.key(1))


def test_cosmoflow_trains_on_its_tfrecord_files(tmp_path):
    where = TargetSpec.from_url(f"file://{tmp_path}")
    run = RunSpec.build("cosmoflow", target=where, scale="small", samples=12, epochs=2,
                        compute_time_s=0.001).validate()  # fmt: skip
    target = _engine.Target(run.target.url)
    who = RankInfo(0, 1)
    run_python_body(Stage(SerialComm(), target, run, who), Phase.WRITE, PythonBody(loader.generate))
    data = unet3d.data_set(run)
    assert isinstance(data, dataset.DataSet) and data.kind is cosmoflow.SAMPLES
    for index in (0, 11):
        (record,) = tfrecord.records((tmp_path / data.key(index)).read_bytes())
        assert len(record) == data.array_bytes()[index]
    figures = run_python_body(
        Stage(SerialComm(), target, run, who), Phase.READ, PythonBody(loader.train)
    )
    assert figures.errors == 0
    assert figures.bytes == 2 * data.total_bytes()  # batch 1: every file, every epoch
    reduced = cosmoflow.Cosmoflow().reduce_metrics([figures.metrics])
    assert reduced["steps_per_epoch"] == 12
    assert reduced["au_passed"] == (reduced["au_percent"] >= 70.0)


def test_an_accelerator_cosmoflow_has_no_time_for_is_one_line(hpcio, target_dir, file_url,
                                                               error_line):  # fmt: skip
    done = hpcio("train", "cosmoflow", "--target", file_url(target_dir), "--accelerator",
                 "b200", "--dry-run")  # fmt: skip
    assert done.returncode == 2
    assert error_line(done) == (
        "hpcio: error: --accelerator b200: cosmoflow has compute times for a100, h100 only"
    )


def test_dry_run_says_cosmoflow_s_shape(hpcio, target_dir, file_url):
    from test_unet3d import a_data_set_there

    a_data_set_there(target_dir, "full", 4096, cosmoflow.SAMPLES)
    done = hpcio("train", "cosmoflow", "--target", file_url(target_dir), "--samples", 4096,
                 "--dry-run")  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert "a100, 4096 sample(s) (full scale), batch 1, 4096 step(s) x 5 epoch(s), 0.00551 s" in (
        done.stdout
    )
