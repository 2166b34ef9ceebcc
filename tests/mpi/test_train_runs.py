"""hpcio train under real mpiexec: datagen writes DLIO's npz samples, unet3d trains on them
(reader plans in the background, a compute sleep per step) and reports AU as DLIO does; on a
directory, on memory://, on the S3 test server and Azurite, and behind a slow proxy."""

import json
import time

import numpy as np
import pytest
from hpcio.workloads.training import loader, unet3d
from hpcio.workloads.training.dataset import DataSet
from relay import Relay

pytestmark = pytest.mark.mpi

SMALL = ("--scale", "small")


def train(hpcio, url, *args, ranks, out, env=None):
    return hpcio("train", "unet3d", "-n", ranks, "--target", url, *SMALL, "-o", out, *args,
                 env=env)  # fmt: skip


def datagen(hpcio, url, samples, ranks, env=None):
    return hpcio("train", "datagen", "-n", ranks, "--target", url, *SMALL, "--samples", samples,
                 "-q", env=env)  # fmt: skip


def read_bytes_expected(samples, batch, ranks, epochs, seed=1, shape="dlio"):
    """Bytes every epoch's batches read, all ranks: the npz files' sizes as drawn."""
    sizes = DataSet("small", samples, seed).file_bytes()
    steps = unet3d.steps_per_epoch(samples, batch, ranks)
    total = 0
    for epoch in range(epochs):
        order = loader.epoch_order(seed, epoch, samples)
        for rank in range(ranks):
            if shape == "dlio":
                batches = loader.dlio_batches(seed, epoch, samples, rank, ranks, steps, batch)
            else:
                batches = loader.rank_batches(order, rank, ranks, steps, batch)
            total += int(sizes[batches].sum())
    return total, steps


def the_metrics(doc):
    (phase,) = doc["phases"]
    return phase, phase["metrics"]


def test_datagen_then_training_on_a_directory(hpcio, file_url, target_dir, tmp_path,
                                              read_documents):  # fmt: skip
    url = file_url(target_dir)
    done = datagen(hpcio, url, 13, ranks=3)
    assert done.returncode == 0, done.stderr
    data = DataSet("small", 13, 1)
    # DLIO's layout: the samples under train/, and valid/ (empty), which DLIO's reader needs.
    folder = target_dir / data.folder
    assert sorted(p.name for p in target_dir.iterdir()) == [data.folder]
    assert sorted(p.name for p in folder.iterdir()) == ["train", "valid"]
    assert not any((folder / "valid").iterdir())
    files = sorted(f"{data.folder}/train/{p.name}" for p in (folder / "train").iterdir())
    assert files == data.keys()
    for index in (0, 12):  # np.load reads DLIO's layout: one array x, of the drawn size
        with np.load(target_dir / data.key(index)) as npz:
            assert npz["x"].shape == (data.array_bytes()[index],)

    out = tmp_path / "t.jsonl"
    done = train(hpcio, url, "--accelerator", "h100", "--samples", 13, "--batch", 2,
                 "--epochs", 2, "--read-threads", 2, "--compute-time", "0.05", ranks=3,
                 out=out)  # fmt: skip
    assert done.returncode == 0, done.stderr
    (doc,) = read_documents(out)
    assert doc["run"]["workload"] == "unet3d"
    assert doc["run"]["params"] == {
        "accelerator": "h100", "scale": "small", "samples": 13, "batch": 2, "read_threads": 2,
        "epochs": 2, "compute_time_s": 0.05, "prefetch": 2, "compute_stdev_s": None,
        "training_steps": None, "sample_shuffle": "seed", "loader": "dlio",
        "resize_bytes": None, "transfer_bytes": None,
    }  # fmt: skip
    expected, steps = read_bytes_expected(13, batch=2, ranks=3, epochs=2)
    assert steps == 2  # 13 // (2 x 3): one sample waits for another epoch
    phase, metrics = the_metrics(doc)
    assert phase["bytes_total"] == expected
    assert phase["requests"]["open"] == 2 * 3 * 2 * 2
    # DLIO's npz reader: each file in numpy's 256 KiB calls.
    assert phase["requests"]["read"] >= expected / unet3d.NUMPY_CHUNK_BYTES
    assert metrics["loader"] == "dlio"
    assert metrics["dlio_samples_per_s"] > 0 and metrics["dlio_io_mib_per_s"] > 0
    assert phase["errors"] == 0
    assert metrics["accelerators"] == 3
    assert metrics["steps_per_epoch"] == 2
    assert len(metrics["au_percent_by_epoch"]) == 2
    assert 0 < metrics["au_percent"] <= 100
    assert metrics["au_percent"] == pytest.approx(np.mean(metrics["au_percent_by_epoch"]))
    assert metrics["au_passed"] == (metrics["au_percent"] >= 90)
    assert metrics["io_wait"]["steps"] == 3 * 2 * (2 - 1)  # the first step of each left out
    assert sum(metrics["io_wait"]["histogram"]["counts"]) == 6
    assert metrics["samples_per_s"] > 0 and metrics["throughput_mib_per_s"] > 0
    # The AU table, as the study prints it; and the data set is still there for the next run.
    assert "| Simulated GPU | Samples    | Storage Type" in done.stdout
    assert "| 3 x h100      | 13 (small) |" in done.stdout
    assert "not a valid MLPerf Storage size:" in done.stdout
    assert "fewer than 500" in done.stdout
    assert sorted(str(p.relative_to(target_dir)) for p in target_dir.rglob("*.npz")) == data.keys()


def test_direct_datagen_and_training_bypass_the_page_cache(hpcio, file_url, target_dir,
                                                           tmp_path, read_documents):  # fmt: skip
    """--direct: datagen pads each npz to 4 KiB (np.load still reads it) under names of their
    own, and training reads them with O_DIRECT; the document says the cache was bypassed."""
    url = file_url(target_dir)
    done = hpcio("train", "datagen", "-n", 2, "--target", url, *SMALL, "--samples", 6,
                 "--direct", "-q")  # fmt: skip
    assert done.returncode == 0, done.stderr
    data = DataSet("small", 6, 1, aligned=True)
    assert sorted(str(p.relative_to(target_dir)) for p in target_dir.rglob("*.npz")) == data.keys()
    for index in range(6):
        path = target_dir / data.key(index)
        assert path.stat().st_size == data.file_bytes()[index]
        assert path.stat().st_size % 4096 == 0
        with np.load(path) as npz:
            assert npz["x"].shape == (data.array_bytes()[index],)

    out = tmp_path / "t.jsonl"
    done = train(hpcio, url, "--samples", 6, "--batch", 1, "--epochs", 1, "--compute-time",
                 "0.01", "--direct", ranks=2, out=out)  # fmt: skip
    assert done.returncode == 0, done.stderr
    (doc,) = read_documents(out)
    assert doc["run"]["direct"] is True
    assert doc["cache"]["reads_may_hit_page_cache"] is False
    (phase,) = doc["phases"]
    sizes = data.file_bytes()
    order = loader.epoch_order(1, 0, 6)
    assert phase["bytes_total"] == int(sizes[order].sum())
    # A data set made without --direct is not read by a --direct run: its names differ.
    done = train(hpcio, url, "--samples", 6, "--batch", 1, "--epochs", 1, "--compute-time",
                 "0.01", ranks=2, out=tmp_path / "u.jsonl")  # fmt: skip
    assert done.returncode == 2
    assert done.stderr.startswith(f"hpcio: error: {url} holds hpcio-unet3d-small-s1-a4k-n6, not")
    assert "(hpcio-unet3d-small-s1-n6); make it with: hpcio train datagen" in done.stderr


def test_training_without_its_data_set_fails_in_one_line(hpcio, file_url, target_dir,
                                                         tmp_path):  # fmt: skip
    done = train(hpcio, file_url(target_dir), "--samples", 28, "--compute-time", "0.01",
                 ranks=2, out=tmp_path / "t.jsonl")  # fmt: skip
    assert done.returncode == 2
    url = file_url(target_dir)
    assert done.stderr == (
        f"hpcio: error: {url} does not hold the data set unet3d reads with these options "
        f"(hpcio-unet3d-small-s1-n28); make it with: hpcio train datagen --target {url} "
        "--scale small --samples 28 --seed 1 -n 2\n"
    )
    assert not (tmp_path / "t.jsonl").exists()


def test_memory_target_keeps_the_accelerator_busy(hpcio, tmp_path, read_documents):
    """With instant storage the emulation's own cost must not show: AU >= 99 % (the issue's
    figure). Made to hold on a loaded 2-core machine: each step computes 2 s while the next
    batches (7 samples of ~9 MiB, read from memory in milliseconds) were fetched during the
    step before, so only hpcio's own per-step work (a wait and the next fetch's launch, inside
    the compute window) could take from the 2 s; 1 % of the 4 s AU counts is 40 ms."""
    out = tmp_path / "m.jsonl"
    done = train(hpcio, "memory://", "--samples", 21, "--epochs", 1, "--compute-time", "2",
                 ranks=1, out=out)  # fmt: skip
    assert done.returncode == 0, done.stderr
    (doc,) = read_documents(out)
    _, metrics = the_metrics(doc)
    assert metrics["steps_per_epoch"] == 3
    assert metrics["au_percent"] >= 99.0, metrics


@pytest.fixture(params=["s3", "azure"])
def server(request):
    return request.getfixturevalue(f"{request.param}_server")


def test_datagen_and_training_on_object_stores(hpcio, server, tmp_path, read_documents):
    url = server.url("unet3d")
    done = datagen(hpcio, url, 8, ranks=2, env=server.env)
    assert done.returncode == 0, done.stderr
    out = tmp_path / "o.jsonl"
    done = train(hpcio, url, "--samples", 8, "--batch", 2, "--epochs", 1, "--compute-time",
                 "0.01", ranks=2, out=out, env=server.env)  # fmt: skip
    assert done.returncode == 0, done.stderr
    (doc,) = read_documents(out)
    phase, metrics = the_metrics(doc)
    expected, _ = read_bytes_expected(8, batch=2, ranks=2, epochs=1)
    assert phase["bytes_total"] == expected
    assert phase["requests"]["get"] == 8  # a whole-object GET per sample
    assert phase["errors"] == 0
    assert 0 < metrics["au_percent"] <= 100
    assert f"| 2 x a100      | 8 (small) | {url.split('://')[0]}" in done.stdout


class SlowGets(Relay):
    """A relay on 127.0.0.1 in front of the S3 test server that holds every GET `delay_s`
    before passing it on: storage slowed on purpose, by a known amount per read."""

    def __init__(self, backend_port: int, delay_s: float) -> None:
        def hold(handler, body):
            if handler.command == "GET":
                time.sleep(delay_s)
            return False

        super().__init__(backend_port, hold)


def test_slow_storage_lowers_au_as_the_arithmetic_predicts(hpcio, s3_server, tmp_path,
                                                           read_documents):  # fmt: skip
    """One reader thread, one batch ahead, 2 samples a batch, every GET held 0.5 s: a batch
    takes at least 1 s to fetch, so a step cannot be shorter, and AU (compute over step time)
    is at most 0.02 s / 1 s = 2 %. The bound asserted, 15 %, leaves room for a loaded
    machine's late wake-ups lengthening the measured compute, never for reads that overlap
    less than the arithmetic says: a loader that did not wait for its data would exceed it."""
    url = s3_server.url("slow-unet3d")
    done = datagen(hpcio, url, 6, ranks=1, env=s3_server.env)
    assert done.returncode == 0, done.stderr
    out = tmp_path / "s.jsonl"
    backend_port = int(s3_server.endpoint.rsplit(":", 1)[1])
    with SlowGets(backend_port, delay_s=0.5) as proxy:
        endpoint = f"http://127.0.0.1:{proxy.port}"
        env = {**s3_server.env, "AWS_ENDPOINT": endpoint, "AWS_ENDPOINT_URL": endpoint}
        done = train(hpcio, url, "--samples", 6, "--batch", 2, "--epochs", 1,
                     "--read-threads", 1, "--prefetch", 1, "--compute-time", "0.02",
                     ranks=1, out=out, env=env)  # fmt: skip
    assert done.returncode == 0, done.stderr
    (doc,) = read_documents(out)
    _, metrics = the_metrics(doc)
    assert metrics["steps_per_epoch"] == 3
    assert 0 < metrics["au_percent"] <= 15.0, metrics
    assert metrics["io_wait"]["max_s"] >= 0.5  # a step waited at least one held GET
    assert not metrics["au_passed"]
    assert "| fail" in done.stdout


def test_documents_read_back_by_report_and_compare(hpcio, tmp_path):
    """hpcio report prints the AU table and draws AU and I/O wait from the documents alone;
    hpcio compare sets two files' AU side by side."""
    a, b = tmp_path / "a.jsonl", tmp_path / "b.jsonl"
    for out, accelerator in ((a, "a100"), (b, "b200")):
        done = train(hpcio, "memory://", "--samples", 14, "--epochs", 1, "--compute-time",
                     "0.05", "--accelerator", accelerator, ranks=1, out=out)  # fmt: skip
        assert done.returncode == 0, done.stderr
    shown = hpcio("report", a, b)
    assert shown.returncode == 0, shown.stderr
    assert "| Simulated GPU | Samples    | Storage Type" in shown.stdout
    assert "| 1 x a100      | 14 (small) | memory memory://" in shown.stdout
    assert "| 1 x b200      | 14 (small) | memory memory://" in shown.stdout
    assert "File Size" not in shown.stdout  # not the patterns' table
    drawn = hpcio("report", a, b, "--plots", tmp_path / "plots")
    assert drawn.returncode == 0, drawn.stderr
    assert (tmp_path / "plots" / "training-au.png").stat().st_size > 0
    assert (tmp_path / "plots" / "training-io-wait.svg").stat().st_size > 0
    compared = hpcio("compare", a, b, "--metric", "au", "--ignore", "accelerator")
    assert compared.returncode == 0, compared.stderr
    assert "metric: au (%); B/A > 1 means B keeps the simulated accelerators busier" in (
        compared.stdout
    )
    assert "| memory:// | 1 | N/A | N/A |" in compared.stdout  # no size per rank, no transfer
    assert json.loads(a.read_text())["run"]["params"]["accelerator"] == "a100"


def test_a_suite_sweeps_accelerator_counts_on_one_data_set(hpcio, file_url, target_dir, tmp_path,
                                                          read_documents):  # fmt: skip
    """MLPerf Storage's question, how many accelerators the storage feeds: datagen once, then a
    suite of unet3d points at 1 and 2 ranks for two accelerators; one AU row each."""
    url = file_url(target_dir)
    assert datagen(hpcio, url, 8, ranks=2).returncode == 0
    suite = tmp_path / "train.toml"
    suite.write_text(f"""\
[[target]]
url = "{url}"

[grid]
workloads = ["unet3d"]
scale = "small"
samples = 8
batch = 2
epochs = 1
compute_time = "0.01s"
ranks = [1, 2]

[[case]]
name = "a100"
accelerator = "a100"

[[case]]
name = "h100"
accelerator = "h100"
""")
    out = tmp_path / "t.jsonl"
    done = hpcio("suite", "run", suite, "-o", out)
    assert done.returncode == 0, done.stderr
    docs = read_documents(out)
    assert [(d["ranks"], d["run"]["params"]["accelerator"]) for d in docs] == [
        (1, "a100"), (1, "h100"), (2, "a100"), (2, "h100")
    ]  # fmt: skip
    for doc in docs:
        (phase,) = doc["phases"]
        assert phase["errors"] == 0 and phase["metrics"]["accelerators"] == doc["ranks"]
    npz = sorted(str(p.relative_to(target_dir)) for p in target_dir.rglob("*.npz"))
    assert npz == DataSet("small", 8, 1).keys()
    report = hpcio("report", out)
    assert report.returncode == 0, report.stderr
    rows = [line.split("|")[1].strip() for line in report.stdout.splitlines()
            if line.startswith("| ") and (" x a100" in line or " x h100" in line)]  # fmt: skip
    assert sorted(rows) == ["1 x a100", "1 x h100", "2 x a100", "2 x h100"]


def test_cosmoflow_in_lockstep_on_a_directory(hpcio, file_url, target_dir, tmp_path,
                                              read_documents):  # fmt: skip
    """cosmoflow at 2 ranks: its TFRecord data set under DLIO's layout, batches of 1, every
    file read once an epoch across the ranks (DLIO's contiguous shares), a barrier a step."""
    from hpcio.workloads.training import cosmoflow, tfrecord

    url = file_url(target_dir)
    done = hpcio("train", "cosmoflow-datagen", "-n", 2, "--target", url, *SMALL, "--samples",
                 16, "-q")  # fmt: skip
    assert done.returncode == 0, done.stderr
    data = DataSet("small", 16, 1, kind=cosmoflow.SAMPLES)
    for index, key in enumerate(data.keys()):  # one record a file, of its drawn size
        (record,) = tfrecord.records((target_dir / key).read_bytes())
        assert len(record) == data.array_bytes()[index]
    out = tmp_path / "c.jsonl"
    done = hpcio("train", "cosmoflow", "-n", 2, "--target", url, *SMALL, "--samples", 16,
                 "--epochs", 2, "--compute-time", "0.002", "-o", out)  # fmt: skip
    assert done.returncode == 0, done.stderr
    (doc,) = read_documents(out)
    assert doc["run"]["workload"] == "cosmoflow"
    phase, metrics = the_metrics(doc)
    assert phase["bytes_total"] == 2 * data.total_bytes()
    assert phase["errors"] == 0
    assert metrics["steps_per_epoch"] == 8 and metrics["accelerators"] == 2
    assert metrics["au_passed"] == (metrics["au_percent"] >= 70.0)
    assert "| 2 x a100      | 16 (small) |" in done.stdout


def test_resnet50_streams_its_files_on_a_directory(hpcio, file_url, target_dir, tmp_path,
                                                   read_documents):  # fmt: skip
    """resnet50 at 2 ranks: files of 1,251 TFRecord records, each rank streaming its own
    files (tf.data's shard), a step reading the batch's records of them, a barrier a step."""
    from hpcio.workloads.training import resnet50, tfrecord

    url = file_url(target_dir)
    done = hpcio("train", "resnet50-datagen", "-n", 2, "--target", url, *SMALL, "--samples",
                 4, "-q")  # fmt: skip
    assert done.returncode == 0, done.stderr
    data = DataSet("small", 4, 1, kind=resnet50.SAMPLES)
    found = tfrecord.records((target_dir / data.key(3)).read_bytes())
    assert len(found) == 1251 and {len(r) for r in found} == {int(data.array_bytes()[3])}
    out = tmp_path / "r.jsonl"
    done = hpcio("train", "resnet50", "-n", 2, "--target", url, *SMALL, "--samples", 4,
                 "--batch", 250, "--read-threads", 2, "--epochs", 2, "--compute-time",
                 "0.002", "-o", out)  # fmt: skip
    assert done.returncode == 0, done.stderr
    (doc,) = read_documents(out)
    assert doc["run"]["workload"] == "resnet50"
    phase, metrics = the_metrics(doc)
    steps = 4 * 1251 // (250 * 2)
    assert metrics["steps_per_epoch"] == steps and metrics["accelerators"] == 2
    assert phase["bytes_total"] == 2 * 2 * steps * 250 * int(data.record_bytes()[0])
    assert phase["errors"] == 0
    assert metrics["au_passed"] == (metrics["au_percent"] >= 90.0)


def test_resnet50_on_the_s3_server(hpcio, s3_server, tmp_path, read_documents):
    """resnet50's ranged reads of several-sample objects: every byte a step's records cover."""
    from hpcio.workloads.training import resnet50

    url = s3_server.url("resnet50")
    done = hpcio("train", "resnet50-datagen", "--target", url, *SMALL, "--samples", 2, "-q",
                 env=s3_server.env)  # fmt: skip
    assert done.returncode == 0, done.stderr
    out = tmp_path / "r.jsonl"
    done = hpcio("train", "resnet50", "--target", url, *SMALL, "--samples", 2, "--batch", 500,
                 "--epochs", 1, "--compute-time", "0.002", "-o", out,
                 env=s3_server.env)  # fmt: skip
    assert done.returncode == 0, done.stderr
    (doc,) = read_documents(out)
    phase, metrics = the_metrics(doc)
    record = int(DataSet("small", 2, 1, kind=resnet50.SAMPLES).record_bytes()[0])
    assert metrics["steps_per_epoch"] == 2 * 1251 // 500
    assert phase["bytes_total"] == metrics["steps_per_epoch"] * 500 * record
    assert phase["errors"] == 0
