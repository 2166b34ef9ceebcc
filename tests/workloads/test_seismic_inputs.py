"""The seismic data and the volume workload's refusals (no MPI, no server)."""

import numpy as np
import pytest
from hpcio.workloads.seismic import layout, velocity

SHAPE = (40, 30, 200)


def test_the_model_is_the_same_whichever_slabs_make_it():
    whole = velocity.slab("velocity", 5, SHAPE, 0, 40)
    parts = np.concatenate([velocity.slab("velocity", 5, SHAPE, a, b)
                            for a, b in ((0, 7), (7, 8), (8, 40))])  # fmt: skip
    np.testing.assert_array_equal(whole, parts)
    assert whole.dtype == np.float32
    assert whole.min() == velocity.V_MIN and whole.max() == velocity.V_MAX
    assert not np.array_equal(whole, velocity.slab("velocity", 6, SHAPE, 0, 40))


def test_velocity_rises_with_depth_in_layers():
    model = velocity.slab("velocity", 1, SHAPE, 0, 40)
    assert (np.diff(model, axis=2) >= 0).all()
    assert len(np.unique(model)) == velocity.LAYERS + 1


def test_random_is_seeded_and_split_alike():
    whole = velocity.slab("random", 2, SHAPE, 0, 40)
    np.testing.assert_array_equal(whole[10:20], velocity.slab("random", 2, SHAPE, 10, 20))
    assert whole.min() >= velocity.V_MIN and whole.max() <= velocity.V_MAX


def test_blosc_shrinks_the_model_and_not_the_noise():
    from numcodecs import Blosc

    codec = Blosc(cname="zstd", clevel=5, shuffle=Blosc.SHUFFLE)
    ratio = {}
    for data in velocity.DATA:
        volume = velocity.slab(data, 1, SHAPE, 0, 40)
        ratio[data] = volume.nbytes / len(codec.encode(volume))
    assert ratio["velocity"] > 50
    assert ratio["random"] < 1.5


def test_ranks_own_whole_chunk_slabs_that_cover_the_volume():
    grid = layout.Layout((50, 24, 40), (5, 12, 20), 4)
    seen = np.zeros((50, 24, 40), int)
    for rank in range(4):
        for (x0, y0, z0), (x1, y1, z1) in grid.pieces(rank):
            seen[x0:x1, y0:y1, z0:z1] += 1
    assert (seen == 1).all()
    assert [grid.x_range(r) for r in range(4)] == [(0, 10), (10, 25), (25, 35), (35, 50)]


def test_a_default_chunk_divides_the_volume():
    for shape in ((1000, 1000, 500), (50, 24, 40), (7, 13, 3)):
        chunk = layout.default_chunk(shape, 4)
        assert all(s % c == 0 for s, c in zip(shape, chunk, strict=True)), (shape, chunk)


@pytest.mark.parametrize(
    ("more", "message"),
    [
        (("--chunk", "7x8x8"), "--chunk 7x8x8 does not divide --volume 64x64x64 (64 by 7)"),
        (("--library", "segy", "--compression", "blosc"),
         "--compression blosc is for --library zarr; segy writes uncompressed"),
        (("--library", "hdf5", "--chunk", "8x8x8"),
         "--chunk is for --library zarr; hdf5 writes whole inlines"),
        (("--collective",), "--collective is for --library hdf5; zarr calls are independent"),
        (("--volume", "64x64"), "--volume must be three sizes such as 1000x1000x500, got '64x64'"),
        (("--volume", "0x64x64"), "--volume sizes must be at least 1, got '0x64x64'"),
        (("--library", "netcdf"), "argument --library: invalid choice: 'netcdf' (choose from "
         "'segy', 'hdf5', 'zarr')"),
    ],
)  # fmt: skip
def test_bad_input_is_one_line(hpcio, target_dir, file_url, error_line, more, message):
    shape = () if "--volume" in more else ("--volume", "64x64x64")
    done = hpcio("run", "--workload", "volume", *shape, "--target", file_url(target_dir), *more)
    assert done.returncode == 2
    assert error_line(done) == f"hpcio: error: {message}"


@pytest.mark.parametrize("library", ["segy", "hdf5"])
def test_files_only_libraries_refuse_an_object_store(hpcio, error_line, library):
    done = hpcio("run", "--workload", "volume", "--library", library, "--target", "s3://bucket/p")
    assert done.returncode == 2
    assert error_line(done) == (
        f"hpcio: error: --library {library} writes files: give a file:// target, or use "
        "--library zarr on an object store"
    )


def test_more_ranks_than_chunk_slabs_is_refused(hpcio, target_dir, file_url, error_line):
    done = hpcio("run", "--workload", "volume", "--volume", "64x64x64", "--chunk", "32x64x64",
                 "-n", 4, "--target", file_url(target_dir))  # fmt: skip
    assert done.returncode == 2
    assert error_line(done) == ("hpcio: error: --volume 64x64x64 has 2 chunk slabs along x for "
                                "4 ranks: each rank needs one at least")  # fmt: skip


def test_the_workload_names_its_own_keys():
    from hpcio.workloads import registry

    for key in ("hpcio-volume.segy", "hpcio-volume.h5", "hpcio-volume.zarr",
                "hpcio-volume.zarr/zarr.json", "hpcio-volume.zarr/c/0/1/2"):  # fmt: skip
        assert registry.is_own_key(key), key
    for key in ("volume.segy", "hpcio-volume.zarr/../x", "hpcio-volume.nc"):
        assert not registry.is_own_key(key) or ".." in key, key


def test_imaging_refuses_to_write_without_reading(hpcio, target_dir, file_url, error_line):
    done = hpcio("run", "--workload", "imaging", "--volume", "64x64x64", "--phases", "write",
                 "--target", file_url(target_dir))  # fmt: skip
    assert done.returncode == 2
    assert error_line(done) == (
        "hpcio: error: imaging reads, then writes: use --phases read, or no --phases"
    )


def test_imaging_names_its_shot_and_image_files():
    from hpcio.workloads import registry

    for key in ("hpcio-shot-rank000003.h5", "hpcio-image-rank000000.segy",
                "hpcio-image-rank000001.zarr/c/4/0"):  # fmt: skip
        assert registry.is_own_key(key), key
    assert not registry.is_own_key("hpcio-shot.h5")


def test_a_missing_library_is_one_line(hpcio, target_dir, file_url, error_line, monkeypatch):
    """segyio hidden from the interpreter (None in sys.modules: imports of it fail), in pytest's
    process: the refusal comes before anything would launch."""
    import sys

    from hpcio.workloads.seismic import volume

    assert volume.missing_library("segy", False) is None
    monkeypatch.setitem(sys.modules, "segyio", None)
    done = hpcio("run", "--workload", "volume", "--library", "segy", "--volume", "8x8x8",
                 "--target", file_url(target_dir))  # fmt: skip
    assert done.returncode == 2
    assert error_line(done) == (
        "hpcio: error: --library segy needs segyio (scripts/setup installs it)"
    )


def test_dry_run_counts_the_chunks_and_prices_nothing(hpcio, target_dir, file_url, error_line):
    args = ("--workload", "volume", "--volume", "1000x1000x500", "-n", 4)
    done = hpcio("run", *args, "--target", file_url(target_dir), "--dry-run")
    assert done.returncode == 0, done.stderr
    assert "chunks 50x50x500" in done.stdout
    assert "401 file(s) (hpcio-volume.zarr/zarr.json, hpcio-volume.zarr/c/0/0/0" in done.stdout
    assert "4 rank(s) x (a slab of 476.8 MiB + 2 pieces of 4.8 MiB)" in done.stdout
    priced = hpcio("cost", "--plan", "run", *args, "--target", "s3://bucket/x")
    assert priced.returncode == 2
    assert error_line(priced) == ("hpcio: error: volume: its requests are made by its own code "
                                  "and known only once it runs; price its result documents "
                                  "instead")  # fmt: skip


def test_a_large_put_is_counted_as_obstore_uploads_it():
    from hpcio.workloads.seismic.stores import put_requests

    assert put_requests("s3", 5 << 20) == {"put": 1}
    assert put_requests("s3", (5 << 20) + 1) == {
        "create_multipart": 1, "upload_part": 2, "complete_multipart": 1,
    }  # fmt: skip
    assert put_requests("azure", 12 << 20) == {"put_block": 3, "put_block_list": 1}
