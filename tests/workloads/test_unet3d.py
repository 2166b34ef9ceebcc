"""unet3d's arithmetic and data set without MPI: AU as DLIO computes it (first step left out,
the mean over ranks then over epochs), the npz samples, each rank's batches, bad input."""

import io

import numpy as np
import pytest
from hpcio.spec.model import RunSpec
from hpcio.spec.target import TargetSpec
from hpcio.workloads.training import dataset, loader, unet3d
from hpcio.workloads.training import tables as training_tables
from hpcio.workloads.training.utilization import (
    EpochFigures,
    EpochTimes,
    epoch_figures,
    run_utilization,
    wait_summary,
)

MiB = 1 << 20


def epoch(load_s, compute_s, batch=7, sample_bytes=MiB):
    return EpochTimes(
        wall_s=sum(load_s) + sum(compute_s),
        load_s=load_s,
        compute_s=compute_s,
        step_bytes=[batch * sample_bytes] * len(load_s),
        batch=batch,
    )


def test_au_leaves_the_first_step_out():
    # Step 0 waits 2 s for the cold loader; steps 1 and 2 wait 0.5 s and compute 1 s each.
    # DLIO: 2 s of compute over (6 s wall - the first step's 3 s) = 66.67 %, not 3/6 = 50 %.
    figures = epoch_figures(epoch([2.0, 0.5, 0.5], [1.0, 1.0, 1.0]))
    assert figures.au_percent == pytest.approx(200 / 3)
    assert figures.timed_s == pytest.approx(3.0)
    assert figures.samples == 2 * 7
    assert figures.bytes == 2 * 7 * MiB


def test_au_counts_the_wall_time_not_the_steps_own():
    # Time between the steps (the wall is longer than the steps) lowers AU, as in DLIO where
    # the epoch's wall time is end - start.
    times = epoch([0.0, 0.0], [1.0, 1.0])
    longer = EpochTimes(times.wall_s + 1.0, times.load_s, times.compute_s, times.step_bytes, 7)
    assert epoch_figures(times).au_percent == pytest.approx(100.0)
    assert epoch_figures(longer).au_percent == pytest.approx(50.0)


def test_au_is_the_mean_over_ranks_then_over_epochs():
    def figures(au, timed_s=1.0, wall_s=2.0):
        # Two steps of 7 samples of a MiB: the second timed, both read in the wall time.
        return EpochFigures(au_percent=au, timed_s=timed_s, samples=7, bytes=7 * MiB,
                            wall_s=wall_s, steps=2, batch=7, read_bytes=14 * MiB)  # fmt: skip

    per_rank = [
        [figures(50.0), figures(100.0, timed_s=2.0, wall_s=4.0)],  # rank 0, epochs 0 and 1
        [figures(70.0), figures(80.0, timed_s=0.5, wall_s=1.0)],  # rank 1
    ]
    run = run_utilization(per_rank)
    assert run.au_percent_by_epoch == pytest.approx((60.0, 90.0))
    assert run.au_percent == pytest.approx(75.0)
    assert run.au_stdev_percent == pytest.approx(15.0)
    assert not run.passed  # 75 % < 90 %
    # hpcio's window: the timed samples over the timed time, summed over ranks, averaged
    # over epochs. Epoch 0: 7/1 + 7/1 = 14; epoch 1: 7/2 + 7/0.5 = 17.5; mean 15.75.
    assert run.samples_per_s == pytest.approx(15.75)
    # Bytes read over the wall: epoch 0: 14/2 + 14/2 = 14 MiB/s; epoch 1: 14/4 + 14/1 = 17.5.
    assert run.mib_per_s == pytest.approx(15.75)
    # DLIO: every step over the wall: epoch 0: 14/2 + 14/2 = 14; epoch 1: 14/4 + 14/1 = 17.5.
    assert run.dlio_samples_per_s == pytest.approx(15.75)
    assert run.dlio_samples_stdev_per_s == pytest.approx(1.75)
    # DLIO's "MB/second" is samples/s x the configured record length over 2^20.
    assert run.dlio_mib_per_s(MiB / 2) == pytest.approx(15.75 / 2)


def test_throughput_never_exceeds_the_bytes_read_over_the_wall():
    # The loader read 3 batches during a long first step; the two timed steps took 0.1 s.
    # Counting their 14 MiB over 0.1 s would claim 140 MiB/s from storage that delivered
    # 21 MiB in 3.1 s.
    figures = epoch_figures(epoch([3.0, 0.0, 0.0], [0.0, 0.05, 0.05]))
    assert figures.bytes / figures.timed_s / MiB == pytest.approx(140.0)
    run = run_utilization([[figures]])
    assert run.mib_per_s == pytest.approx(21 / 3.1)


def test_pass_mark_is_ninety_percent():
    def one(au):
        return run_utilization([[EpochFigures(au, 1.0, 7, 7)]])

    assert one(90.0).passed and not one(89.9).passed
    assert one(75.0).passed is False


def test_an_epoch_of_one_step_has_no_au():
    with pytest.raises(ValueError, match="leaves none after the first"):
        epoch_figures(epoch([1.0], [1.0]))


def test_wait_summary_percentiles_and_histogram():
    waits = [0.0005] * 90 + [0.02] * 9 + [2.0]
    summary = wait_summary(waits)
    assert summary["steps"] == 100
    assert summary["p50_s"] == pytest.approx(0.0005)
    assert summary["p90_s"] == pytest.approx(0.0005 + 0.1 * (0.02 - 0.0005))  # numpy's linear
    assert summary["max_s"] == 2.0
    histogram = summary["histogram"]
    assert sum(histogram["counts"]) == 100
    edges = histogram["edges_s"]
    assert histogram["counts"][edges.index(1e-4)] == 90  # [0.1 ms, 1 ms)
    assert histogram["counts"][edges.index(0.01)] == 9  # [10 ms, 50 ms)
    assert histogram["counts"][edges.index(1.0)] == 1  # [1 s, 5 s)


def test_sample_sizes_are_dlio_s_distribution_seeded():
    full = dataset.DataSet("full", 4000, seed=1).array_bytes()
    assert abs(full.mean() - dataset.SAMPLE_MEAN_BYTES) < 0.02 * dataset.SAMPLE_MEAN_BYTES
    # Two dimensions, each of stdev s / 2 / sqrt(mean): the product's spread is about
    # sqrt(2) / 2 = 0.71 of the configured stdev, not the stdev itself.
    spread = full.std() / dataset.SAMPLE_STDEV_BYTES
    assert 0.66 < spread < 0.76, spread
    assert full.min() >= 1
    assert np.array_equal(full, dataset.DataSet("full", 4000, seed=1).array_bytes())
    assert not np.array_equal(full, dataset.DataSet("full", 4000, seed=2).array_bytes())
    small = dataset.DataSet("small", 4000, seed=1).array_bytes()
    assert abs(small.mean() * 16 - full.mean()) < 0.01 * full.mean()
    # hpcio's data sets before issue 26: one draw from N(mean, stdev).
    flat = dataset.DataSet("full", 4000, seed=1, flat=True).array_bytes()
    assert abs(flat.std() - dataset.SAMPLE_STDEV_BYTES) < 0.05 * dataset.SAMPLE_STDEV_BYTES


def test_sizes_follow_dlio_s_generator_draw_for_draw():
    mean, stdev = 146_600_628, 68_341_808
    got = dataset.dlio_sizes(np.random.default_rng(3), mean, stdev, 50)
    # data_generator.get_dimension with config.derive_configurations' dimension and stdev.
    dimension = int(mean**0.5)
    dimension_stdev = stdev / 2.0 / mean**0.5
    dims = [max(int(d), 1) for d in np.random.default_rng(3).normal(dimension, dimension_stdev,
                                                                    100)]  # fmt: skip
    assert got.tolist() == [dims[2 * i] * dims[2 * i + 1] for i in range(50)]
    assert dataset.dlio_sizes(np.random.default_rng(3), 100, 0, 2).tolist() == [100, 100]


def test_datagen_keeps_dlio_s_layout():
    data = dataset.DataSet("small", 3, seed=1)
    assert data.key(2) == "hpcio-unet3d-small-s1-n3/train/img_0000002_of_0000003.npz"
    assert dataset.owns_key(data.key(2))
    assert dataset.owns_key("hpcio-unet3d-small-s1-n3")  # hpcio clean removes its folder
    assert dataset.owns_key("hpcio-unet3d-small-s1-n3/valid")
    assert not dataset.owns_key("img_0000002_of_0000003.npz")
    assert not dataset.owns_key("hpcio-unet3d-small-s1-n3/train/img_2_of_3.npz")
    old = dataset.DataSet("small", 3, seed=1, flat=True)
    assert old.key(2) == "hpcio-unet3d-small-s1-img_0000002_of_0000003.npz"
    assert dataset.owns_key(old.key(2))


def test_a_sample_is_an_npz_np_load_reads_of_the_planned_size():
    data = dataset.DataSet("small", 3, seed=5)
    sizes = data.array_bytes()
    out = np.empty(int(data.file_bytes().max()), np.uint8)
    sample = dataset.npz_sample(data, 2, int(sizes[2]), out)
    assert len(sample) == data.file_bytes()[2]
    with np.load(io.BytesIO(sample.tobytes())) as npz:
        assert npz.files == ["x"]
        x = npz["x"]
    assert x.dtype == np.uint8 and x.shape == (sizes[2],)
    assert len(np.unique(x[:4096])) > 200  # payload, not zeros: nothing to compress


def test_each_sample_is_read_once_per_epoch_across_ranks():
    samples, batch, ranks = 45, 4, 3
    steps = unet3d.steps_per_epoch(samples, batch, ranks)
    assert steps == 3  # 45 // 12: the 9 left over wait for the next epoch's order
    order = loader.epoch_order(7, 0, samples)
    read = np.concatenate([loader.rank_batches(order, r, ranks, steps, batch).ravel()
                           for r in range(ranks)])  # fmt: skip
    assert len(read) == len(set(read.tolist())) == steps * batch * ranks
    assert not np.array_equal(order, loader.epoch_order(7, 1, samples))  # reshuffled
    assert np.array_equal(order, loader.epoch_order(7, 0, samples))  # seeded


def test_whole_sample_reads_make_one_batch_for_the_reader_threads():
    plan = loader.files_plan(loader.Op.OPEN_READ, loader.Op.READ, ["a", "b"], [10, 30], None)
    assert plan.largest_batch == 2 and plan.largest_transfer == 30
    chunked = loader.files_plan(loader.Op.OPEN_READ, loader.Op.READ, ["a"], [10], 4)
    assert chunked.transfer_bytes_total == 10 and chunked.largest_batch == 3


def train_run(tmp_path, ranks=1, **params):
    run = RunSpec.build("unet3d", target=TargetSpec.from_url(f"file://{tmp_path}"),
                        ranks=ranks, **params)  # fmt: skip
    return run.validate()


def test_memory_is_the_prefetched_batches_buffers(tmp_path):
    workload = unet3d.Unet3d()
    run = train_run(tmp_path, scale="small", samples=70, read_threads=4, prefetch=2,
                    loader="hpcio")  # fmt: skip
    largest = int(dataset.DataSet("small", 70, 1).file_bytes().max())
    need = workload.memory(run, ranks_per_node=3)
    assert need.bytes == 3 * 2 * 4 * largest
    assert "2 batch(es) ahead x 4 reader(s)" in need.breakdown
    chunked = train_run(tmp_path, scale="small", samples=70, transfer_bytes=MiB, loader="hpcio")
    assert workload.memory(chunked, 1).bytes == 2 * 4 * MiB


def test_dlio_loader_memory_is_its_workers_chunks_and_the_batch_handed_over(tmp_path):
    # 4 workers x ceil(2 / 4) = 1 batch each, read in numpy's 256 KiB calls; the batch of 7
    # resized samples (a 362-byte square side: 131,044 B at small scale) and its source.
    run = train_run(tmp_path, scale="small", samples=70)
    need = unet3d.Unet3d().memory(run, ranks_per_node=2)
    handed = 362**2
    assert unet3d.handed_over_bytes(run.params) == handed
    assert need.bytes == 2 * (4 * 1 * 256 * 1024 + 8 * handed)
    assert "4 batch(es) ahead x 1 reader(s)" in need.breakdown
    more = train_run(tmp_path, scale="small", samples=70, read_threads=2, prefetch=5)
    assert unet3d.prefetch_factor(more.params) == 3
    assert unet3d.batches_in_flight(more.params) == 6


def test_memory_target_holds_the_data_set_and_the_readers_buffers():
    """bench/train_overhead measured 453 MiB over the fixed part where the bound said 326:
    the readers' buffers were left out of memory://'s figure."""
    run = RunSpec.build("unet3d", target=TargetSpec.from_url("memory://"), scale="small",
                        samples=35, loader="hpcio").validate()  # fmt: skip
    data = dataset.DataSet("small", 35, 1)
    largest = int(data.file_bytes().max())
    need = unet3d.Unet3d().memory(run, ranks_per_node=1)
    assert need.bytes == data.total_bytes() + 2 * 4 * largest


def test_dlio_sampler_gives_each_rank_a_contiguous_share_reshuffled_each_epoch():
    samples, batch, ranks = 45, 4, 3
    steps = unet3d.steps_per_epoch(samples, batch, ranks)
    shares = [loader.dlio_batches(7, 0, samples, r, ranks, steps, batch) for r in range(ranks)]
    read = np.concatenate([b.ravel() for b in shares])
    assert len(read) == len(set(read.tolist())) == steps * batch * ranks
    # DLIO seeds numpy's global generator and shuffles its list in place: rank 1's share is
    # the second 15 of that order.
    order = np.arange(samples)
    np.random.RandomState(7).shuffle(order)
    assert shares[1].ravel().tolist() == order[15 : 15 + steps * batch].tolist()
    again = loader.dlio_batches(7, 1, samples, 1, ranks, steps, batch)
    assert not np.array_equal(again, shares[1])
    assert np.array_equal(loader.dlio_batches(7, 1, samples, 1, ranks, steps, batch), again)


class _Fetched:
    def __init__(self, log, step):
        self.log, self.step = log, step

    def wait(self):
        self.log.append(("wait", self.step))

    def failed(self):
        return False


def _loader_log(loader_of, steps):
    log = []

    def fetch(step):
        log.append(("start", step))
        return _Fetched(log, step)

    feeder = loader_of(fetch)
    for step in range(steps):
        assert feeder.take(step).step == step
        feeder.taken(step)
    return log


def test_dlio_loader_gives_batches_round_robin_each_worker_one_after_another():
    # 2 workers x 2 batches each: batches 0 and 1 start at once; 2 waits for worker 0 to be
    # done with 0, 3 for worker 1 with 1; taking batch 0 gives batch 4 to worker 0.
    log = _loader_log(lambda fetch: loader._DlioLoader(fetch, 6, 2, 2), 6)
    assert log[:2] == [("start", 0), ("start", 1)]
    assert log[2:5] == [("wait", 0), ("start", 2), ("wait", 1)]
    assert [e for e in log if e[0] == "start"] == [("start", s) for s in range(6)]
    one_each = _loader_log(lambda fetch: loader._DlioLoader(fetch, 5, 4, 1), 5)
    assert one_each[:5] == [("start", 0), ("start", 1), ("start", 2), ("start", 3),
                            ("wait", 0)]  # fmt: skip
    assert one_each[5] == ("start", 4)


def test_training_never_removes_the_data_set(tmp_path):
    """A run that writes removes its keys when it ends: training must not be one, but where
    it lays the data set out itself (memory://, in its own process)."""
    assert not train_run(tmp_path).writes
    memory = RunSpec.build("unet3d", target=TargetSpec.from_url("memory://")).validate()
    assert memory.writes
    datagen = RunSpec.build("unet3d-datagen", target=TargetSpec.from_url(f"file://{tmp_path}"))
    assert datagen.writes


def test_compute_time_follows_the_accelerator_and_the_scale():
    assert unet3d.compute_seconds(unet3d.TrainParams(accelerator="h100")) == 0.323
    assert unet3d.compute_seconds(unet3d.TrainParams(accelerator="b200")) == 0.162
    assert unet3d.compute_seconds(unet3d.TrainParams(scale="small")) == 0.636 / 16
    assert unet3d.compute_seconds(unet3d.TrainParams(compute_time_s=0.2, scale="small")) == 0.2


def test_sizing_rules():
    assert training_tables.sizing(10_000, 146e6, 500, ram_bytes=64 << 30) == []
    broken = training_tables.sizing(100, 146e6, 14, ram_bytes=64 << 30)
    assert len(broken) == 2
    assert "less than 5 x the hosts' 64 GiB of RAM (--samples 2354 or more)" in broken[0]
    assert broken[1] == "14 step(s) per epoch, fewer than 500"


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("--accelerator", "v100"), "--accelerator v100: unet3d has compute times for a100, "
         "h100, b200 only"),
        (("--accelerator", "x1"), "argument --accelerator: invalid choice: 'x1' (choose from "
         "'a100', 'h100', 'b200', 'v100')"),
        (("--batch", "0"), "--batch must be at least 1, got 0"),
        (("--samples", "6"), "a data set of 6 sample(s) is smaller than one batch of --batch 7 "
         "for each of 1 rank(s): give --samples 7 or more"),
        (("--samples", "13"), "--samples 13 gives each rank one step per epoch, and AU leaves "
         "the first step out: give --samples 14 or more"),
        (("--verify",), "--verify: unet3d's samples are npz files (headers around the payload), "
         "which the engine does not check"),
        (("--in-flight", "2"),
         "--in-flight is for unet3d-datagen, cosmoflow-datagen, resnet50-datagen and bert-datagen, "
         "not unet3d"),
        (("--compute-time", "0"), "--compute-time must be more than 0 seconds, got '0'"),
    ],
)  # fmt: skip
def test_bad_input_is_one_line(hpcio, target_dir, file_url, error_line, args, message):
    done = hpcio("train", "unet3d", "--target", file_url(target_dir), *args)
    assert done.returncode == 2
    assert error_line(done) == f"hpcio: error: {message}"


def test_unknown_training_is_one_line(hpcio, target_dir, file_url, error_line):
    done = hpcio("train", "gpt3", "--target", file_url(target_dir))
    assert done.returncode == 2
    assert "invalid choice: 'gpt3'" in error_line(done)


def test_a_typo_in_the_buffers_is_refused_by_the_memory_check(hpcio, target_dir, file_url,
                                                              error_line):  # fmt: skip
    a_data_set_there(target_dir, "full", 128, dataset.UNET3D)
    done = hpcio("train", "unet3d", "--target", file_url(target_dir), "--read-threads", "64",
                 "--batch", "64", "--samples", "128", "--prefetch", "1000",
                 "--loader", "hpcio")  # fmt: skip
    assert done.returncode == 2
    assert error_line(done).startswith("hpcio: error: buffers would take ")
    assert "1000 batch(es) ahead x 64 reader(s)" in error_line(done)


def test_dry_run_records_every_parameter(hpcio, target_dir, file_url):
    a_data_set_there(target_dir, "small", 168, dataset.UNET3D)
    done = hpcio("train", "unet3d", "--target", file_url(target_dir), "--accelerator", "h100",
                 "--scale", "small", "--dry-run")  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert (
        "h100, 168 sample(s) (small scale), batch 7, 24 step(s) x 5 epoch(s), 0.0201875 s "
        "compute per step, DLIO's loader: 4 worker(s) x 1 batch(es), 128.0 KiB handed over a "
        "sample, a barrier a step" in done.stdout
    )  # 0.323 s / 16; 362 x 362 bytes handed over
    assert "space: needs 0 B more" in done.stdout  # training reads what datagen wrote


def a_data_set_there(target_dir, scale, samples, kind):
    """The first sample of hpcio's data set: a dry run or a check of `hpcio train` finds the
    data set it reads (one that is missing is refused)."""
    first = target_dir / dataset.DataSet(scale, samples, 1, kind=kind).key(0)
    first.parent.mkdir(parents=True)
    first.write_bytes(b"")
