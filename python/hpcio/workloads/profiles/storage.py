"""The five storage profiles of the fio study (reference 003), as registered workloads
(spec/presets.py builds their runs).

A profile is a preset over the N-N patterns: every rank writes its own files (mfmw), then reads
them back, in ascending or seeded random order, with a fixed transfer and number of requests in
flight. As fio's jobs each have a file of their own, a rank has a file per request in flight
(32 files of size / 32 for the 32-thread profiles), visited round robin, so requests in flight
fall in different files. small-wss only reads (mfmr): its working set is laid out untimed
first, as the patterns that only read do.

On an object store every transfer is an object of its own: a 4 KiB write is a PUT of a 4 KiB
object and a read a GET of it (a ranged GET of the whole object), and random order visits the
objects in a seeded random order. Parts of one object would not do: S3 and GCS parts must be
at least 5 MiB, and an upload cannot be rewritten for a time-based run.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

from hpcio.errors import SpecError
from hpcio.units import format_bytes
from hpcio.workloads.contract import Phase
from hpcio.workloads.patterns.mfmw import Mfmw, untimed_layout
from hpcio.workloads.patterns.mix import mixed

if TYPE_CHECKING:
    from hpcio.spec.model import RunSpec
    from hpcio.spec.target import TargetSpec

KiB, MiB, GiB = 1 << 10, 1 << 20, 1 << 30

#: Data set of a 4 KiB profile on an object store when --size is not given: 16,384 objects,
#: as 1 GiB would be 262,144 PUTs (hours at one in flight on a cloud store's latency).
OBJECT_STORE_SMALL_SIZE = 64 * MiB


@dataclass(frozen=True, slots=True)
class Profile:
    """One fio-style job: how it moves data, and how much by default."""

    name: str
    order: Literal["sequential", "random"]
    transfer_bytes: int
    #: Requests in flight inside one rank (fio's threads); with several ranks it adds up.
    in_flight: int
    #: Bypass the client's page cache (O_DIRECT on POSIX; object stores have none).
    bypass_cache: bool
    #: Timed phases; a read-only profile lays its data out untimed first.
    phases: tuple[str, ...]
    #: Data set of the whole run when --size is not given; None: twice the node's RAM.
    default_size_bytes: int | None
    what: str

    def describe(self, rwmix_read_pct: int | None = None) -> str:
        """One line: how the profile moves data (with a mix: in one mixed phase)."""
        phases = " then ".join(self.phases)
        if rwmix_read_pct is not None:
            phases = f"reads and writes mixed ({rwmix_read_pct}% reads)"
        bypass = ", client cache bypassed" if self.bypass_cache else ""
        return (
            f"{self.order} {format_bytes(self.transfer_bytes)} {phases}, "
            f"{self.in_flight} in flight per rank{bypass}"
        )


PROFILES: dict[str, Profile] = {
    p.name: p
    for p in (
        Profile(
            "streaming", "sequential", MiB, 32, False, ("write", "read"), None,
            "maximum bandwidth: big sequential transfers, many at once, caches defeated by size",
        ),
        Profile(
            "max-latency", "random", 4 * KiB, 1, False, ("write", "read"), GiB,
            "the latency to expect at worst: small random transfers, one at a time",
        ),
        Profile(
            "min-latency", "sequential", 4 * KiB, 1, True, ("write", "read"), GiB,
            "the latency floor (mostly the network): small sequential transfers, cache bypassed",
        ),
        Profile(
            "random-throughput", "random", 4 * KiB, 32, False, ("write", "read"), GiB,
            "the most small random operations per second: 4 KiB transfers, many at once",
        ),
        Profile(
            "small-wss", "sequential", MiB, 32, True, ("read",), GiB,
            "network against back end: sequential reads of a working set the storage caches",
        ),
    )
}  # fmt: skip


def get(name: str) -> Profile:
    """The profile called `name`.

    Raises:
        SpecError: no such profile; the message lists them.
    """
    try:
        return PROFILES[name]
    except KeyError:
        raise SpecError(
            f"unknown profile '{name}'; choose one of {', '.join(PROFILES)}, all"
        ) from None


def object_store_note(target: TargetSpec) -> str | None:
    """What a transfer means on an object store, for the output; None on POSIX."""
    if not target.is_object_store:
        return None
    return (
        f"note: on {target.kind} each transfer is an object of its own: a write is one PUT of "
        "a whole object (4 KiB for the latency profiles) and a read a ranged GET of all of it; "
        "random order visits the objects in random order; there is no client cache to bypass"
    )


class ProfileWorkload(Mfmw):
    """A storage profile as a registered workload: a preset over the N-N patterns."""

    family = "profile"
    runs_alone = False
    in_suites = False
    lower = {"buffers": "--in-flight", "data": "--size", "disk": "--size"}  # noqa: RUF012

    def __init__(self, profile: Profile) -> None:
        self.profile = profile
        self.name = profile.name
        self.summary = profile.what
        self.own_phases = tuple(Phase(p) for p in profile.phases)

    def prepare(self, run: RunSpec) -> RunSpec | None:
        if Phase.WRITE in self.own_phases or run.phases is not None or mixed(run):
            return None
        return untimed_layout(run)


WORKLOADS = tuple(ProfileWorkload(p) for p in PROFILES.values())
