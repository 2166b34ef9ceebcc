"""The volume workload's zarr on the local S3 (versitygw) and Azure (Azurite) servers, 4 ranks:
the store built from the same target URL and environment as the engine's, every chunk listed
with the provider's SDK, the array read back with obstore and zarr opened fresh."""

import json

import numpy as np
import pytest
from hpcio.workloads.seismic import velocity

pytestmark = pytest.mark.mpi

SHAPE = (40, 16, 50)
ARGS = ("--workload", "volume", "--library", "zarr", "--volume", "40x16x50", "--chunk", "10x8x50")


# radosgw: the one-node Ceph cluster's S3 gateway (tests/servers.py, marked ceph).
@pytest.fixture(params=["s3", "azure", pytest.param("radosgw", marks=pytest.mark.ceph)])
def server(request):
    return request.getfixturevalue(f"{request.param}_server")


def listed(server, prefix):
    if server.url().startswith("s3://"):
        found = server.client().list_objects_v2(Bucket=server.bucket, Prefix=f"{prefix}/")
        return sorted(o["Key"] for o in found.get("Contents", []))
    names = server.container_client().list_blobs(name_starts_with=f"{prefix}/")
    return sorted(b.name for b in names)


@pytest.mark.parametrize("compression", ["none", "blosc"])
def test_zarr_on_an_object_store(hpcio, server, tmp_path, compression, monkeypatch):
    prefix = f"zarr-{compression}"
    out = tmp_path / "r.jsonl"
    done = hpcio("run", "-n", 4, *ARGS, "--compression", compression, "--verify", "--keep",
                 "--target", server.url(prefix), "-o", out, "-q", env=server.env)  # fmt: skip
    assert done.returncode == 0, done.stderr
    chunks = [f"{prefix}/hpcio-volume.zarr/c/{i}/{j}/0" for i in range(4) for j in range(2)]
    assert listed(server, prefix) == sorted([f"{prefix}/hpcio-volume.zarr/zarr.json", *chunks])

    # Read back in this process, through obstore and zarr opened fresh on the same URL.
    for name, value in server.env.items():
        monkeypatch.setenv(name, value)
    import zarr
    from hpcio.spec.target import TargetSpec
    from hpcio.workloads.seismic import stores
    from zarr.storage import ObjectStore

    spec = TargetSpec.from_url(server.url(prefix))
    array = zarr.open_array(ObjectStore(stores.object_store(spec, "hpcio-volume.zarr")), mode="r")
    expected = velocity.slab("velocity", 1, SHAPE, 0, SHAPE[0])
    np.testing.assert_array_equal(array[...], expected)

    write, read = json.loads(out.read_text())["phases"]
    assert write["metrics"]["requests_put"] == len(chunks) + 1
    assert write["metrics"]["chunks"] == read["metrics"]["chunks"] == len(chunks)
    assert read["metrics"]["requests_get"] >= len(chunks)
    raw = expected.nbytes
    assert read["metrics"]["raw_bytes"] == raw
    fetched = read["metrics"]["fetched_bytes"]
    assert read["metrics"]["read_amplification"] == round(fetched / raw, 4)
    if compression == "blosc":
        assert write["metrics"]["compression_ratio"] > 20
        assert fetched < raw / 20
    else:
        assert fetched >= raw

    # hpcio cost bills the store's requests (the metrics), not zarr's calls.
    priced = hpcio("cost", out, "--format", "json")
    assert priced.returncode == 0, priced.stderr
    (bill,) = json.loads(priced.stdout)["runs"]
    assert bill["requests"]["put"] == len(chunks) + 1
    assert "open" not in bill["requests"]

    cleaned = hpcio("clean", "--target", server.url(prefix), env=server.env)
    assert cleaned.returncode == 0, cleaned.stderr
    assert listed(server, prefix) == []


def test_a_run_removes_its_chunks(hpcio, server):
    done = hpcio("run", "-n", 2, *ARGS, "--target", server.url("gone"), "-q", env=server.env)
    assert done.returncode == 0, done.stderr
    assert listed(server, "gone") == []


def test_zarr_reads_and_verifies_on_gcs(hpcio, gcs_server, tmp_path):
    """fake-gcs-server refuses object_store's writes (see test_gcs.py): the array is written
    locally by zarr, uploaded through the server's JSON API, then read by 4 ranks."""
    import zarr
    from zarr.codecs import BloscCodec

    local = tmp_path / "hpcio-volume.zarr"
    array = zarr.create_array(str(local), shape=SHAPE, chunks=(10, 8, 50), dtype="float32",
                              compressors=BloscCodec(cname="zstd", clevel=5, shuffle="shuffle"),
                              fill_value=0.0)  # fmt: skip
    array[...] = velocity.slab("velocity", 1, SHAPE, 0, SHAPE[0])
    for path in sorted(p for p in local.rglob("*") if p.is_file()):
        gcs_server.upload(f"zr/{path.relative_to(tmp_path)}", path.read_bytes())
    out = tmp_path / "r.jsonl"
    done = hpcio("run", "-n", 4, *ARGS, "--compression", "blosc", "--phases", "read", "--keep",
                 "--verify", "--target", gcs_server.url("zr"), "-o", out, "-q",
                 env=gcs_server.env)  # fmt: skip
    assert done.returncode == 0, done.stderr
    (read,) = json.loads(out.read_text())["phases"]
    assert read["metrics"]["chunks"] == 8
    assert read["metrics"]["requests_get"] >= 8
    assert read["errors"] == 0


def test_the_rtm_suite_s_small_scale_is_the_study_s_table(hpcio, s3_server, tmp_path):
    """suites/rtm.toml at scale small on a directory and on the S3 server (standing in for
    the study's Blob): five points, the object store runs compressed Zarr alone, and `hpcio
    report` prints one library table with the five rows in the study's order."""
    directory = tmp_path / "rtm"
    directory.mkdir()
    out = tmp_path / "rtm.jsonl"
    done = hpcio("suite", "run", "rtm", "--scale", "small", "-o", out,
                 "--target", f"file://{directory}", "--target", s3_server.url("rtm"),
                 env=s3_server.env)  # fmt: skip
    assert done.returncode == 0, done.stderr
    docs = [json.loads(line) for line in out.read_text().splitlines()]
    assert [(d["run"]["target"]["kind"], d["run"]["params"]["library"],
             d["run"]["params"]["compression"]) for d in docs] == [
        ("posix", "segy", "none"), ("posix", "hdf5", "none"), ("posix", "zarr", "none"),
        ("posix", "zarr", "blosc"), ("s3", "zarr", "blosc"),
    ]  # fmt: skip
    assert all(d["status"] == "complete" for d in docs)
    assert list(directory.iterdir()) == []

    report = hpcio("report", out)
    assert report.returncode == 0, report.stderr
    table = report.stdout[report.stdout.index("### libraries") :]
    rows = [line.split(" | ")[:2] for line in table.splitlines() if line.startswith("| volume")]
    assert rows == [
        ["| volume segy", f"file://{directory}"], ["| volume hdf5", f"file://{directory}"],
        ["| volume zarr(none)", f"file://{directory}"],
        ["| volume zarr(blosc)", f"file://{directory}"],
        ["| volume zarr(blosc)", s3_server.url("rtm")],
    ]  # fmt: skip
