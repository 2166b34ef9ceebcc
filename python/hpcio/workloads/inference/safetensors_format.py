"""The safetensors file layout (huggingface/safetensors, docs "Format"): an 8-byte
little-endian header length N, N bytes of JSON naming each tensor's dtype, shape and
data_offsets [begin, end) (relative to the byte after the header), an optional
"__metadata__" of strings, then the tensors' bytes end to end. The JSON is padded with
spaces to a multiple of 8 bytes, as the safetensors package writes it, so tensors start
aligned."""

from __future__ import annotations

import json
import struct
from collections.abc import Sequence
from dataclasses import dataclass

#: Bytes of the header length that opens a file.
LENGTH_BYTES = 8
#: safetensors' limit on the header (100 MB), against a corrupt length.
MAX_HEADER_BYTES = 100_000_000
#: Bytes per element of the dtypes a model's weights use.
DTYPE_BYTES = {"BF16": 2, "F16": 2, "F32": 4, "F8_E4M3": 1}


@dataclass(frozen=True, slots=True)
class Tensor:
    name: str
    dtype: str
    shape: tuple[int, ...]

    @property
    def nbytes(self) -> int:
        count = 1
        for side in self.shape:
            count *= side
        return count * DTYPE_BYTES[self.dtype]


@dataclass(frozen=True, slots=True)
class Entry:
    """A tensor as a file's header places it: its data's [begin, end) after the header."""

    tensor: Tensor
    begin: int
    end: int


def header_bytes(tensors: Sequence[Tensor], metadata: dict[str, str] | None = None) -> bytes:
    """The file's opening bytes for `tensors`, laid end to end in their order: the length,
    then the JSON, padded with spaces to a multiple of 8."""
    table: dict[str, object] = {}
    if metadata:
        table["__metadata__"] = dict(metadata)
    at = 0
    for tensor in tensors:
        table[tensor.name] = {
            "dtype": tensor.dtype,
            "shape": list(tensor.shape),
            "data_offsets": [at, at + tensor.nbytes],
        }
        at += tensor.nbytes
    text = json.dumps(table, separators=(",", ":")).encode()
    text += b" " * (-len(text) % 8)
    return struct.pack("<Q", len(text)) + text


def header_length(opening: bytes) -> int:
    """The JSON's length from a file's first 8 bytes.

    Raises:
        ValueError: fewer than 8 bytes, or a length past safetensors' limit.
    """
    if len(opening) < LENGTH_BYTES:
        raise ValueError(f"a safetensors file opens with {LENGTH_BYTES} bytes, got {len(opening)}")
    (length,) = struct.unpack_from("<Q", opening)
    if length > MAX_HEADER_BYTES:
        raise ValueError(f"header of {length} bytes: more than safetensors' {MAX_HEADER_BYTES}")
    return length


def entries(header: bytes) -> list[Entry]:
    """The tensors a header's JSON names, in file order, checked: known dtypes, offsets
    matching shapes, no gaps or overlaps.

    Raises:
        ValueError: not JSON, or a tensor whose entry does not hold.
    """
    try:
        table = json.loads(header)
    except (UnicodeDecodeError, json.JSONDecodeError) as e:
        raise ValueError(f"header is not JSON: {e}") from None
    found = []
    for name, info in table.items():
        if name == "__metadata__":
            continue
        dtype = info.get("dtype")
        if dtype not in DTYPE_BYTES:
            raise ValueError(f"{name}: dtype {dtype!r} is not one of {', '.join(DTYPE_BYTES)}")
        tensor = Tensor(name, dtype, tuple(int(s) for s in info["shape"]))
        begin, end = (int(x) for x in info["data_offsets"])
        if end - begin != tensor.nbytes:
            raise ValueError(f"{name}: offsets hold {end - begin} bytes, its shape {tensor.nbytes}")
        found.append(Entry(tensor, begin, end))
    found.sort(key=lambda e: e.begin)
    at = 0
    for entry in found:
        if entry.begin != at:
            raise ValueError(f"{entry.tensor.name}: starts at {entry.begin}, not {at}")
        at = entry.end
    return found


def data_start(header_len: int) -> int:
    """Where the tensors' bytes start in the file."""
    return LENGTH_BYTES + header_len
