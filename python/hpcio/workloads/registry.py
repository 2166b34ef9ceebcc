"""Every workload hpcio runs, registered once by name. A new workload is its module and one
line here; no other layer names a workload."""

from __future__ import annotations

import difflib
from collections.abc import Iterable

from hpcio.errors import SpecError
from hpcio.options import Option, declared
from hpcio.workloads import checkpoint, listing, netcdf_codes, patterns, python_files
from hpcio.workloads.contract import Workload
from hpcio.workloads.inference import model_load
from hpcio.workloads.mdtest.workload import Mdtest
from hpcio.workloads.profiles import iozone, storage
from hpcio.workloads.replay.workload import Replay
from hpcio.workloads.seismic import imaging, volume
from hpcio.workloads.training import bert, cosmoflow, resnet50, unet3d

_REGISTERED: tuple[Workload, ...] = (
    patterns.Sfsw(), patterns.Sfmw(), patterns.Mfmw(), patterns.Sfmr(), patterns.Mfmr(),
    *storage.WORKLOADS,
    iozone.Iozone(),
    python_files.PythonFiles(),
    listing.Listing(),
    Mdtest(),
    *netcdf_codes.WORKLOADS,
    *checkpoint.WORKLOADS,
    volume.Volume(),
    imaging.Imaging(),
    unet3d.Unet3d(), unet3d.Unet3dDatagen(),
    cosmoflow.Cosmoflow(), cosmoflow.CosmoflowDatagen(),
    resnet50.Resnet50(), resnet50.Resnet50Datagen(),
    bert.Bert(), bert.BertDatagen(),
    model_load.ModelLoad(),
    Replay(),
)  # fmt: skip

WORKLOADS: dict[str, Workload] = {w.name: w for w in _REGISTERED}


def _check_flags() -> None:
    """One command line takes every runnable workload's options: a flag must mean one field."""
    fields: dict[str, str] = {}
    for workload in _REGISTERED:
        for opt in declared(workload.params):
            for name in opt.names:
                if fields.setdefault(name, opt.field) != opt.field:
                    raise AssertionError(f"{name} declared for {fields[name]} and {opt.field}")


_check_flags()


def get(name: str, family: str | None = None) -> Workload:
    """The workload called `name` (of `family`, when given).

    Raises:
        SpecError: no such workload: the closest name, or the list of them.
    """
    found = WORKLOADS.get(name)
    if found is not None and (family is None or found.family == family):
        return found
    known = names(family)
    what = family or "workload"
    close = difflib.get_close_matches(name, known, n=1)
    hint = f"; did you mean '{close[0]}'?" if close else f"; choose one of {', '.join(known)}"
    raise SpecError(f"unknown {what} '{name}'{hint}")


def names(family: str | None = None) -> list[str]:
    """The registered names, in registration order (of `family`, when given)."""
    return [w.name for w in _REGISTERED if family is None or w.family == family]


def of_family(family: str) -> list[Workload]:
    return [w for w in _REGISTERED if w.family == family]


def runnable() -> list[Workload]:
    """The workloads `hpcio run --workload` runs from their params alone."""
    return [w for w in _REGISTERED if w.runs_alone]


def in_suites() -> list[Workload]:
    """The workloads a suite's `workloads` axis may name."""
    return [w for w in _REGISTERED if w.in_suites]


def options(workloads: Iterable[Workload]) -> list[Option]:
    """Every option the params of `workloads` declare, once each, in declaration order."""
    seen: dict[str, Option] = {}
    for workload in workloads:
        for option in declared(workload.params):
            seen.setdefault(option.field, option)
    return list(seen.values())


def taking(field: str, family: str | None = None) -> list[str]:
    """The workloads (of `family`) whose params declare `field`."""
    return [
        w.name
        for w in _REGISTERED
        if (family is None or w.family == family)
        and any(o.field == field for o in declared(w.params))
    ]


def is_own_key(name: str) -> bool:
    """Whether `name` is a file or object some workload makes: `hpcio clean` deletes these
    and nothing else."""
    return any(w.owns_key(name) for w in _REGISTERED)


def label(workload: str, settings: dict) -> str:
    """A document's name in tables; an unknown workload (a newer hpcio's) by its name."""
    found = WORKLOADS.get(workload)
    return found.label(settings) if found else workload


def sized_globally(workload: str) -> bool:
    """Whether a workload's documents are plotted against the global data size as well."""
    found = WORKLOADS.get(workload)
    return found is not None and found.sized_globally


def family_of(workload: str) -> str:
    """Which report tables a workload's documents go to ("" for a workload not known here)."""
    found = WORKLOADS.get(workload)
    return found.family if found else ""


def moves_data_set(workload: str) -> bool:
    """Whether each phase of a workload's documents moves its whole data set."""
    found = WORKLOADS.get(workload)
    return found is None or found.moves_data_set


def shows_bandwidth(workload: str) -> bool:
    """Whether a workload's documents belong in the bandwidth tables and plots."""
    found = WORKLOADS.get(workload)
    return found is None or found.shows_bandwidth
