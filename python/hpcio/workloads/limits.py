"""Object store limits, checked before any byte moves: each error names the limit that a run
would break and a setting that would work."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

from hpcio.errors import SpecError
from hpcio.units import format_bytes
from hpcio.workloads.contract import Written


def _at_least(size: int) -> str:
    """The smallest power-of-two size >= `size`, as a --part-size value."""
    return format_bytes(1 << max(0, math.ceil(math.log2(max(size, 1))))).replace(" ", "")


def check_limits(kind: str, written: Sequence[Written], limits: Mapping[str, int]) -> None:
    """Refuse a run whose parts or objects a store would reject.

    Args:
        kind: the target's kind ("s3", ...).
        written: the objects the run writes (Workload.objects_written).
        limits: the target's min_part_bytes, max_part_bytes, max_parts, max_object_bytes
            (0 meaning no limit), as the engine reports them.

    Raises:
        SpecError: one line naming the limit and a --part-size or size that would work.
    """
    for written_object in written:
        what, size, part = written_object.what, written_object.bytes, written_object.part_bytes
        parts = math.ceil(size / part)
        max_object = limits["max_object_bytes"]
        if max_object and size > max_object:
            raise SpecError(
                f"{kind}: objects are at most {format_bytes(max_object)}; {what} would be "
                f"{format_bytes(size)}: use a smaller --size-per-rank or a file per rank"
            )
        if parts == 1 and not written_object.shared:
            max_put = limits["max_part_bytes"]
            if max_put and size > max_put:
                raise SpecError(
                    f"{kind}: a single PUT is at most {format_bytes(max_put)}; use --part-size "
                    f"{_at_least(size // 2)} or less so {what} goes up in parts"
                )
            continue
        min_part, max_part = limits["min_part_bytes"], limits["max_part_bytes"]
        # The minimum binds every part but the last: an object of one part may be any size.
        if min_part and part < min_part and parts > 1:
            raise SpecError(
                f"{kind}: multipart parts must be at least {format_bytes(min_part)} (except the "
                f"last); --part-size is {format_bytes(part)}: use --part-size "
                f"{_at_least(min_part)} or more"
            )
        if max_part and part > max_part:
            raise SpecError(
                f"{kind}: parts are at most {format_bytes(max_part)}; --part-size is "
                f"{format_bytes(part)}: use --part-size {format_bytes(max_part).replace(' ', '')}"
                " or less"
            )
        max_parts = limits["max_parts"]
        if max_parts and parts > max_parts:
            raise SpecError(
                f"{kind}: at most {max_parts:,} parts per object; {what} ({format_bytes(size)}) "
                f"in parts of {format_bytes(part)} is {parts:,} parts: use --part-size "
                f"{_at_least(math.ceil(size / max_parts))} or more"
            )
