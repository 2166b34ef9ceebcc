"""What to change when a run does not fill a link: from what a run moved, with how many
requests in flight, and what the link carries, the setting that would (more requests in
flight per rank, or larger parts). Little's law is the whole idea: each request in flight
carries about what one carried in the run, so the link needs cap / that many of them, and a
transfer that is short next to the round trip carries little (docs/cloud.md)."""

from __future__ import annotations

import math
import re

from hpcio.errors import SpecError
from hpcio.units import format_bytes

#: Below this share of the cap, a run is said not to fill the link.
FILLED = 0.9
#: In-flight depth the hint will not go past (patterns' MAX_IN_FLIGHT bounds it anyway).
_MOST_IN_FLIGHT = 64
#: A link's rate as `--link` takes it: bits a second in powers of 1000 (as links are sold),
#: or bytes a second in powers of 1024.
_RATE = re.compile(r"(\d+(?:\.\d+)?)\s*(Kbit|Mbit|Gbit|KiB|MiB|GiB)")
_BYTES_PER_S = {"Kbit": 1e3 / 8, "Mbit": 1e6 / 8, "Gbit": 1e9 / 8,
                "KiB": 1 << 10, "MiB": 1 << 20, "GiB": 1 << 30}  # fmt: skip


def link_mib_s(text: str) -> float:
    """The cap of a link in MiB/s, from a rate ("1Gbit", "400Mbit", "119MiB", each a second)
    or the name of a condition of conditions.toml ("cross-region").

    Raises:
        SpecError: neither a rate nor a condition's name.
    """
    from hpcio import conditions

    if text in conditions.names():
        return conditions.condition(text).link_mib_s
    found = _RATE.fullmatch(text.strip())
    if found is None or float(found[1]) <= 0:
        raise SpecError(
            f"--link '{text}': give the link's rate, e.g. 1Gbit, 400Mbit or 119MiB (a second), "
            f"or a condition: {', '.join(conditions.names())}"
        )
    return float(found[1]) * _BYTES_PER_S[found[2]] / (1 << 20)


def fill_hint(
    *,
    mib_s: float,
    cap_mib_s: float,
    ranks: int,
    in_flight: int,
    transfer_bytes: int,
    shared: bool,
    phase_s: float = 0.0,
    commit_s: float = 0.0,
) -> str | None:
    """None when `mib_s` is at least FILLED of `cap_mib_s`; else one sentence naming the
    setting that would fill it: --in-flight N (per rank), and for a shared object's parts
    also a larger --part-size when the parts are small. A shared object's write phase ends
    with the upload's completion (`commit_s` of the phase's `phase_s`), which the store
    spends assembling the parts: when the parts alone filled the link, the sentence says
    that no client setting shortens it."""
    if cap_mib_s <= 0 or mib_s >= FILLED * cap_mib_s:
        return None
    if shared and 0 < commit_s < phase_s:
        parts_mib_s = mib_s * phase_s / (phase_s - commit_s)
        if parts_mib_s >= FILLED * cap_mib_s:
            return (
                f"{mib_s:.0f} MiB/s is {mib_s / cap_mib_s:.2f} of the link's {cap_mib_s:.0f} "
                f"MiB/s, but the parts alone moved at {parts_mib_s:.0f} MiB/s "
                f"({parts_mib_s / cap_mib_s:.2f}): completing the upload took {commit_s:.2f} s "
                f"of the phase's {phase_s:.2f} s, the store's own work, which more in flight "
                "does not shorten; more data per object (--size-per-rank) spreads it"
            )
    streams = max(1, ranks * in_flight)
    per_stream = mib_s / streams
    if per_stream <= 0:
        return "nothing moved: check the target before tuning"
    needed = math.ceil(FILLED * cap_mib_s / per_stream / ranks)
    depth = min(_MOST_IN_FLIGHT, max(in_flight + 1, needed))
    said = (
        f"{mib_s:.0f} MiB/s is {mib_s / cap_mib_s:.2f} of the link's {cap_mib_s:.0f} MiB/s: "
        f"{ranks} rank(s) x {in_flight} in flight carry {per_stream:.1f} MiB/s a request; "
        f"--in-flight {depth} would"
    )
    if shared and transfer_bytes < 16 << 20:
        said += f", or larger parts than {format_bytes(transfer_bytes)} (--part-size 16MiB)"
    return said
