"""IOzone's automatic mode (reference 002) as hpcio runs: for every file size and record
size, write, rewrite, read, reread, random read and random write of one file per rank."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from hpcio.workloads.patterns.mfmw import Mfmw
from hpcio.workloads.patterns.params import FilePerRankParams

if TYPE_CHECKING:
    from hpcio.spec.model import RunSpec

#: IOzone's tests, in the order it runs them on one file.
TESTS = ("write", "rewrite", "read", "reread", "random read", "random write")
#: test -> (the phase it times, random order)
STEPS = {
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
