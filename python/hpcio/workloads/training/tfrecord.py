"""A TFRecord file of one record, the simplest container TensorFlow's TFRecordDataset reads:
the record's length (uint64, little-endian), its masked CRC-32C, the bytes, their masked
CRC-32C. DLIO's generator puts a tf.train.Example (an image feature and its size) in the
record; hpcio puts the sample's bytes themselves, so a file is 16 bytes longer than its
sample, where DLIO's Example adds a few dozen."""

from __future__ import annotations

import struct

import google_crc32c
import numpy as np

#: Bytes a record adds around its data: length, its CRC, the data's CRC.
OVERHEAD_BYTES = 8 + 4 + 4
_MASK_DELTA = 0xA282EAD8


def masked_crc(data: bytes | memoryview) -> int:
    """TFRecord's masked CRC-32C (tensorflow/core/lib/hash/crc32c.h, Mask)."""
    crc = google_crc32c.value(bytes(data))
    return (((crc >> 15) | (crc << 17)) + _MASK_DELTA) & 0xFFFFFFFF


def into(out: np.ndarray, payload: np.ndarray) -> int:
    """Write one record holding `payload` (uint8) at the start of `out`; its length."""
    size = len(payload)
    length = struct.pack("<Q", size)
    view = out[: size + OVERHEAD_BYTES]
    view[:8] = np.frombuffer(length, np.uint8)
    view[8:12] = np.frombuffer(struct.pack("<I", masked_crc(length)), np.uint8)
    view[12 : 12 + size] = payload
    view[12 + size :] = np.frombuffer(struct.pack("<I", masked_crc(payload.data)), np.uint8)
    return size + OVERHEAD_BYTES


def records(data: bytes) -> list[bytes]:
    """The records of a TFRecord file's bytes, their CRCs checked.

    Raises:
        ValueError: a truncated record or a CRC that does not match.
    """
    found, at = [], 0
    while at < len(data):
        if at + 12 > len(data):
            raise ValueError(f"truncated record header at byte {at}")
        (size,) = struct.unpack_from("<Q", data, at)
        (length_crc,) = struct.unpack_from("<I", data, at + 8)
        if masked_crc(data[at : at + 8]) != length_crc:
            raise ValueError(f"length CRC mismatch at byte {at}")
        body = data[at + 12 : at + 12 + size]
        if len(body) != size or at + 16 + size > len(data):
            raise ValueError(f"truncated record at byte {at}")
        (body_crc,) = struct.unpack_from("<I", data, at + 12 + size)
        if masked_crc(body) != body_crc:
            raise ValueError(f"data CRC mismatch at byte {at}")
        found.append(body)
        at += 16 + size
    return found
