"""Every workload hpcio runs, registered once by name. A new workload is its module, its params
in a light module, and one entry here; no other layer names a workload.

An entry says what the option path needs without the workload's code: its name, family,
params (a light module: no numpy, no implementation) and whether `hpcio run` and suites take
it. Its implementation (contract.Workload) is imported the first time something asks for it
(`get`): `hpcio run --help` imports no workload, and a run imports the one it runs."""

from __future__ import annotations

import difflib
import importlib
from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from hpcio.errors import SpecError
from hpcio.options import Option, declared

if TYPE_CHECKING:
    from hpcio.workloads.contract import Workload

_W = "hpcio.workloads."


@dataclass(frozen=True, slots=True)
class Entry:
    """A registered workload before its code is imported. name, family, params, runs_alone
    and in_suites are its Workload's own (tests/workloads/test_registry.py checks they agree)."""

    name: str
    family: str
    #: "module:attribute" of its params dataclass.
    params_at: str
    #: "module:attribute" of its implementation: a Workload class, or a sequence of workloads
    #: one of which is called `name` (presets made from a table).
    code_at: str
    runs_alone: bool = True
    in_suites: bool = True

    @property
    def params(self) -> type:
        params: type = _attribute(self.params_at)
        return params

    def takes(self, field: str) -> bool:
        """Whether its params declare `field`."""
        return any(opt.field == field for opt in declared(self.params))


def _entry(name: str, family: str, params: str, code: str, **flags: bool) -> Entry:
    return Entry(name, family, _W + params, _W + code, **flags)


_PRESET = {"runs_alone": False, "in_suites": False}
_TRAINING = {"runs_alone": False}
_PATTERN_PARAMS = "patterns.params:"
_FILE_PER_RANK = _PATTERN_PARAMS + "FilePerRankParams"

_ENTRIES: tuple[Entry, ...] = (
    _entry("sfsw", "pattern", _PATTERN_PARAMS + "CollectParams", "patterns.sfsw:Sfsw"),
    _entry("sfmw", "pattern", _PATTERN_PARAMS + "SharedFileParams", "patterns.sfmw:Sfmw"),
    _entry("mfmw", "pattern", _FILE_PER_RANK, "patterns.mfmw:Mfmw"),
    _entry("sfmr", "pattern", _PATTERN_PARAMS + "SharedReadParams", "patterns.sfmr:Sfmr"),
    _entry("mfmr", "pattern", _FILE_PER_RANK, "patterns.mfmr:Mfmr"),
    *(
        _entry(name, "profile", _FILE_PER_RANK, "profiles.storage:WORKLOADS", **_PRESET)
        for name in ("streaming", "max-latency", "min-latency", "random-throughput", "small-wss")
    ),
    _entry("iozone", "iozone", "profiles.iozone:IozoneParams", "profiles.iozone:Iozone", **_PRESET),
    _entry("python-files", "python", "python_files_params:PythonFilesParams",
           "python_files:PythonFiles"),
    _entry("listing", "metadata", "listing_params:ListingParams", "listing:Listing"),
    _entry("mdtest", "metadata", "mdtest.params:MdtestParams", "mdtest.workload:Mdtest"),
    _entry("collect_and_write", "netcdf", "netcdf_params:SpokespersonParams",
           "netcdf_codes:CollectAndWrite"),
    _entry("allwrite", "netcdf", "netcdf_params:ParallelParams", "netcdf_codes:Allwrite"),
    _entry("read_distribute", "netcdf", "netcdf_params:SpokespersonParams",
           "netcdf_codes:ReadDistribute"),
    _entry("allread", "netcdf", "netcdf_params:ParallelParams", "netcdf_codes:Allread"),
    *(
        _entry(name, "checkpoint", _FILE_PER_RANK, "checkpoint:WORKLOADS", **_PRESET)
        for name in ("llama3-8b", "llama3-70b", "llama3-405b", "llama3-1t")
    ),
    _entry("volume", "library", "seismic.params:VolumeParams", "seismic.volume:Volume"),
    _entry("imaging", "library", "seismic.params:ImagingParams", "seismic.imaging:Imaging"),
    _entry("unet3d", "training", "training.unet3d:TrainParams", "training.unet3d:Unet3d",
           **_TRAINING),
    _entry("unet3d-datagen", "training", "training.unet3d:DatagenParams",
           "training.unet3d:Unet3dDatagen", **_PRESET),
    _entry("cosmoflow", "training", "training.cosmoflow:CosmoflowParams",
           "training.cosmoflow:Cosmoflow", **_TRAINING),
    _entry("cosmoflow-datagen", "training", "training.cosmoflow:CosmoflowDatagenParams",
           "training.cosmoflow:CosmoflowDatagen", **_PRESET),
    _entry("resnet50", "training", "training.resnet50:Resnet50Params",
           "training.resnet50:Resnet50", **_TRAINING),
    _entry("resnet50-datagen", "training", "training.resnet50:Resnet50DatagenParams",
           "training.resnet50:Resnet50Datagen", **_PRESET),
    _entry("bert", "training", "training.bert:BertParams", "training.bert:Bert", **_TRAINING),
    _entry("bert-datagen", "training", "training.bert:BertDatagenParams",
           "training.bert:BertDatagen", **_PRESET),
    _entry("model-load", "inference", "inference.params:ModelLoadParams",
           "inference.model_load:ModelLoad", in_suites=False),
    _entry("replay", "replay", "replay.workload:ReplayParams", "replay.workload:Replay",
           **_TRAINING),
)  # fmt: skip

ENTRIES: dict[str, Entry] = {e.name: e for e in _ENTRIES}
#: The implementations imported so far, by name: one object per workload in a process.
_LOADED: dict[str, Workload] = {}


def _attribute(where: str) -> Any:
    module, _, name = where.partition(":")
    return getattr(importlib.import_module(module), name)


def _load(entry: Entry) -> Workload:
    found = _LOADED.get(entry.name)
    if found is None:
        code = _attribute(entry.code_at)
        if isinstance(code, type):
            found = code()
        else:
            (found,) = (w for w in code if w.name == entry.name)
        _LOADED[entry.name] = found
    return found


def get(name: str, family: str | None = None) -> Workload:
    """The workload called `name` (of `family`, when given), its code imported on first use.

    Raises:
        SpecError: no such workload: the closest name, or the list of them.
    """
    entry = ENTRIES.get(name)
    if entry is not None and (family is None or entry.family == family):
        return _load(entry)
    known = names(family)
    what = family or "workload"
    close = difflib.get_close_matches(name, known, n=1)
    hint = f"; did you mean '{close[0]}'?" if close else f"; choose one of {', '.join(known)}"
    raise SpecError(f"unknown {what} '{name}'{hint}")


def found(name: str) -> Workload | None:
    """The workload called `name`, or None for a name not registered here (a newer hpcio's)."""
    entry = ENTRIES.get(name)
    return None if entry is None else _load(entry)


def names(family: str | None = None) -> list[str]:
    """The registered names, in registration order (of `family`, when given)."""
    return [e.name for e in _ENTRIES if family is None or e.family == family]


def of_family(family: str) -> list[Entry]:
    return [e for e in _ENTRIES if e.family == family]


def runnable() -> list[Entry]:
    """The workloads `hpcio run --workload` runs from their params alone."""
    return [e for e in _ENTRIES if e.runs_alone]


def in_suites() -> list[Entry]:
    """The workloads a suite's `workloads` axis may name."""
    return [e for e in _ENTRIES if e.in_suites]


def check_flags() -> None:
    """One command line takes every runnable workload's options: a flag must mean one field
    (tests/workloads/test_registry.py calls this; it imports every workload's params).

    Raises:
        AssertionError: a flag declared for two fields.
    """
    fields: dict[str, str] = {}
    for entry in _ENTRIES:
        for opt in declared(entry.params):
            for name in opt.names:
                if fields.setdefault(name, opt.field) != opt.field:
                    raise AssertionError(f"{name} declared for {fields[name]} and {opt.field}")


def options(workloads: Iterable[Entry | Workload]) -> list[Option]:
    """Every option the params of `workloads` declare, once each, in declaration order."""
    seen: dict[str, Option] = {}
    for workload in workloads:
        for option in declared(workload.params):
            seen.setdefault(option.field, option)
    return list(seen.values())


def taking(field: str, family: str | None = None) -> list[str]:
    """The workloads (of `family`) whose params declare `field`."""
    return [e.name for e in _ENTRIES if (family is None or e.family == family) and e.takes(field)]


def is_own_key(name: str) -> bool:
    """Whether `name` is a file or object some workload makes: `hpcio clean` deletes these
    and nothing else."""
    return any(_load(e).owns_key(name) for e in _ENTRIES)


def label(workload: str, settings: dict) -> str:
    """A document's name in tables; an unknown workload (a newer hpcio's) by its name."""
    known = found(workload)
    return known.label(settings) if known else workload


def sized_globally(workload: str) -> bool:
    """Whether a workload's documents are plotted against the global data size as well."""
    known = found(workload)
    return known is not None and known.sized_globally


def family_of(workload: str) -> str:
    """Which report tables a workload's documents go to ("" for a workload not known here)."""
    entry = ENTRIES.get(workload)
    return entry.family if entry else ""


def moves_data_set(workload: str) -> bool:
    """Whether each phase of a workload's documents moves its whole data set."""
    known = found(workload)
    return known is None or known.moves_data_set


def shows_bandwidth(workload: str) -> bool:
    """Whether a workload's documents belong in the bandwidth tables and plots."""
    known = found(workload)
    return known is None or known.shows_bandwidth
