"""How each workload's documents are shown: its family (which tables it goes to), its name in
tables, and the facts about its figures that reports need. Reports read documents only and
must run without the native engine, which importing the workloads themselves loads; so these
facts are declared here, from the ground floor alone, and tests/report/test_shown.py
holds them equal to what the registered workloads say."""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

Settings = dict[str, Any]


@dataclass(frozen=True, slots=True)
class Shown:
    """One workload, as reports show it."""

    family: str
    label: Callable[[str, Settings], str]
    #: Its documents are plotted against the global data size as well.
    sized_globally: bool = False
    #: Each phase moves its whole data set (a replay moves what its log did).
    moves_data_set: bool = True
    #: Its phases' figures are bandwidths (False: rates of calls, mdtest's; its family's
    #: table shows them, the bandwidth tables and plots leave it out).
    shows_bandwidth: bool = True


def _name(name: str, settings: Settings) -> str:
    return name


def _with_api(name: str, settings: Settings) -> str:
    """The pattern, with the API when it is not the engine's own: 'sfmw (hdf5)'."""
    api = settings.get("api", "posix")
    return name if api == "posix" else f"{name} ({api})"


def _iozone(name: str, settings: Settings) -> str:
    return f"iozone {settings.get('test', '')}".strip()


def _listing(name: str, settings: Settings) -> str:
    return f"{name} ({settings.get('lister', 'every')})"


def _mdtest(name: str, settings: Settings) -> str:
    return f"{name}{' -u' if settings.get('dir_per_rank') else ''}"


def _checkpoint(name: str, settings: Settings) -> str:
    phases = list(settings.get("phases") or ())
    step = "save" if phases == ["write"] else "load" if phases == ["read"] else ""
    return f"{name} {step}".strip()


def _library(name: str, settings: Settings) -> str:
    """'volume zarr(blosc)', 'volume segy', as the study's table names them."""
    library = str(settings.get("library", ""))
    if library == "zarr":
        library += f"({settings.get('compression', 'none')})"
    if settings.get("collective"):
        library += " collective"
    return f"{name} {library}".strip()


def _training(name: str, settings: Settings) -> str:
    return f"{name} {settings.get('accelerator', '')}".strip()


def _replay(name: str, settings: Settings) -> str:
    log = settings.get("log")
    return f"replay {os.path.basename(log)}" if log else name


_PATTERN = Shown("pattern", _with_api)
_PROFILE = Shown("profile", _with_api)
_NETCDF = Shown("netcdf", _name, sized_globally=True)
_CHECKPOINT = Shown("checkpoint", _checkpoint)
_LIBRARY = Shown("library", _library)

WORKLOADS: dict[str, Shown] = {
    **dict.fromkeys(("sfsw", "sfmw", "mfmw", "sfmr", "mfmr"), _PATTERN),
    **dict.fromkeys(
        ("streaming", "max-latency", "min-latency", "random-throughput", "small-wss"), _PROFILE
    ),
    "iozone": Shown("iozone", _iozone),
    "python-files": Shown("python", _name),
    "listing": Shown("metadata", _listing),
    "mdtest": Shown("metadata", _mdtest, shows_bandwidth=False),
    **dict.fromkeys(("collect_and_write", "allwrite", "read_distribute", "allread"), _NETCDF),
    **dict.fromkeys(("llama3-8b", "llama3-70b", "llama3-405b", "llama3-1t"), _CHECKPOINT),
    "volume": _LIBRARY,
    "imaging": _LIBRARY,
    **dict.fromkeys(("unet3d", "cosmoflow", "resnet50", "bert"), Shown("training", _training)),
    **dict.fromkeys(
        ("unet3d-datagen", "cosmoflow-datagen", "resnet50-datagen", "bert-datagen"),
        Shown("training", _name),
    ),
    "model-load": Shown("inference", _name),
    "replay": Shown("replay", _replay, moves_data_set=False),
}

#: IOzone's tests, in the order its table's columns show them.
IOZONE_TESTS = ("write", "rewrite", "read", "reread", "random read", "random write")


def label(workload: str, settings: Settings) -> str:
    """A document's name in tables; an unknown workload (a newer hpcio's) by its name."""
    found = WORKLOADS.get(workload)
    return found.label(workload, settings) if found else workload


def family_of(workload: str) -> str:
    """Which report tables a workload's documents go to ("" for a workload not known here)."""
    found = WORKLOADS.get(workload)
    return found.family if found else ""


def sized_globally(workload: str) -> bool:
    """Whether a workload's documents are plotted against the global data size as well."""
    found = WORKLOADS.get(workload)
    return found is not None and found.sized_globally


def moves_data_set(workload: str) -> bool:
    """Whether each phase of a workload's documents moves its whole data set."""
    found = WORKLOADS.get(workload)
    return found is None or found.moves_data_set


def shows_bandwidth(workload: str) -> bool:
    """Whether a workload's documents belong in the bandwidth tables and plots."""
    found = WORKLOADS.get(workload)
    return found is None or found.shows_bandwidth
