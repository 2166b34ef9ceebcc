"""model-load under real mpiexec: the shards laid out untimed, then loaded by two ranks
(each its own shards) from a directory and from the S3 test server."""

import pytest
from hpcio.workloads.inference import model_load

pytestmark = pytest.mark.mpi


def _loaded(doc):
    (phase,) = [p for p in doc["phases"] if p["phase"] == "read"]
    return phase, phase["metrics"]


def _shards(model="8b"):
    return model_load.shards(model, "small")


def _bytes(model="8b"):
    from hpcio.workloads.inference import safetensors_format as st

    return sum(len(st.header_bytes(s, {"format": "pt"})) + sum(t.nbytes for t in s)
               for s in _shards(model))  # fmt: skip


@pytest.mark.parametrize("load", ["whole", "ranged", "mmap"])
def test_two_ranks_load_their_shards_from_a_directory(hpcio, file_url, target_dir, tmp_path,
                                                      read_documents, load):  # fmt: skip
    out = tmp_path / "m.jsonl"
    done = hpcio("run", "--workload", "model-load", "-n", 2, "--target", file_url(target_dir),
                 "--scale", "small", "--load", load, "-o", out)  # fmt: skip
    assert done.returncode == 0, done.stderr
    (doc,) = read_documents(out)
    phase, metrics = _loaded(doc)
    assert phase["errors"] == 0
    assert metrics["loaded_bytes"] == phase["bytes_total"] == _bytes()
    assert metrics["shards"] == 4 and metrics["shard_latency_s"]["count"] == 4
    tensors = sum(len(s) for s in _shards())
    assert metrics["tensors"] == tensors
    assert metrics["tensor_latency_s"].get("count", 0) == (0 if load == "whole" else tensors)
    assert metrics["time_to_load_s"] > 0
    assert not list(target_dir.rglob("*.safetensors"))  # laid out for the run, then removed


def test_two_ranks_load_from_the_s3_server(hpcio, s3_server, tmp_path, read_documents):
    out = tmp_path / "s.jsonl"
    done = hpcio("run", "--workload", "model-load", "-n", 2, "--target",
                 s3_server.url("model-load"), "--scale", "small", "--load", "ranged",
                 "--in-flight", 3, "-o", out, env=s3_server.env)  # fmt: skip
    assert done.returncode == 0, done.stderr
    (doc,) = read_documents(out)
    phase, metrics = _loaded(doc)
    assert phase["errors"] == 0
    assert metrics["loaded_bytes"] == _bytes()
    assert metrics["tensor_latency_s"]["count"] == sum(len(s) for s in _shards())
