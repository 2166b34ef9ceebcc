"""IOzone's automatic mode (reference 002) as hpcio runs: for every file size and record
size, write, rewrite, read, reread, random read and random write of one file per rank."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from hpcio.errors import SpecError
from hpcio.spec.model import RunSpec
from hpcio.spec.target import TargetSpec
from hpcio.units import format_bytes
from hpcio.workloads.patterns.mfmw import Mfmw
from hpcio.workloads.patterns.params import FilePerRankParams

#: IOzone's tests, in the order it runs them on one file.
TESTS = ("write", "rewrite", "read", "reread", "random read", "random write")
#: test -> (the phase it times, random order)
_STEPS = {
    "write": ("write", False),
    "rewrite": ("write", False),
    "read": ("read", False),
    "reread": ("read", False),
    "random read": ("read", True),
    "random write": ("write", True),
}
#: IOzone -a's defaults.
DEFAULT_FILE_SIZES = "64KiB..512MiB"
DEFAULT_RECORD_SIZES = "4KiB..16MiB"


@dataclass(frozen=True, slots=True, kw_only=True)
class IozoneParams(FilePerRankParams):
    #: The IOzone test the run times (one of TESTS).
    test: str = "write"


class Iozone(Mfmw):
    """One IOzone test at one (file size, record size): a file per rank, one timed phase."""

    name = "iozone"
    family = "iozone"
    runs_alone = False
    in_suites = False
    params = IozoneParams
    summary = "IOzone's automatic mode: write, rewrite, read, reread, random read and write"
    lower = {"buffers": "--record-sizes", "data": "--file-sizes", "disk": "--file-sizes or -n"}  # noqa: RUF012

    def label(self, settings: dict[str, Any]) -> str:
        return f"iozone {settings.get('test', '')}".strip()

    def describe(self, run: RunSpec) -> str:
        return f"{run.params.test}, {super().describe(run)}"


def iozone_runs(
    target: TargetSpec,
    *,
    ranks: int,
    file_sizes: Sequence[int],
    record_sizes: Sequence[int],
    direct: bool = False,
    verify: bool = False,
    seed: int = 1,
    iterations: int = 1,
    keep: bool = False,
    in_flight: int = 1,
) -> list[RunSpec]:
    """Six runs per (file size, record size) whose record fits in the file, in IOzone's order.

    Each run times one phase of one file per rank: the first writes it and keeps it, the
    following ones rewrite or read it, the last (random write) removes it unless `keep`.

    Args:
        target: where the files go.
        ranks: MPI ranks, each with its own file (IOzone's throughput mode).
        file_sizes: bytes per file.
        record_sizes: bytes per I/O call.
        direct: O_DIRECT (POSIX).
        verify: check every byte the reads return.
        seed: payload and random-order seed.
        iterations: repetitions of each test.
        keep: keep the files after the last test.
        in_flight: requests in flight per rank (IOzone: 1).

    Raises:
        SpecError: no record size fits in any file size, or a size a run refuses.
    """
    runs = []
    for file_size in file_sizes:
        for record in record_sizes:
            if record > file_size or file_size % record:
                continue
            for test in TESTS:
                phase, random = _STEPS[test]
                params = IozoneParams(
                    size_per_rank_bytes=file_size,
                    transfer_bytes=record,
                    in_flight=in_flight,
                    random_offsets=random,
                    test=test,
                )
                runs.append(
                    RunSpec(
                        workload=Iozone.name,
                        params=params,
                        target=target,
                        ranks=ranks,
                        direct=direct,
                        verify=verify and phase == "read",
                        keep=keep or test != TESTS[-1],
                        seed=seed,
                        iterations=iterations,
                        phases=(phase,),
                    ).validate()
                )
    if not runs:
        raise SpecError(
            f"no record size ({format_bytes(min(record_sizes))} and up) fits in a file size "
            f"(at most {format_bytes(max(file_sizes))})"
        )
    return runs
