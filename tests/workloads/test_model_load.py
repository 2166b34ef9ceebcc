"""model-load without MPI: the safetensors header writer and reader, Llama 3.1's parameter
counts, the shards, bad input."""

import json
import struct

import pytest
from hpcio.workloads.inference import model_load
from hpcio.workloads.inference import safetensors_format as st

TENSORS = [st.Tensor("a", "BF16", (3, 4)), st.Tensor("b", "F32", (5,)), st.Tensor("c", "F16", ())]


def test_a_header_is_its_length_then_padded_json():
    opening = st.header_bytes(TENSORS, {"format": "pt"})
    (length,) = struct.unpack_from("<Q", opening)
    assert len(opening) == 8 + length and length % 8 == 0
    table = json.loads(opening[8:])
    assert table["__metadata__"] == {"format": "pt"}
    assert table["a"] == {"dtype": "BF16", "shape": [3, 4], "data_offsets": [0, 24]}
    assert table["b"]["data_offsets"] == [24, 44] and table["c"]["data_offsets"] == [44, 46]


def test_the_reader_gives_back_what_the_writer_placed():
    opening = st.header_bytes(TENSORS)
    length = st.header_length(opening[:8])
    found = st.entries(opening[8 : st.data_start(length)])
    assert [(e.tensor, e.begin, e.end) for e in found] == [
        (TENSORS[0], 0, 24), (TENSORS[1], 24, 44), (TENSORS[2], 44, 46),
    ]  # fmt: skip


def test_a_bad_header_is_refused():
    with pytest.raises(ValueError, match="opens with 8 bytes"):
        st.header_length(b"\x01\x02")
    with pytest.raises(ValueError, match="more than safetensors'"):
        st.header_length(struct.pack("<Q", 1 << 40))
    with pytest.raises(ValueError, match="not JSON"):
        st.entries(b"{nope")
    wrong = {"a": {"dtype": "BF16", "shape": [2], "data_offsets": [0, 5]}}
    with pytest.raises(ValueError, match="offsets hold 5 bytes, its shape 4"):
        st.entries(json.dumps(wrong).encode())
    gap = {"a": {"dtype": "BF16", "shape": [2], "data_offsets": [4, 8]}}
    with pytest.raises(ValueError, match="starts at 4, not 0"):
        st.entries(json.dumps(gap).encode())


def test_the_safetensors_package_reads_our_header_if_installed(tmp_path):
    safe = pytest.importorskip("safetensors")
    opening = st.header_bytes(TENSORS)
    path = tmp_path / "t.safetensors"
    path.write_bytes(opening + bytes(46))
    with safe.safe_open(str(path), framework="numpy") as f:  # F16/F32 only in numpy
        assert set(f.keys()) == {"a", "b", "c"}


@pytest.mark.parametrize(("model", "billions"), [("8b", 8.03), ("70b", 70.55), ("405b", 405.85)])
def test_named_models_have_llama_3_1_s_parameter_counts(model, billions):
    count = sum(t.nbytes for t in model_load.tensors(model, "full")) / 2
    assert abs(count / 1e9 - billions) < 0.01


@pytest.mark.parametrize(("model", "count"), [("8b", 4), ("70b", 30), ("405b", 191)])
def test_shards_are_the_release_s_and_hold_every_tensor_once(model, count):
    cut = model_load.shards(model, "small")
    assert len(cut) == count
    assert [t for s in cut for t in s] == model_load.tensors(model, "small")


def test_an_mmap_load_of_an_object_store_is_one_line(hpcio, error_line):
    done = hpcio("run", "--workload", "model-load", "--target", "s3://bucket/x", "--load",
                 "mmap", "--dry-run")  # fmt: skip
    assert done.returncode == 2
    assert error_line(done) == (
        "hpcio: error: --load mmap maps files: give a file:// target, or --load ranged"
    )
