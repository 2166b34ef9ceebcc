"""How the training family's results are judged in its tables: MLPerf Storage's sizing rules
for a valid run. Ground floor only, so reports read them without the native engine."""

from __future__ import annotations

import math

from hpcio.units import format_bytes

#: MLPerf Storage's sizing rules for a valid run.
MIN_STEPS_PER_EPOCH = 500
MIN_RAM_MULTIPLE = 5


def sizing(samples: int, mean_sample_bytes: float, steps: int, ram_bytes: int) -> list[str]:
    """MLPerf Storage's sizing rules a run breaks, each in one line (none: it follows them).

    Args:
        ram_bytes: the host RAM of every node of the job together (0: unknown).
    """
    broken = []
    data = samples * mean_sample_bytes
    if ram_bytes and data < MIN_RAM_MULTIPLE * ram_bytes:
        need = math.ceil(MIN_RAM_MULTIPLE * ram_bytes / mean_sample_bytes)
        broken.append(
            f"data set {format_bytes(int(data))} is less than {MIN_RAM_MULTIPLE} x the hosts' "
            f"{format_bytes(ram_bytes)} of RAM (--samples {need} or more)"
        )
    if steps < MIN_STEPS_PER_EPOCH:
        broken.append(f"{steps} step(s) per epoch, fewer than {MIN_STEPS_PER_EPOCH}")
    return broken
