"""Collect-and-write's double-buffered pipeline, written once for the engine's sfsw
(runner/choreography.py) and for sfsw through a library (workloads/apis/collect.py): the
collector holds two pieces, never the file, receiving (or sending) one while it writes (or
reads) the other."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Protocol

import numpy as np

#: (writer rank, file offset, length) of each piece, in the order the collector moves them.
Pieces = Sequence[tuple[int, int, int]]


class Waitable(Protocol):
    def wait(self) -> None: ...


def collect_and_write(
    pieces: Pieces,
    collector: int,
    buffers: tuple[np.ndarray, np.ndarray],
    receive: Callable[[np.ndarray, int], Waitable],
    write: Callable[[int, int, int, np.ndarray | None], None],
) -> None:
    """Write every piece in order, receiving the next remote piece into one buffer while the
    other is written.

    Args:
        receive: start receiving into a buffer from a writer rank; returns its request.
        write: write (writer, offset, length, data); data is None for the collector's own
            piece (its bytes are made where they are written).
    """
    remote = [k for k, (writer, _, _) in enumerate(pieces) if writer != collector]
    buffer_of = {k: buffers[n % 2] for n, k in enumerate(remote)}
    upcoming = iter(remote)
    receiving: dict[int, Waitable] = {}

    def receive_next() -> None:
        k = next(upcoming, None)
        if k is not None:
            writer, _, length = pieces[k]
            receiving[k] = receive(buffer_of[k][:length], writer)

    receive_next()
    try:
        for k, (writer, offset, length) in enumerate(pieces):
            if writer == collector:
                write(writer, offset, length, None)
                continue
            receiving.pop(k).wait()
            receive_next()  # the other buffer's write has finished: it can take the next piece
            write(writer, offset, length, buffer_of[k][:length])
    except Exception:
        # A failed write (a full disk) must not leave a writer blocked in its send: take what
        # is on its way and every piece still to come, then fail.
        for request in receiving.values():
            request.wait()
        for k in upcoming:
            writer, _, length = pieces[k]
            receive(buffers[0][:length], writer).wait()
        raise


def read_and_scatter(
    pieces: Pieces,
    collector: int,
    buffers: tuple[np.ndarray, np.ndarray],
    reader_of: dict[int, int],
    read: Callable[[int, int, int, np.ndarray], np.ndarray],
    send: Callable[[np.ndarray, int], Waitable],
    keep: Callable[[np.ndarray, int, int], None],
) -> None:
    """Read every piece in order into one buffer while the other is on its way to its reader.

    Args:
        reader_of: writer rank -> the rank that reads its data back.
        read: read (writer, offset, length) into the buffer; returns the bytes read (the buffer, or
            an array of a library's own, which must live until its send is done).
        send: start sending bytes to a rank; returns its request.
        keep: the collector's own piece (data, writer, offset), checked where it is read.
    """
    sending: list[Waitable | None] = [None, None]
    for k, (writer, offset, length) in enumerate(pieces):
        slot = k % 2
        previous = sending[slot]
        if previous is not None:
            previous.wait()
            sending[slot] = None
        try:
            data = read(writer, offset, length, buffers[slot][:length])
        except Exception:
            _send_zeros(pieces[k:], collector, buffers, reader_of, send, sending)
            raise
        if reader_of[writer] == collector:
            keep(data, writer, offset)
        else:
            sending[slot] = send(data, reader_of[writer])
    for request in sending:
        if request is not None:
            request.wait()


def _send_zeros(
    pieces: Pieces,
    collector: int,
    buffers: tuple[np.ndarray, np.ndarray],
    reader_of: dict[int, int],
    send: Callable[[np.ndarray, int], Waitable],
    sending: list[Waitable | None],
) -> None:
    """After a failed read, give every reader still waiting its pieces as zeros (which a
    verifying reader finds wrong), so that no rank is left blocked in a receive."""
    for request in sending:
        if request is not None:
            request.wait()
    zeros = buffers[0]
    zeros[:] = 0
    for writer, _, length in pieces:
        if reader_of[writer] != collector:
            send(zeros[:length], reader_of[writer]).wait()
