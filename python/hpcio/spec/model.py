"""RunSpec: one validated run. The settings every run has (target, ranks, iterations, seed,
phases, verify, keep, direct, fsync, drop caches) are declared here, once; the workload's own
parameters are its frozen dataclass (workloads/), declared the same way (hpcio/options.py)."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any

from hpcio import kinds
from hpcio.errors import SpecError
from hpcio.options import FLAG, NO_FLAG, PHASES, POSITIVE, SIZE, WHOLE, declared, option
from hpcio.spec.target import TARGET_MAPPING, TargetSpec, target_of
from hpcio.workloads import registry, striping
from hpcio.workloads.contract import Phase, Workload
from hpcio.workloads.patterns.params import PatternParams

#: The phase orders --phases accepts: a read phase reads what the write before it wrote.
PHASE_ORDERS = (("write",), ("read",), ("write", "read"))


def workload_named(name: str, family: str | None = None) -> Workload:
    """The registered workload (of `family`, when given) a name means: typed on the command
    line, read from a suite or from a document. The one place spec and the commands look a
    workload up by name.

    Raises:
        SpecError: no such workload: the closest name, or the list of them.
    """
    return registry.get(name, family)


@dataclass(frozen=True, slots=True, kw_only=True)
class RunSpec:
    """Everything that defines a run. `ranks` is the MPI world size."""

    #: The registered workload (workloads/registry.py; documents hold its name) and its own
    #: parameters.
    workload: Workload
    params: Any
    target: TargetSpec
    #: Targets past the first, with several (--target A,B): rank r uses targets[r mod K].
    extra_targets: tuple[TargetSpec, ...] = ()
    ranks: int = option("-n", aliases=("--ranks",), kind=POSITIVE, default=1, key="ranks",
                        help="MPI ranks; starts mpiexec when needed")  # fmt: skip
    iterations: int = option("-i", aliases=("--iterations",), kind=POSITIVE, default=1,
                             key="iterations", help="repetitions")  # fmt: skip
    seed: int = option("--seed", kind=WHOLE, default=1, help="payload and random-order seed")
    #: Timed phases to run; None runs the workload's own (reading workloads lay their data
    #: out untimed first). ("read",) alone reads data an earlier run left with --keep (IOR's -r).
    phases: tuple[str, ...] | None = option(
        "--phases", kind=PHASES, default=None,
        help="write, read or write,read (default: the workload's); read alone reads what an "
        "earlier --keep run wrote",
    )  # fmt: skip
    verify: bool = option("--verify", kind=FLAG, default=False, help="check every byte read")
    keep: bool = option("--keep", kind=FLAG, default=False, measures=False,
                        help="keep files after each iteration")  # fmt: skip
    direct: bool = option("--direct", kind=FLAG, default=False,
                          help="O_DIRECT: bypass the page cache")  # fmt: skip
    fsync: bool = option("--fsync", kind=FLAG, default=False,
                         help="fsync before close, inside the timing")  # fmt: skip
    #: Write back and drop the page cache on every node before each timed read phase
    #: (root only: /proc/sys/vm/drop_caches), so reads come from storage.
    drop_caches: bool = option(
        "--drop-caches", kind=FLAG, default=False,
        help="root: write back and drop the page cache on every node before each read phase "
        "(/proc/sys/vm/drop_caches), so reads come from storage",
    )  # fmt: skip
    #: Record every operation of every rank (runner/tracing.py), each rank to its own file
    #: beside the results (docs/trace.md).
    trace: bool = option(
        "--trace", kind=FLAG, default=False, measures=False,
        help="record every operation (rank, file, op, offset, length, start, end), one file "
        "per rank beside the results: RESULTS.trace/RUN/ (without -o: ./hpcio-trace/RUN/)",
    )  # fmt: skip
    #: Lustre layout of every file the run creates (workloads/striping.py says how it is set:
    #: `lfs setstripe` where lfs exists, else the MPI-IO hints striping_factor/striping_unit).
    stripe_count: int | None = option(
        "--stripe-count", kind=POSITIVE, default=None,
        help="Lustre: stripe each file the run creates over this many OSTs (lfs setstripe "
        "where lfs exists, else MPI-IO's striping_factor hint)",
    )  # fmt: skip
    stripe_size_bytes: int | None = option(
        "--stripe-size", kind=SIZE, unit="bytes", default=None,
        help="Lustre: bytes per stripe (lfs setstripe -S, else MPI-IO's striping_unit hint)",
    )  # fmt: skip
    #: Ranks per node the run asked for (a suite's "5 nodes x 4" layout), kept so that points
    #: differing only in layout stay apart; None: whatever the launcher gave. The layout the
    #: job really had is the document's own `ranks_per_node`.
    ranks_per_node: int | None = option(None, kind=POSITIVE, default=None, key="ranks_per_node",
                                        help="ranks per node")  # fmt: skip
    #: Refuse a POSIX run whose data would not fit in the target's free space; False
    #: (--no-space-check) for file systems that report free space wrongly.
    space_check: bool = option(
        "--no-space-check", kind=NO_FLAG, default=True,
        help="POSIX: run even if the data will not fit in the target's free space (for file "
        "systems that report free space wrongly)",
    )  # fmt: skip

    def validate(self) -> RunSpec:
        """Check every constraint that does not need the target; returns self.

        Raises:
            SpecError: one line naming the option and a value that would work.
        """
        workload = self.workload
        if not isinstance(self.params, workload.params):
            raise SpecError(f"{workload.name} takes {workload.params.__name__} parameters")
        for flag, value in (("-n", self.ranks), ("-i", self.iterations)):
            if value < 1:
                raise SpecError(f"{flag} must be at least 1, got {value}")
        if self.target.is_object_store:
            self._validate_object_store()
        if self.extra_targets:
            self._validate_targets()
        if self.phases is not None and self.phases not in PHASE_ORDERS:
            # read,write would read before writing: the reads find nothing of this run.
            raise SpecError(
                f"--phases takes write, read or write,read; got {','.join(self.phases)}"
            )
        if self.ranks_per_node is not None and not 1 <= self.ranks_per_node <= self.ranks:
            raise SpecError(
                f"ranks per node must be from 1 to the {self.ranks} ranks, "
                f"got {self.ranks_per_node}"
            )
        if not 0 <= self.seed < 1 << 64:
            raise SpecError(f"--seed must be from 0 to 2**64-1, got {self.seed}")
        workload.validate(self)
        striping.validate(self, workload)
        return self

    @property
    def writes(self) -> bool:
        """The run writes its own data (a write phase, or a reading workload's layout); one
        that only reads what an earlier run left (--phases read, or a workload that reads
        another command's data set: unet3d reads datagen's) must never remove it."""
        if self.phases is not None:
            return "write" in self.phases
        workload = self.workload
        if Phase.MIXED in workload.phases(self):
            return True
        return Phase.WRITE in workload.own_phases or workload.prepare(self) is not None

    @property
    def targets(self) -> tuple[TargetSpec, ...]:
        """Every target of the run, in the order given: rank r uses targets[r mod K]."""
        return (self.target, *self.extra_targets)

    def target_index(self, rank: int) -> int:
        """The index in `targets` of the target rank `rank` uses."""
        return target_of(rank, len(self.targets))

    def for_rank(self, rank: int) -> RunSpec:
        """The run as rank `rank` does it: on its own target alone."""
        if not self.extra_targets:
            return self
        own = self.targets[self.target_index(rank)]
        return dataclasses.replace(self, target=own, extra_targets=())

    def each_target(self) -> tuple[RunSpec, ...]:
        """The run once per target, each as on that target alone (for probes, locks, clean-up)."""
        return tuple(dataclasses.replace(self, target=t, extra_targets=()) for t in self.targets)

    def _validate_targets(self) -> None:
        count = len(self.targets)
        if self.ranks < count:
            raise SpecError(
                f"--target: {count} targets need at least {count} ranks (rank r uses target "
                f"r mod {count}); use -n {count} or more"
            )
        if any(w.shared for w in self.workload.objects_written(self)):
            # One upload cannot span buckets or accounts; one shared object per target would be
            # K objects, not the one N-1 file the pattern measures (docs/cloud.md).
            raise SpecError(
                f"{self.workload.name} writes one shared object: with several targets use a "
                "pattern where each rank writes its own objects (mfmw), or one target"
            )
        if self.workload.cache_facts(self).reorder:
            raise SpecError(
                "--reorder reads another rank's data, which may sit on another target: "
                "drop --reorder, or use one target"
            )
        if self.workload.family != "pattern":
            raise SpecError(
                f"{self.workload.name}: several targets are for the patterns (--pattern); "
                "use one target"
            )

    def _validate_object_store(self) -> None:
        if self.direct:
            raise SpecError(
                f"--direct: {self.target.kind} targets have no page cache to bypass; drop --direct"
            )
        if self.drop_caches:
            raise SpecError(
                f"--drop-caches: {self.target.kind} targets have no page cache to drop; "
                "drop --drop-caches"
            )
        if self.target.in_process and self.ranks > 1:
            raise SpecError(f"{self.target.traits.scheme}:// lives inside one process: use -n 1")

    def to_dict(self) -> dict[str, Any]:
        """The spec as a result document records it (target redacted; schema version 2)."""
        record: dict[str, Any] = {
            "workload": self.workload.name,
            "params": params_record(self.params),
        }
        for f in dataclasses.fields(self):
            if f.name not in ("workload", "params", "space_check", "extra_targets"):
                # space_check is a safety check, not part of what is measured.
                record[f.name] = getattr(self, f.name)
        record["target"] = self.target.redacted()
        if self.extra_targets:
            record["targets"] = [t.redacted() for t in self.targets]
            record["target_mapping"] = TARGET_MAPPING
        if self.phases is not None:
            record["phases"] = list(self.phases)
        how = striping.method(self, self.workload)
        if how is not None:
            record["striping"] = how
        return record

    @classmethod
    def build(cls, workload: Workload | str, **settings: Any) -> RunSpec:
        """A run of `workload` from settings by field: the common ones, and the params its
        workload declares (others are left out: a sweep's other workloads take them).
        Unvalidated.

        Raises:
            SpecError: an unknown workload.
        """
        chosen = workload_named(workload) if isinstance(workload, str) else workload
        declared_params = {f.name for f in dataclasses.fields(chosen.params)}
        settings = _with_kind_in_flight(chosen, settings)
        common = {f.name for f in dataclasses.fields(cls)} - {"workload", "params"}
        params = chosen.params(**{k: v for k, v in settings.items() if k in declared_params})
        return cls(
            workload=chosen,
            params=params,
            **{k: v for k, v in settings.items() if k in common},
        )

    @classmethod
    def from_dict(cls, record: dict[str, Any]) -> RunSpec:
        """Rebuild a spec from a result document's `run` record (version 2, or version 1
        upgraded by results/v1.py).

        Raises:
            SpecError: a workload this hpcio does not know.
        """
        from hpcio.results.v1 import upgrade_run

        record = upgrade_run(record)
        common = {f.name for f in dataclasses.fields(cls)} - {
            "workload",
            "params",
            "target",
            "extra_targets",
        }
        values = {k: v for k, v in record.items() if k in common}
        if values.get("phases") is not None:
            values["phases"] = tuple(values["phases"])
        # JSON has lists where the frozen params hold tuples (repeated options such as --hint).
        params = {k: tuple(v) if isinstance(v, list) else v
                  for k, v in record.get("params", {}).items() if k not in common}  # fmt: skip
        target = TargetSpec.from_url(str(record["target"]["url"]))
        # Recorded with several targets: each URL and, where the user named one, its endpoint.
        extra = tuple(TargetSpec.from_url(_shown(t)) for t in record.get("targets", [])[1:])
        if record.get("targets"):
            target = TargetSpec.from_url(_shown(record["targets"][0]))
        return cls.build(
            str(record["workload"]), **params, **values, target=target, extra_targets=extra
        )


def _shown(recorded: dict[str, Any]) -> str:
    endpoint = recorded.get("endpoint")
    return str(recorded["url"]) + (f"?endpoint={endpoint}" if endpoint else "")


def _with_kind_in_flight(workload: Workload, settings: dict[str, Any]) -> dict[str, Any]:
    """`settings` with a pattern's in-flight depth set from its target's kind when not given
    (hpcio/kinds.py: 8 on cloud stores, within a 128 MiB buffer budget; 1 elsewhere), so the
    document records the depth that ran."""
    target = settings.get("target")
    if "in_flight" in settings or target is None or not issubclass(workload.params, PatternParams):
        return settings
    transfer = settings.get("transfer_bytes", _default(PatternParams, "transfer_bytes"))
    return {**settings, "in_flight": kinds.default_in_flight(target.kind, transfer)}


def _default(params: type, name: str) -> Any:
    return next(f.default for f in dataclasses.fields(params) if f.name == name)


def params_record(params: Any) -> dict[str, Any]:
    return {f.name: getattr(params, f.name) for f in dataclasses.fields(params)}


#: The common settings' declarations, for argparse and suites.
COMMON_OPTIONS = declared(RunSpec)
